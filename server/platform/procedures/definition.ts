/**
 * The project's own description of a procedure, independent of any transport: who may call it (its
 * access rule), its input and output schemas, its handler and its documentation meta. Both transports
 * are built from it with public APIs only (docs/contributing.md, "Where a request goes"):
 *  - the tRPC procedure (builder.ts: `t.procedure.meta().use(gate).input().output().query()`), which
 *    gives the typed client its types and serves subscriptions and tRPC's own caller;
 *  - the compiled call (runner.ts), which answers /api and /trpc queries and mutations.
 * A tRPC upgrade can change neither the rules nor REST behaviour: the rules live in the gates
 * (access.ts), called the same way by both.
 */
import type { z } from 'zod';
import type { MaybePromise } from '../../lib/when-ready.ts';
import type { RequestContext } from './context.ts';
import type { RouteMeta } from './meta.ts';

export type ProcedureKind = 'query' | 'mutation' | 'subscription';

/** What a gate sees of a call: the raw input is already read (the transports hold it). */
export interface GateCall {
  ctx: RequestContext;
  /** The dotted procedure path, e.g. `trading.buy`. */
  path: string;
  meta: RouteMeta;
  rawInput: unknown;
  /**
   * The raw input checked against the procedure's input schema (memoized per call). A gate calls it
   * at the input step, after authentication and before any rate limit or reservation, so a bad input
   * is 400 before 429 or 402 and costs nothing (docs/decisions.md §4). Absent: no input schema.
   */
  parseInput?: () => MaybePromise<unknown>;
}

/** A gate's verdict on an admitted call (a refused call throws). */
export interface Admission {
  /** Members the handler's context gains: principal, user, accountId, session. */
  ctx?: Record<string, unknown>;
  /** What the call was charged, micro-USD (0 or absent when unbilled). */
  costMicros?: number;
  /** Called once the handler settled; a failed call has its reservation reversed here. */
  settle?: (ok: boolean) => MaybePromise<void>;
}

/** An access rule's check, in the order of docs/decisions.md §4: authenticate → input → rate limit → reserve. */
export type Gate = (call: GateCall) => MaybePromise<Admission>;

export interface AccessRule {
  gate: Gate;
  /** The meta every procedure of the rule starts from (access, billing…). */
  meta: RouteMeta;
  /**
   * The answer is a pure function of the market snapshot and the raw input (public market data): it
   * is computed, validated and serialized once per snapshot and input (market-answers.ts).
   */
  answersPerSnapshot?: boolean;
  /**
   * The procedures act for a trading user, named by x-user-id or by the input's `userId` member, so
   * each call of a tRPC batch can name its own (builder.ts adds the member to every input; the
   * handler never sees it).
   */
  namesUser?: boolean;
}

export interface HandlerOptions {
  ctx: any;
  input: any;
  signal: AbortSignal | undefined;
  path: string;
  type: ProcedureKind;
}

export interface ProcedureDefinition {
  kind: ProcedureKind;
  rule: AccessRule;
  meta: RouteMeta;
  input?: z.ZodType;
  output?: z.ZodType;
  handler: (opts: HandlerOptions) => unknown;
}

const definitions = new WeakMap<object, ProcedureDefinition>();

export function registerDefinition(procedure: object, definition: ProcedureDefinition): void {
  definitions.set(procedure, definition);
}

/** The definition a procedure was built from (every procedure of routers/ has one). */
export function definitionOf(procedure: object): ProcedureDefinition | undefined {
  return definitions.get(procedure);
}
