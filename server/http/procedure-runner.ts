/**
 * Runs a built tRPC procedure's middleware chain — the base procedure's middleware, the input and
 * output validators, the resolver — with tRPC's own semantics (same options, same `next` rules, same
 * errors), for the REST bridge. Compiled once per procedure when the route table is built.
 *
 * Why not call the procedure itself: tRPC's caller copies the call options with a transpiled object
 * spread (`getOwnPropertyDescriptors` + `defineProperties`) twice per layer, its input and output
 * validator middlewares spread again, and every layer is an async function. On /api/pricing those
 * copies were ~40% of the request, and the chain of ~18 awaits another ~10%. Here the copies are
 * fixed-shape object literals, the validator layers tRPC marks (`_type` 'input' / 'output') run the
 * same parse functions (`getParseFn` of `_def.inputs` / `_def.output`) without their copies, the
 * resolver (`_def.resolver`) is called without tRPC's async wrapper, and a layer that answers
 * synchronously is not awaited: a chain of synchronous layers runs without a single promise. An
 * answer marked reusable (lib/reusable-json.ts: never mutated) is output-validated once.
 * Every other middleware is tRPC's own function, so /api and /trpc can never run different rules;
 * the tests call every route through both transports. Pinned to @trpc/server 11.x.
 */
import { getTRPCErrorFromUnknown, TRPCError } from '@trpc/server';
import { getParseFn, isObject } from '@trpc/server/unstable-core-do-not-import';
import { deepFreeze, isReusable, markReusable } from '../lib/reusable-json.ts';
import { isThenable, whenReady } from '../lib/when-ready.ts';
import type { RequestContext } from '../trpc/context.ts';
import { RAW_INPUT_UNKNOWN, rawInputOf } from '../trpc/raw-input.ts';

/**
 * What a middleware of a built procedure receives (tRPC 11's MiddlewareFunction options), plus
 * `rawInput`: the bridge holds the raw input already, so middlewares may read it without awaiting
 * `getRawInput()` (trpc/raw-input.ts). RAW_INPUT_UNKNOWN after a middleware replaced getRawInput.
 */
