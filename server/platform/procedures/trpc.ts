import { initTRPC, type TRPCError } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import type { PublicError } from '../../errors.ts';
import { publicErrorOf, trpcCodeOf } from './trpc-errors.ts';
import { recordRouter } from './catalog.ts';
import type { RequestContext } from './context.ts';
import type { RouteMeta } from './meta.ts';

/**
 * The request id of errors tRPC raised before it created the context (an unknown content type,
 * mixed procedure types…): the errorFormatter sees no ctx then. tRPC calls the endpoint's onError
 * with the very error object just before formatting it, and the endpoint records the id here.
 */
const requestIdOfError = new WeakMap<TRPCError, string>();

export function recordRequestId(error: TRPCError, requestId: string): void {
  requestIdOfError.set(error, requestId);
}

/** tRPC's error `data` for one of our public errors (the errorFormatter's shape, also for errors the endpoint raises). */
export function trpcErrorShape(api: PublicError, trpcCode: TRPCError['code'], path?: string) {
  return {
    message: api.message,
    code: TRPC_ERROR_CODES_BY_KEY[trpcCode],
    data: { code: api.code, httpStatus: api.status, path, api },
  };
}

export const t = initTRPC
  .context<RequestContext>()
  .meta<RouteMeta>()
  .create({
    // Subscriptions send a ping while quiet, like the REST streams' heartbeat.
    sse: { ping: { enabled: true, intervalMs: 15_000 } },
    // The same four public fields as REST, inside tRPC's error `data` (docs/decisions.md §2). No stack traces.
    errorFormatter({ error, ctx, path }) {
      const api = publicErrorOf(error, ctx?.requestId ?? requestIdOfError.get(error) ?? 'unknown');
      return trpcErrorShape(api, trpcCodeOf(error), path);
    },
  });

/**
 * tRPC's router(), also recording the router's own record of members so the project can list its
 * procedures without reading tRPC's internals (procedures/catalog.ts).
 */
export const router: typeof t.router = ((record: Record<string, unknown>) => {
  const built = t.router(record as never);
  recordRouter(built, record);
  return built;
}) as typeof t.router;
export const createCallerFactory = t.createCallerFactory;
