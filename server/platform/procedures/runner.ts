/**
 * A procedure definition compiled into a call: gate → (per-snapshot answer) → input schema → handler →
 * output schema → the gate's settle. Both /api and /trpc's queries and mutations run procedures this
 * way (subscriptions and tRPC's own caller run the tRPC procedure built from the same definition, whose
 * one middleware calls the same gate: builder.ts).
 *
 * Nothing here awaits what is not a promise: a route whose gate, handler and schemas answer
 * synchronously (/api/pricing, a cached valuation) is answered without a single promise. An answer
 * marked reusable (lib/reusable-json.ts: never mutated) is output-validated once.
 *
 * The output step also applies the API's rule for numbers (lib/answer-numbers.ts: at most 6 decimals),
 * so what /api, /trpc and the stream routes' JSON serialize is already rounded — once per answer, and
 * once per snapshot for market data (its answers are cached after this step). tRPC's own pipeline
 * (its adapter, createCaller) applies the same rule in the gate middleware (builder.ts).
 */
import type { z } from 'zod';
import { inputError } from '../../errors.ts';
import { roundAnswerNumbers } from '../../lib/answer-numbers.ts';
import { deepFreeze, isReusable, markReusable } from '../../lib/reusable-json.ts';
import { isThenable, whenReady, type MaybePromise } from '../../lib/when-ready.ts';
import type { RequestContext } from './context.ts';
import type { Admission, ProcedureDefinition } from './definition.ts';
import { answerPerSnapshot } from './market-answers.ts';
import { withoutUserMember } from './user-member.ts';

export interface Call {
  ctx: RequestContext;
  /** Dotted procedure path. */
  path: string;
  rawInput: unknown;
  signal?: AbortSignal;
  /** Filled with what this call was charged once it settled (per-call costs of a tRPC batch). */
  cost?: { micros: number };
}

/** The procedure as a function of a call: its answer (or a promise of it), or a thrown error. */
export type CompiledProcedure = (call: Call) => MaybePromise<unknown>;

type Parse = (value: unknown) => unknown;

const badInput = (cause: unknown): never => {
  throw inputError(cause);
};
/** Our answer failed its own schema: a 500 (the caller's input was fine), its detail in the log. */
const badOutput = (cause: unknown): never => {
  throw new Error('Output validation failed', { cause });
};

/** A schema's parse: synchronous while the schema is, async once it proves not to be (as tRPC does). */
function parserOf(schema: z.ZodType): Parse {
  let isAsync = false;
  return (value) => {
    if (!isAsync) {
      try {
        return schema.parse(value);
      } catch (cause) {
        if (Array.isArray((cause as { issues?: unknown })?.issues)) throw cause;
        isAsync = true; // zod refuses a synchronous parse of a schema with async refinements
      }
    }
    return schema.parseAsync(value);
  };
}

/** A parse's value (now, or as a promise for an async schema), its failure passed to `fail`. */
function validated(parse: Parse, value: unknown, fail: (cause: unknown) => never): unknown {
  let parsed: unknown;
  try {
    parsed = parse(value);
  } catch (cause) {
    return fail(cause);
  }
  return isThenable(parsed) ? Promise.resolve(parsed).catch(fail) : parsed;
}

/** Runs `answer`, then the admission's settle with its outcome; the answer (or its error) passes through. */
function settled(admission: Admission, call: Call, answer: () => MaybePromise<unknown>): MaybePromise<unknown> {
  if (call.cost) call.cost.micros = admission.costMicros ?? 0;
  const settle = admission.settle;
  if (!settle) return answer();
  const failed = async (error: unknown) => {
    await settle(false);
    if (call.cost) call.cost.micros = 0;
    throw error;
  };
  let result: MaybePromise<unknown>;
  try {
    result = answer();
  } catch (error) {
    return failed(error);
  }
  return Promise.resolve(result).then(async (data) => {
    await settle(true);
    return data;
  }, failed);
}

export function compileDefinition(definition: ProcedureDefinition): CompiledProcedure {
  const { rule, meta, handler, kind } = definition;
  const parseInput: Parse | undefined = definition.input && parserOf(definition.input);
  const parseOutput: Parse | undefined = definition.output && parserOf(definition.output);
  /** Reusable answers → their validated (reusable) copy. */
  const validatedOnce = new WeakMap<object, object>();

  const checkOutput = (answer: unknown): unknown => {
    if (!parseOutput) return roundAnswerNumbers(answer);
    const known = isReusable(answer) ? validatedOnce.get(answer) : undefined;
    if (known !== undefined) return known;
    return whenReady(validated(parseOutput, answer, badOutput), (valid) => {
      const data = roundAnswerNumbers(valid);
      if (isReusable(answer) && typeof data === 'object' && data !== null) {
        const reusable = markReusable(deepFreeze(data));
        validatedOnce.set(answer, reusable);
        return reusable;
      }
      return data;
    });
  };

  return (call) => {
    const { path, rawInput, signal } = call;
    // Parsed at most once per call: by the gate before the reservation, or here if the gate did not.
    let parsed: { value: MaybePromise<unknown> } | undefined;
    const parse = parseInput && (() => (parsed ??= { value: validated(parseInput, rawInput, badInput) }).value);
    return whenReady(rule.gate({ ctx: call.ctx, path, meta, rawInput, parseInput: parse }), (admission) => {
      const ctx = admission.ctx ? ({ ...call.ctx, ...admission.ctx } as RequestContext) : call.ctx;
      const answer = () => {
        const parsed = parse?.();
        const input = rule.namesUser ? whenReady(parsed, withoutUserMember) : parsed;
        return whenReady(input, (value) => whenReady(handler({ ctx, input: value, signal, path, type: kind }), checkOutput));
      };
      return settled(admission, call, rule.answersPerSnapshot ? () => answerPerSnapshot(ctx, path, rawInput, answer) : answer);
    });
  };
}
