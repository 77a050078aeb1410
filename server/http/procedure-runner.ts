/**
 * Runs a built tRPC procedure's middleware chain — the base procedure's middleware, the input and
 * output validators, the resolver — with tRPC's own semantics (same options, same `next` rules, same
 * errors), for the REST bridge. Compiled once per procedure when the route table is built.
 *
 * Why not call the procedure itself: tRPC's caller copies the call options with a transpiled object
 * spread (`getOwnPropertyDescriptors` + `defineProperties`) twice per layer, and its input and output
 * validator middlewares spread again; on /api/pricing those copies were ~40% of the request. Here the
 * copies are fixed-shape object literals, and the validator layers tRPC marks (`_type` 'input' / 'output') run the
 * same parse functions (`getParseFn` of the same schemas, `_def.inputs` / `_def.output`) without
 * their copies. Every other middleware is tRPC's own function, so /api and /trpc can never run
 * different rules; the tests call every route through both transports. Pinned to @trpc/server 11.x.
 */
import { getTRPCErrorFromUnknown, TRPCError } from '@trpc/server';
import { getParseFn, isObject } from '@trpc/server/unstable-core-do-not-import';
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
type Middleware = ((opts: CallOptions & { meta: unknown; next(nextOpts?: NextOptions): Promise<MiddlewareResult> }) => Promise<MiddlewareResult>) & {
  _type?: string;
};

export interface ProcedureDefinition {
  _def: { middlewares: Middleware[]; meta?: unknown; inputs: unknown[]; output?: unknown };
}

type Parse = (value: unknown) => unknown;
type Layer = { kind: 'input'; parse: Parse } | { kind: 'output'; parse: Parse } | { kind: 'middleware'; fn: Middleware };

/** The procedure as a function of its call options, resolving to the resolver's data or throwing a TRPCError. */
export type CompiledProcedure = (call: CallOptions) => Promise<unknown>;

/** A copy of the call options with a new context, input and raw input (one fixed shape: no spreads). */
function withOptions(opts: CallOptions, ctx: RequestContext, input: unknown, getRawInput: () => Promise<unknown>): CallOptions {
  return { ctx, path: opts.path, type: opts.type, input, getRawInput, signal: opts.signal, batchIndex: opts.batchIndex };
}

export function compileProcedure(procedure: ProcedureDefinition): CompiledProcedure {
  const { middlewares, meta, inputs, output } = procedure._def;
  let inputIndex = 0;
  const layers: Layer[] = middlewares.map((fn): Layer => {
    if (fn._type === 'input') return { kind: 'input', parse: getParseFn(inputs[inputIndex++] as never) as Parse };
    if (fn._type === 'output') return { kind: 'output', parse: getParseFn(output as never) as Parse };
    return { kind: 'middleware', fn };
  });
  if (inputIndex !== inputs.length) throw new Error('procedure-runner: input validators and _def.inputs disagree (tRPC version?)');

  async function runLayer(layer: Layer, index: number, opts: CallOptions): Promise<MiddlewareResult> {
    switch (layer.kind) {
      case 'input': {
        let parsed: unknown;
        try {
          parsed = await layer.parse(await opts.getRawInput());
        } catch (cause) {
          throw new TRPCError({ code: 'BAD_REQUEST', cause });
        }
        const input = isObject(opts.input) && isObject(parsed) ? { ...opts.input, ...parsed } : parsed;
        return step(index + 1, withOptions(opts, opts.ctx, input, opts.getRawInput));
      }
      case 'output': {
        const result = await step(index + 1, opts);
        if (!result.ok) return result;
        try {
          return { ok: true, data: await layer.parse(result.data) };
        } catch (cause) {
          throw new TRPCError({ message: 'Output validation failed', code: 'INTERNAL_SERVER_ERROR', cause });
        }
      }
      case 'middleware':
        return layer.fn({
          ctx: opts.ctx,
          path: opts.path,
          type: opts.type,
          input: opts.input,
          getRawInput: opts.getRawInput,
          signal: opts.signal,
          batchIndex: opts.batchIndex,
          meta,
          next(nextOpts) {
            if (!nextOpts) return step(index + 1, opts);
            return step(
              index + 1,
              withOptions(
                opts,
                nextOpts.ctx ? ({ ...opts.ctx, ...nextOpts.ctx } as RequestContext) : opts.ctx,
                'input' in nextOpts ? nextOpts.input : opts.input,
                nextOpts.getRawInput ?? opts.getRawInput,
              ),
            );
          },
        });
    }
  }

  async function step(index: number, opts: CallOptions): Promise<MiddlewareResult> {
    try {
      return await runLayer(layers[index]!, index, opts);
    } catch (cause) {
      return { ok: false, error: getTRPCErrorFromUnknown(cause) };
    }
  }

  return async (call) => {
    const result = await step(0, call);
    if (!result) throw new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'No result from middlewares' });
    if (!result.ok) throw result.error;
    return result.data;
  };
}
