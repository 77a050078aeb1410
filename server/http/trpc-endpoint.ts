/**
 * /trpc: tRPC's own fetch adapter over the same router and the same per-request context as /api.
 * Errors carry our four public fields in `error.data.api` (see errorFormatter in trpc/init.ts).
 */
import type { AnyTRPCRouter } from '@trpc/server';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { toPublicError, type PublicError } from '../errors.ts';
import type { RequestContext } from '../trpc/context.ts';

export const TRPC_PREFIX = '/trpc';

export function createTrpcEndpoint(router: AnyTRPCRouter) {
  return async function handle(request: Request, ctx: RequestContext) {
    const failures: Array<{ body: PublicError; cause: unknown }> = [];
    const response = await fetchRequestHandler({
      endpoint: TRPC_PREFIX,
      req: request,
      router,
      createContext: () => ctx,
      onError: ({ error }) => failures.push({ body: toPublicError(error, ctx.requestId), cause: error }),
    });
    return { response, failures };
  };
}
