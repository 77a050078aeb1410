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

/** What an account-stream client has: every row ≤ hwm except `pending` (ascending, each < hwm). */
export interface AccountCursor {
  hwm: number;
  pending: number[];
}

export function accountId(cursor: AccountCursor): string {
  const { hwm, pending } = cursor;
  if (pending.length === 0) return String(hwm);
  if (pending.length > MAX_LISTED) return String(pending[0]! - 1);
  return `${hwm}-${pending.map((p) => hwm - p).join('.')}`;
}

const ACCOUNT_ID = /^(\d{1,15})(?:-(\d{1,15}(?:\.\d{1,15}){0,31}))?$/;

export function parseAccountId(text: string | null | undefined, param = 'lastEventId'): AccountCursor | undefined {
  if (text === undefined || text === null || text === '') return undefined;
  const m = ACCOUNT_ID.exec(text);
  const hwm = m ? Number(m[1]) : NaN;
  const deltas = m?.[2] ? m[2].split('.').map(Number) : [];
  if (!m || !Number.isSafeInteger(hwm) || deltas.some((d) => !(d >= 1 && d <= hwm))) {
    throw new ApiError('BAD_REQUEST', `${param}: not an id this stream sent (expected <seq> or <seq>-<d>.<d>…)`);
  }
  const pending = [...new Set(deltas.map((d) => hwm - d))].sort((a, b) => a - b);
  return { hwm, pending };
}
