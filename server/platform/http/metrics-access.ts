/**
 * Who may read /metrics. On the service's own port: an operator, i.e. a holder of one of the
 * server-configured dashboard keys (DASHBOARD_KEYS), sent as `Authorization: Bearer <key>` (what
 * Prometheus sends with `authorization.credentials`) or in `x-api-key`; never in the URL (a URL ends up
 * in proxy logs). A wrong key is a failed authentication like any other: 401 in our error shape,
 * counted against the client address's failed-authentication budget, and once that is used up the
 * address gets 429 before its key is compared. A missing key is 401 and not counted (a scraper
 * without credentials is misconfigured, not guessing).
 *
 * On METRICS_PORT (a second listener, off by default): /metrics without a key, since whoever can
 * reach that address is trusted; it must only be reachable from a private network (docs/metrics.md).
 */
import { ApiError, errorResponse } from '../../errors.ts';
import { requestTarget } from './request-target.ts';
import { newId } from '../../lib/ids.ts';
import type { Services } from '../services.ts';
import type { RequestContext } from '../procedures/context.ts';
import { isDashboardKey } from '../procedures/access.ts';
import { authFailed, keyCheckOf, refuseBlockedClient } from '../procedures/key-gate.ts';
import { scrape } from '../metrics/index.ts';

/** The key a request presents: the Bearer token of Authorization, else x-api-key. */
function presentedKey(headers: Headers): string | null {
  const authorization = headers.get('authorization');
  const bearer = authorization && /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
  return bearer || headers.get('x-api-key');
}


/** GET /metrics on the service's port: the metrics for an operator key, else 401 (or 429 once an address keeps failing). */
export async function metricsForOperator(ctx: RequestContext): Promise<Response> {
  const { services } = ctx;
  if (!services.metrics.enabled) throw new ApiError('NOT_FOUND', 'No route GET /metrics (METRICS_ENABLED=false)');
  const key = presentedKey(ctx.headers);
  if (key && isDashboardKey(services, key)) return scrape(services.metrics);
  const refusal = new ApiError('UNAUTHORIZED', '/metrics needs an operator key (one of DASHBOARD_KEYS) in Authorization: Bearer <key> or x-api-key');
  if (!key) throw refusal;
  await refuseBlockedClient(ctx);
  throw await authFailed(ctx, keyCheckOf(ctx), refusal);
}

/** The whole of the METRICS_PORT listener: GET /metrics, without a key; anything else 404 in our error shape. */
export function metricsListener(services: Services) {
  return async (request: Request): Promise<Response> => {
    const path = requestTarget(request.url)?.path;
    if (path === '/metrics' && (request.method === 'GET' || request.method === 'HEAD') && services.metrics.enabled) return scrape(services.metrics);
    const requestId = newId('req');
    return errorResponse({ code: 'NOT_FOUND', message: 'This listener serves only GET /metrics', status: 404, requestId }, { 'x-request-id': requestId });
  };
}
