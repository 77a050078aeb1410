/**
 * /trpc queries and mutations in tRPC's documented HTTP format (https://trpc.io/docs/rpc), answered by
 * the procedures' compiled definitions (procedures/runner.ts) — the same calls /api makes — instead of
 * tRPC's fetch adapter, which cost typed clients 3–5× the time of the same call on /api.
 *
 * Handled here: GET (queries) and POST (mutations), single or batched (`?batch=1`, paths joined by
 * commas, inputs `{"0": …, "1": …}`), answered `{"result":{"data":…}}` or `{"error":{message, code,
 * data}}` (an array for a batch; its status is the calls' common status, else 207), exactly as
 * tRPC's adapter answers them (tests/platform/transport-parity.test.ts compares the two byte for byte).
 * Everything else — subscriptions, streamed batches (`trpc-accept: application/jsonl`), HEAD, an
 * unknown procedure, a method that does not fit the procedure, a path tRPC would refuse — is left to
 * tRPC's adapter (trpc-endpoint.ts), so its answers to those stay tRPC's own.
 *
 * Each call's cost is in `X-Call-Costs-USD` (comma-separated, batch order) beside the request's total
 * in `X-Request-Cost-USD`: a typed client can tell what each call of a batch cost.
 */
import type { TRPCError } from '@trpc/server';
import type { PublicError } from '../../errors.ts';
import { publicErrorOf, toTrpcError } from '../procedures/trpc-errors.ts';
import { formatUsd } from '../../lib/money.ts';
import { jsonText } from '../../lib/reusable-json.ts';
import { isThenable, type MaybePromise } from '../../lib/when-ready.ts';
import { catalogOf } from '../procedures/catalog.ts';
import { compileDefinition, type CompiledProcedure } from '../procedures/runner.ts';
import type { RequestContext } from '../procedures/context.ts';
import { trpcErrorShape } from '../procedures/trpc.ts';
import { readBodyText } from './body-reader.ts';
import { deferredInput, type DeferredReason } from '../procedures/deferred-input.ts';
import { readJsonInput } from './json-input.ts';
import { assertBatchSize } from './input-checks.ts';
import { TRPC_PREFIX } from './trpc-endpoint.ts';


export interface RpcOutcome {
  status: number;
  /** JSON text. */
  body: string;
  /** Every failed call, for the error log. */
  failures: Array<{ body: PublicError; cause: unknown }>;
}

interface Plan {
  calls: Array<{ path: string; run: CompiledProcedure }>;
  isBatch: boolean;
}

type Settled = { ok: true; data: unknown } | { ok: false; error: TRPCError };

const ACCEPTS: Record<string, 'query' | 'mutation'> = { GET: 'query', POST: 'mutation' };

