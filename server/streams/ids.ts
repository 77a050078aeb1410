/**
 * The `id:` of every stream message, which a client hands back as `Last-Event-ID` (or tRPC's
 * `lastEventId`) to resume. Both formats are resume points, not row names: an id says what the
 * client already has, so a reconnect (to this instance, another one, or after a restart) sends what
 * it lacks and nothing twice where that can be known. docs/streams.md explains them to customers.
 *
 * Valuation stream: `<ms>-<n>-<tag>`, where `ms` is the recording's snapshot time (strictly
 * increasing per process), `n` orders the events changed in that recording, and `tag` names the
 * process's stream hub. On the same hub a resume is exact; an id of another hub (another instance,
 * or before a restart) is compared by time with a margin for clock skew, so the client may get an
 * event's current valuation once more, never miss one.
 *
 * Account stream: `<hwm>` or `<hwm>-<d1>.<d2>…`: the client has every one of its account events with
 * seq ≤ hwm except seq = hwm − d for each listed d (rows the tailer had not seen committed yet; see
 * account-hub.ts). More than MAX_LISTED such rows collapse to `<lowest − 1>` (a resume then repeats
 * the rows in between: never a gap, rarely a repeat).
 */
import { ApiError } from '../errors.ts';

export interface ValuationPosition {
  ms: number;
  n: number;
  tag: string;
}

const VALUATION_ID = /^(\d{1,15})-(\d{1,6})-([0-9a-z]{1,16})$/;

export function valuationId(position: ValuationPosition): string {
  return `${position.ms}-${position.n}-${position.tag}`;
}

/** The position a valuation id names; 400 for anything else (undefined/null/'' mean "no id"). */
export function parseValuationId(text: string | null | undefined, param = 'lastEventId'): ValuationPosition | undefined {
  if (text === undefined || text === null || text === '') return undefined;
  const m = VALUATION_ID.exec(text);
  if (!m) throw new ApiError('BAD_REQUEST', `${param}: not an id this stream sent (expected <ms>-<n>-<tag>)`);
  return { ms: Number(m[1]), n: Number(m[2]), tag: m[3]! };
}

/** Rows pending below the high-water mark that an id lists one by one. */
export const MAX_LISTED = 32;

/** Seqs `lo` to `hi`, both included. */
export type SeqRange = readonly [lo: number, hi: number];

/**
 * What an account-stream client has: every row ≤ hwm except the `pending` ones (ranges, ascending,
 * disjoint, each below hwm). Ranges, not a list: a wide jump in seq is one entry, not millions.
 */
export interface AccountCursor {
  hwm: number;
  pending: readonly SeqRange[];
}

/** How many seqs the ranges hold. */
export function rangeCount(ranges: readonly SeqRange[]): number {
  let n = 0;
  for (const [lo, hi] of ranges) n += hi - lo + 1;
  return n;
}

/** Whether `seq` is in the (ascending, disjoint) ranges. */
export function inRanges(ranges: readonly SeqRange[], seq: number): boolean {
  let low = 0;
  let high = ranges.length - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const [lo, hi] = ranges[mid]!;
    if (seq < lo) high = mid - 1;
    else if (seq > hi) low = mid + 1;
    else return true;
  }
  return false;
}

/** Ascending, disjoint ranges covering every seq of `a` and of `b` (each ascending and disjoint). */
export function unionRanges(a: readonly SeqRange[], b: readonly SeqRange[]): SeqRange[] {
  if (b.length === 0) return [...a];
  if (a.length === 0) return [...b];
  const all = [...a, ...b].sort((x, y) => x[0] - y[0]);
  const out: Array<[number, number]> = [];
  for (const [lo, hi] of all) {
    const last = out.at(-1);
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

/** The part of the ranges below `limit`. */
export function rangesBelow(ranges: readonly SeqRange[], limit: number): SeqRange[] {
  const out: SeqRange[] = [];
  for (const [lo, hi] of ranges) {
    if (lo >= limit) break;
    out.push(hi < limit ? [lo, hi] : [lo, limit - 1]);
  }
  return out;
}

/** Single seqs (ascending, distinct) as ranges, adjacent ones joined. */
export function rangesOf(seqs: readonly number[]): SeqRange[] {
  const out: Array<[number, number]> = [];
  for (const seq of seqs) {
    const last = out.at(-1);
    if (last && seq === last[1] + 1) last[1] = seq;
    else out.push([seq, seq]);
  }
  return out;
}

export function accountId(cursor: AccountCursor): string {
  const { hwm, pending } = cursor;
  const count = rangeCount(pending);
  if (count === 0) return String(hwm);
  if (count > MAX_LISTED) return String(pending[0]![0] - 1);
  const deltas: number[] = [];
  for (const [lo, hi] of pending) for (let seq = lo; seq <= hi; seq++) deltas.push(hwm - seq);
  return `${hwm}-${deltas.join('.')}`;
}

const ACCOUNT_ID = /^(\d{1,15})(?:-(\d{1,15}(?:\.\d{1,15}){0,31}))?$/;

/** What an account-stream id must look like, for a 400 that names the parameter. */
export const ACCOUNT_ID_RULE = 'not an id this stream sent (expected <seq> or <seq>-<d>.<d>…)';

/** The cursor an account-stream id names; undefined for "no id" (undefined, null, ''), null for anything else. */
export function accountCursorOf(text: string | null | undefined): AccountCursor | undefined | null {
  if (text === undefined || text === null || text === '') return undefined;
  const m = ACCOUNT_ID.exec(text);
  const hwm = m ? Number(m[1]) : NaN;
  const deltas = m?.[2] ? m[2].split('.').map(Number) : [];
  if (!m || !Number.isSafeInteger(hwm) || deltas.some((d) => !(d >= 1 && d <= hwm))) return null;
  const pending = [...new Set(deltas.map((d) => hwm - d))].sort((a, b) => a - b);
  return { hwm, pending: rangesOf(pending) };
}

/** The cursor an account-stream id names; 400 for anything else (the routes check it with their input first). */
export function parseAccountId(text: string | null | undefined, param = 'lastEventId'): AccountCursor | undefined {
  const cursor = accountCursorOf(text);
  if (cursor === null) throw new ApiError('BAD_REQUEST', `${param}: ${ACCOUNT_ID_RULE}`);
  return cursor;
}