interface CallOptions {
  ctx: RequestContext;
  path: string;
  type: 'query' | 'mutation';
  input: unknown;
  rawInput: unknown;
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
/** A layer's answer: synchronous when every layer below it answered synchronously. */
type Answer = MiddlewareResult | Promise<MiddlewareResult>;
type Middleware = ((opts: CallOptions & { meta: unknown; next(nextOpts?: NextOptions): Answer }) => Answer) & { _type?: string };
type Resolver = (opts: Omit<CallOptions, 'rawInput'> & { meta: unknown }) => unknown;

export interface ProcedureDefinition {
  _def: { middlewares: Middleware[]; meta?: unknown; inputs: unknown[]; output?: unknown; resolver?: Resolver };
}

type Parse = (value: unknown) => unknown;
type Layer =
  | { kind: 'input'; parse: Parse }
  | { kind: 'output'; parse: Parse; validatedOnce: WeakMap<object, object> }
  | { kind: 'resolver'; resolve: Resolver }
  | { kind: 'middleware'; fn: Middleware };

/** A call of a compiled procedure: its context, tRPC path and type, and the raw input. */
export interface Call {
  ctx: RequestContext;
  path: string;
  type: 'query' | 'mutation';
  rawInput: unknown;
}

/** The procedure as a function of a call: the resolver's data (or a promise of it), or a thrown TRPCError. */
export type CompiledProcedure = (call: Call) => unknown;

const failure = (cause: unknown): MiddlewareResult => ({ ok: false, error: getTRPCErrorFromUnknown(cause) });
const badInput = (cause: unknown): never => {
  throw new TRPCError({ code: 'BAD_REQUEST', cause });
};
const badOutput = (cause: unknown): never => {
  throw new TRPCError({ message: 'Output validation failed', code: 'INTERNAL_SERVER_ERROR', cause });
};

/** A parse function's value (now, or as a promise for an async schema), its failure passed to `fail`. */
function validated(parse: Parse, value: unknown, fail: (cause: unknown) => never): unknown {
  let parsed: unknown;
  try {
    parsed = parse(value);
  } catch (cause) {
    return fail(cause);
  }
  return isThenable(parsed) ? Promise.resolve(parsed).catch(fail) : parsed;
}

/** A copy of the call options with a new context, input and raw input (one fixed shape: no spreads). */
function withOptions(opts: CallOptions, ctx: RequestContext, input: unknown, rawInput: unknown, getRawInput: () => Promise<unknown>): CallOptions {
  return { ctx, path: opts.path, type: opts.type, input, rawInput, getRawInput, signal: opts.signal, batchIndex: opts.batchIndex };
}

/** The layers tRPC 11 builds: its resolver wrapper is always the last middleware. */
function layersOf(procedure: ProcedureDefinition): Layer[] {
  const { middlewares, inputs, output, resolver } = procedure._def;
  const last = middlewares.at(-1);
  if (!resolver || last?.name !== 'resolveMiddleware') throw new Error('procedure-runner: no resolver middleware last (tRPC version?)');
  let inputIndex = 0;
  const layers = middlewares.map((fn): Layer => {
    if (fn === last) return { kind: 'resolver', resolve: resolver };
    if (fn._type === 'input') return { kind: 'input', parse: getParseFn(inputs[inputIndex++] as never) as Parse };
    if (fn._type === 'output') return { kind: 'output', parse: getParseFn(output as never) as Parse, validatedOnce: new WeakMap() };
    return { kind: 'middleware', fn };
  });
  if (inputIndex !== inputs.length) throw new Error('procedure-runner: input validators and _def.inputs disagree (tRPC version?)');
  return layers;
}

export function compileProcedure(procedure: ProcedureDefinition): CompiledProcedure {
  const meta = procedure._def.meta;
  const layers = layersOf(procedure);

  function runLayer(layer: Layer, index: number, opts: CallOptions): Answer {
    switch (layer.kind) {
      case 'input': {
        const raw = rawInputOf(opts);
        return whenReady(raw, (rawInput) =>
          whenReady(validated(layer.parse, rawInput, badInput), (value) => {
            const input = isObject(opts.input) && isObject(value) ? { ...opts.input, ...value } : value;
            return step(index + 1, withOptions(opts, opts.ctx, input, rawInput, opts.getRawInput));
          }),
        );
      }
      case 'output':
        return whenReady(step(index + 1, opts), (result): Answer => {
          if (!result.ok) return result;
          const answer = result.data;
          // An answer that is never mutated (reusable) is validated once; its validated copy is reusable too.
          const known = isReusable(answer) ? layer.validatedOnce.get(answer) : undefined;
          if (known !== undefined) return { ok: true, data: known };
          return whenReady(validated(layer.parse, answer, badOutput), (data): MiddlewareResult => {
            if (isReusable(answer) && typeof data === 'object' && data !== null) layer.validatedOnce.set(answer, markReusable(deepFreeze(data)));
            return { ok: true, data };
          });
        });
      case 'resolver': {
        const { ctx, path, type, input, getRawInput, signal, batchIndex } = opts;
        return whenReady(layer.resolve({ ctx, path, type, input, getRawInput, signal, batchIndex, meta }), (data): MiddlewareResult => ({ ok: true, data }));
      }
      case 'middleware':
        return layer.fn({
          ctx: opts.ctx,
          path: opts.path,
          type: opts.type,
          input: opts.input,
          rawInput: opts.rawInput,
          getRawInput: opts.getRawInput,
          signal: opts.signal,
          batchIndex: opts.batchIndex,
          meta,
          next(nextOpts) {
            if (!nextOpts) return step(index + 1, opts);
            const ctx = nextOpts.ctx ? ({ ...opts.ctx, ...nextOpts.ctx } as RequestContext) : opts.ctx;
            const input = 'input' in nextOpts ? nextOpts.input : opts.input;
            // A new raw input is only known through the new function.
            const rawInput = nextOpts.getRawInput ? RAW_INPUT_UNKNOWN : opts.rawInput;
            return step(index + 1, withOptions(opts, ctx, input, rawInput, nextOpts.getRawInput ?? opts.getRawInput));
          },
        });
    }
  }

  /** One layer, its throw or rejection turned into a failed result (as tRPC's callRecursive does). */
  function step(index: number, opts: CallOptions): Answer {
    let answer: Answer;
    try {
      answer = runLayer(layers[index]!, index, opts);
    } catch (cause) {
      return failure(cause);
    }
    return isThenable(answer) ? Promise.resolve(answer).then(undefined, failure) : answer;
  }

  const settle = (result: MiddlewareResult | undefined) => {
    if (!result) throw new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'No result from middlewares' });
    if (!result.ok) throw result.error;
    return result.data;
  };

  return ({ ctx, path, type, rawInput }) => {
    const opts: CallOptions = {
      ctx,
      path,
      type,
      input: undefined,
      rawInput,
      getRawInput: () => Promise.resolve(rawInput),
      signal: undefined,
      batchIndex: 0,
    };
    return whenReady(step(0, opts), settle);
  };
}