export function createTrpcRpc(router: object) {
  const procedures = new Map<string, { kind: string; run: CompiledProcedure }>();
  for (const { path, definition } of catalogOf(router)) procedures.set(path, { kind: definition.kind, run: compileDefinition(definition) });

  /** The calls of a request this path answers, or undefined to leave it to tRPC's adapter. */
  function plan(request: Request, ctx: RequestContext): Plan | undefined {
    const kind = ACCEPTS[request.method];
    if (!kind) return undefined;
    const headers = request.headers;
    if (headers.has('trpc-accept') || headers.get('accept')?.includes('application/jsonl')) return undefined;
    let path: string;
    try {
      path = decodeURIComponent(ctx.path.slice(TRPC_PREFIX.length + 1));
    } catch {
      return undefined;
    }
    const isBatch = ctx.query().get('batch') === '1';
    const paths = isBatch ? path.split(',') : [path];
    assertBatchSize(paths.length);
    const calls: Plan['calls'] = [];
    for (const name of paths) {
      const procedure = procedures.get(name);
      if (!procedure || procedure.kind !== kind) return undefined;
      calls.push({ path: name, run: procedure.run });
    }
    return { calls, isBatch };
  }

  /**
   * The raw input of each call (GET: the `input` parameter, no content type to check; POST: the body
   * and its Content-Type); an input that cannot be read is each call's deferred error, answered after
   * authentication (procedures/deferred-input.ts).
   */
  function inputsOf(text: string | null, plan: Plan, contentType?: string | null): unknown[] {
    const { calls, isBatch } = plan;
    if (text === null) return calls.map(() => undefined);
    const notAnObject: DeferredReason | undefined = isBatch ? 'batch-not-an-object' : undefined;
    const read = readJsonInput(text, { contentType, notAnObject });
    // A blank `input` parameter is malformed (tRPC would fail to parse it); a blank body is no input.
    if ('blank' in read) return calls.map(() => (contentType === undefined ? deferredInput('malformed-json') : undefined));
    if ('problem' in read) return calls.map(() => deferredInput(read.problem));
    if (!isBatch) return [read.value];
    const batch = read.value as Record<string, unknown>;
    return calls.map((_, index) => (Object.hasOwn(batch, index) ? batch[index] : undefined));
  }

  function answer(plan: Plan, inputs: unknown[], ctx: RequestContext, signal: AbortSignal): MaybePromise<RpcOutcome> {
    const costs = plan.calls.map(() => ({ micros: 0 }));
    const results = plan.calls.map((call, index): MaybePromise<Settled> => {
      try {
        const data = call.run({ ctx, path: call.path, rawInput: inputs[index], signal, cost: costs[index] });
        if (!isThenable(data)) return { ok: true, data };
        return Promise.resolve(data).then(
          (value): Settled => ({ ok: true, data: value }),
          (cause): Settled => ({ ok: false, error: toTrpcError(cause) }),
        );
      } catch (cause) {
        return { ok: false, error: toTrpcError(cause) };
      }
    });
    const respond = (settled: Settled[]) => {
      if (ctx.billing.billable) ctx.resHeaders['X-Call-Costs-USD'] = costs.map((cost) => formatUsd(cost.micros)).join(',');
      return outcomeOf(plan, settled, ctx);
    };
    return results.some(isThenable) ? Promise.all(results).then(respond) : respond(results as Settled[]);
  }

  /**
   * Answers a /trpc request, or returns undefined when tRPC's adapter should (see the file comment).
   * Synchronous when every call is (no body to read, no I/O on the way).
   */
  function handle(request: Request, ctx: RequestContext, maxBodyBytes: number): MaybePromise<RpcOutcome> | undefined {
    let planned: Plan | undefined;
    try {
      planned = plan(request, ctx);
    } catch (cause) {
      return refused(cause, ctx);
    }
    if (!planned) return undefined;
    const calls = planned;
    ctx.resHeaders['Vary'] = 'trpc-accept, accept';
    ctx.logFields.route = calls.isBatch && calls.calls.length > 1 ? '(batch)' : calls.calls[0]!.path;
    if (request.method === 'GET') return answer(calls, inputsOf(ctx.query().get('input'), calls), ctx, request.signal);
    return readBodyText(request, maxBodyBytes).then(
      (text) => answer(calls, inputsOf(text, calls, request.headers.get('content-type')), ctx, request.signal),
      (cause) => refused(cause, ctx),
    );
  }

  return { handle };
}

/** tRPC's answer to the calls: one object, or an array for a batch, with tRPC's status rule. */
function outcomeOf(plan: Plan, settled: Settled[], ctx: RequestContext): RpcOutcome {
  const failures: RpcOutcome['failures'] = [];
  const statuses = new Set<number>();
  const items = settled.map((result, index) => {
    if (result.ok) {
      statuses.add(200);
      return result.data === undefined ? '{"result":{}}' : `{"result":{"data":${jsonText(result.data)}}}`;
    }
    const api = publicErrorOf(result.error, ctx.requestId);
    failures.push({ body: api, cause: result.error });
    statuses.add(api.status);
    return JSON.stringify({ error: trpcErrorShape(api, result.error.code, plan.calls[index]!.path) });
  });
  const status = statuses.size === 1 ? statuses.values().next().value! : 207;
  return { status, body: plan.isBatch ? `[${items.join(',')}]` : items[0]!, failures };
}

/** A request refused before any call (too many calls, a body over the limit): tRPC's error shape. */
function refused(cause: unknown, ctx: RequestContext): RpcOutcome {
  const error = toTrpcError(cause);
  const api = publicErrorOf(error, ctx.requestId);
  return { status: api.status, body: JSON.stringify({ error: trpcErrorShape(api, error.code) }), failures: [{ body: api, cause }] };
}
