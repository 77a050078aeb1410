/**
 * Runs a built tRPC procedure's middleware chain — the base procedure's middleware, the input and
 * output validators, the resolver — exactly as tRPC's own procedure caller does (same options, same
 * `next` semantics, same error wrapping), for the REST bridge.
 *
 * Why not call the procedure itself: tRPC's caller copies the call options with a transpiled object
 * spread (`getOwnPropertyDescriptors` + `defineProperties`) twice per layer; on /api/pricing that was
 * ~40% of the request. Native spreads do the same copy several times faster. The middleware list is
 * tRPC's (`_def.middlewares`), so /api and /trpc can never run different rules; the tests call every
 * route through both transports. Pinned to @trpc/server 11.x's calling convention.
 */
import { getTRPCErrorFromUnknown, TRPCError } from '@trpc/server';
import type { RequestContext } from '../trpc/context.ts';

/** What a middleware of a built procedure receives (tRPC 11's MiddlewareFunction options). */
interface CallOptions {
  ctx: RequestContext;
  path: string;
  type: 'query' | 'mutation';
  input?: unknown;
  getRawInput: () => Promise<unknown>;
  signal: AbortSignal | undefined;
  batchIndex: number;
}

interface NextOptions {
  ctx?: Record<string, unknown>;
  input?: unknown;
  getRawInput?: () => Promise<unknown>;
}

type MiddlewareResult = { ok: true; data: unknown } | { ok: false; error: TRPCError };
type Middleware = (opts: CallOptions & { meta: unknown; next(nextOpts?: NextOptions): Promise<MiddlewareResult> }) => Promise<MiddlewareResult>;

export interface ProcedureDefinition {
  _def: { middlewares: Middleware[]; meta?: unknown };
}

export async function runProcedure(procedure: ProcedureDefinition, call: CallOptions): Promise<unknown> {
  const { middlewares, meta } = procedure._def;

  async function step(index: number, opts: CallOptions): Promise<MiddlewareResult> {
    try {
      return await middlewares[index]!({
        ...opts,
        meta,
        next(nextOpts) {
          return step(index + 1, {
            ...opts,
            ctx: nextOpts?.ctx ? ({ ...opts.ctx, ...nextOpts.ctx } as RequestContext) : opts.ctx,
            input: nextOpts && 'input' in nextOpts ? nextOpts.input : opts.input,
            getRawInput: nextOpts?.getRawInput ?? opts.getRawInput,
          });
        },
      });
    } catch (cause) {
      return { ok: false, error: getTRPCErrorFromUnknown(cause) };
    }
  }

  const result = await step(0, call);
  if (!result) throw new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'No result from middlewares' });
  if (!result.ok) throw result.error;
  return result.data;
}
