/**
 * REST on /api: resolves a request to a tRPC procedure through the route table and calls it with the
 * same context and middleware as /trpc. Built once at start; per request it only matches, reads the
 * input and calls. Paths and parameters come from the procedures' openapi meta, which is also what
 * trpc-to-openapi documents in /openapi.json.
 *
 * Inputs: GET/DELETE take query parameters (a repeated name becomes a list, which scalar
 * parameters refuse); POST/PUT/PATCH take a JSON object body (an empty body counts as `{}`).
 * Path parameters are URL-decoded and win over body or query members of the same name.
 */
import type { AnyTRPCRouter } from '@trpc/server';
import { ApiError, toPublicError, type PublicError } from '../errors.ts';
import { jsonText } from '../lib/reusable-json.ts';
import type { RequestContext } from '../trpc/context.ts';
import { RouteTable } from './route-table.ts';

export const REST_PREFIX = '/api';
/** Query parameters consumed by the transport, never passed to a procedure. */
const TRANSPORT_PARAMS = new Set(['apiKey']);

export interface RestOutcome {
  status: number;
  /** JSON text. */
  body: string;
  /** Set when the request failed; the caller logs 5xx causes. */
  error?: { body: PublicError; cause: unknown };
}

export function createRestBridge(router: AnyTRPCRouter) {
  const table = new RouteTable(router);

  async function handle(request: Request, ctx: RequestContext, maxBodyBytes: number): Promise<RestOutcome> {
    const path = ctx.path.slice(REST_PREFIX.length) || '/';
    try {
      const match = table.match(request.method, path);
      if (!match) {
        const allowed = table.allowedMethods(path);
        if (allowed.length === 0) throw new ApiError('NOT_FOUND', `No route ${request.method} ${ctx.path}`);
        ctx.resHeaders['Allow'] = allowed.join(', ');
        throw new ApiError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${ctx.path}; use ${allowed.join(' or ')}`);
      }
      const input = { ...(await readInput(request, ctx, maxBodyBytes)), ...decodeParams(match.params) };
      // The same call tRPC's own caller makes, minus its per-request proxy, path lookup and slow copies.
      const data = await match.route.run({
        ctx,
        path: match.route.procedurePath,
        type: match.route.type,
        getRawInput: async () => input,
        signal: undefined,
        batchIndex: 0,
      });
      return { status: match.route.meta.successStatus ?? 200, body: jsonText(data) };
    } catch (cause) {
      const body = toPublicError(cause, ctx.requestId);
      return { status: body.status, body: JSON.stringify(body), error: { body, cause } };
    }
  }

  return { handle, table };
}

function decodeParams(params: Record<string, string>): Record<string, string> {
  const decoded: Record<string, string> = {};
  for (const [name, raw] of Object.entries(params)) {
    try {
      decoded[name] = decodeURIComponent(raw);
    } catch {
      throw new ApiError('BAD_REQUEST', `${name}: malformed percent-encoding in the path`);
    }
  }
  return decoded;
}

async function readInput(request: Request, ctx: RequestContext, maxBodyBytes: number): Promise<Record<string, unknown>> {
  if (request.method === 'GET' || request.method === 'DELETE') {
    // No prototype: a parameter named `constructor` or `__proto__` is just an unknown parameter.
    const query: Record<string, string | string[]> = Object.create(null);
    for (const [name, value] of ctx.query) {
      if (TRANSPORT_PARAMS.has(name)) continue;
      const seen = query[name];
      query[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
    }
    return query;
  }
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > maxBodyBytes) throw new ApiError('PAYLOAD_TOO_LARGE', `Request body exceeds ${maxBodyBytes} bytes`);
  const text = await request.text();
  if (text.length > maxBodyBytes) throw new ApiError('PAYLOAD_TOO_LARGE', `Request body exceeds ${maxBodyBytes} bytes`);
  if (text.trim() === '') return {};
  const type = request.headers.get('content-type') ?? '';
  if (!/^application\/json\b/i.test(type)) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError('BAD_REQUEST', 'Malformed JSON body');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError('BAD_REQUEST', 'The JSON body must be an object');
  }
  return body as Record<string, unknown>;
}
