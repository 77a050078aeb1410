/**
 * CORS (docs/decisions.md §3): only origins listed in CORS_ORIGINS (or the service's own origin — its request URL's or PUBLIC_URL — for the /docs
 * page) may call from a browser. A foreign Origin, on a request or a preflight, gets 403
 * FORBIDDEN_ORIGIN. Requests without Origin (servers, curl) are not affected.
 */
export const EXPOSED_HEADERS = [
  'X-Request-Id',
  'X-Request-Cost-USD',
  'X-Call-Costs-USD',
  'Retry-After',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Idempotent-Replayed',
  // The company export's file name: a browser app saving the file reads it.
  'Content-Disposition',
].join(', ');

const ALLOWED_HEADERS = ['content-type', 'x-api-key', 'x-user-id', 'x-account-id', 'x-request-id', 'idempotency-key'].join(', ');
const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';

export type CorsVerdict =
  | { kind: 'no-origin' }
  | { kind: 'forbidden'; origin: string }
  | { kind: 'preflight'; headers: Record<string, string> }
  | { kind: 'allowed'; headers: Record<string, string> };

const NO_ORIGIN: CorsVerdict = { kind: 'no-origin' };

export function createCorsPolicy(allowedOrigins: string[]) {
  const allowed = new Set(allowedOrigins);

  return function check(request: Request): CorsVerdict {
    const origin = request.headers.get('origin');
    if (origin === null) return NO_ORIGIN;
    if (!allowed.has(origin) && origin !== new URL(request.url).origin) return { kind: 'forbidden', origin };
    const headers: Record<string, string> = { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' };
    if (request.method === 'OPTIONS' && request.headers.has('access-control-request-method')) {
      headers['Access-Control-Allow-Methods'] = ALLOWED_METHODS;
      headers['Access-Control-Allow-Headers'] = ALLOWED_HEADERS;
      headers['Access-Control-Max-Age'] = '600';
      return { kind: 'preflight', headers };
    }
    headers['Access-Control-Expose-Headers'] = EXPOSED_HEADERS;
    return { kind: 'allowed', headers };
  };
}
