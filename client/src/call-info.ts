/**
 * Each call's request id and cost, read from the HTTP response that answered it.
 *
 * The service sends `X-Request-Id` on every response and, on /trpc, `X-Call-Costs-USD`: one decimal
 * USD amount per call, in the batch's order (`0.001,0,0.001`). Several calls share one response
 * when they are batched, so a call's cost is the entry at its position in the batch: the batch
 * link reports each batch's operations in order (recordBatch), and the call-info link, which sees
 * every call's result, picks its own entry (readCallInfo).
 */
import type { Operation } from '@trpc/client';

export interface CallInfo {
  /** The procedure, e.g. `trading.buy`. */
  path: string;
  /** A subscription's info only comes with its error (streams are billed per minute held, not per call). */
  type: 'query' | 'mutation' | 'subscription';
  /** Whether the call succeeded. */
  ok: boolean;
  /** The request id of the HTTP request that carried the call (a batch's calls share one); null without an answer. */
  requestId: string | null;
  /**
   * What the call cost in USD, as the service stated it: 0 for unbilled routes and for failed calls
   * (a failure is refunded). Null when the answer did not say: no answer at all (a network failure),
   * or a server without per-call costs answering a batch of several calls.
   */
  cost: number | null;
  /** The same in micro-USD (millionths of a dollar), an exact integer: sum these, not `cost`. */
  costMicros: number | null;
}

interface BatchPosition {
  index: number;
  size: number;
}

/** Where each operation sat in the HTTP request that carried it, by operation id (unique per client). */
export class BatchPositions {
  private readonly positions = new Map<number, BatchPosition>();

  /** Called by the transport's `headers` callback, which tRPC calls once per request with its operations in order. */
  recordBatch(ops: readonly Pick<Operation, 'id'>[]): void {
    ops.forEach((op, index) => this.positions.set(op.id, { index, size: ops.length }));
  }

  /** The operation's position, forgotten once read (or when the call is abandoned). */
  take(id: number): BatchPosition | undefined {
    const position = this.positions.get(id);
    this.positions.delete(id);
    return position;
  }
}

/** 1 USD = 1,000,000 micro-USD (the server's server/lib/money.ts scale; this package ships without the server). */
export const MICROS_PER_USD = 1_000_000;

/** A decimal USD amount (`0.001`, `12`, `-0.5`) in exact micro-USD; null when it is not one. */
export function usdToMicros(text: string | undefined | null): number | null {
  const match = text?.trim().match(/^(-?)(\d+)(?:\.(\d{1,6}))?$/);
  if (!match) return null;
  const micros = Number(match[2]) * MICROS_PER_USD + Number((match[3] ?? '').padEnd(6, '0'));
  return match[1] ? -micros : micros;
}

/** The call info of one operation, from the response of the request that carried it (if any). */
export function readCallInfo(op: Pick<Operation, 'path' | 'type'>, ok: boolean, response: unknown, position: BatchPosition | undefined): CallInfo {
  const headers = headersOf(response);
  const costMicros = headers ? costOf(headers, position ?? { index: 0, size: 1 }) : null;
  return {
    path: op.path,
    type: op.type,
    ok,
    requestId: headers?.get('x-request-id') ?? null,
    cost: costMicros === null ? null : costMicros / MICROS_PER_USD,
    costMicros,
  };
}

interface HeadersLike {
  get(name: string): string | null;
}

/** tRPC hands over the fetch response it got (a Response, or what a custom fetch returned). */
function headersOf(response: unknown): HeadersLike | undefined {
  const headers = (response as { headers?: Partial<HeadersLike> } | undefined)?.headers;
  return typeof headers?.get === 'function' ? (headers as HeadersLike) : undefined;
}

function costOf(headers: HeadersLike, { index, size }: BatchPosition): number | null {
  const perCall = headers.get('x-call-costs-usd');
  if (perCall !== null) return usdToMicros(perCall.split(',')[index]);
  // A server without the per-call header: the request's total is the call's only when it was alone
  // (no cost header at all: an unbilled request).
  if (size !== 1) return null;
  const total = headers.get('x-request-cost-usd');
  return total === null ? 0 : usdToMicros(total);
}

/** The operation context key under which withCallInfo waits for its call's info. */
export const CALL_INFO_RECEIVER = 'preIpoCallInfo';

export type CallInfoReceiver = (info: CallInfo) => void;

export type WithCallInfo<T> = { data: T } & CallInfo;

/**
 * Runs one call and returns its data with its request id and cost. Pass the options it is given
 * to the call (they carry tRPC's per-call `context`):
 *
 *     const { data, cost, requestId } = await withCallInfo((o) => client.trading.quote.query(input, o));
 *
 * A failed call throws as usual; a PreIpoApiError carries the same info in `callInfo`.
 */
export async function withCallInfo<T>(call: (options: { context: Record<string, unknown> }) => Promise<T>): Promise<WithCallInfo<T>> {
  let info: CallInfo | undefined;
  const receiver: CallInfoReceiver = (received) => (info = received);
  const data = await call({ context: { [CALL_INFO_RECEIVER]: receiver } });
  if (!info) throw new Error('withCallInfo: the call did not reach a client made by createClient (pass the options to the call)');
  return { data, ...info };
}
