/**
 * Idempotency-Key for buy and sell (decisions §7), kept in the database so it holds across
 * instances. The same key with the same body within 24 h replays the first answer; a different body
 * is IDEMPOTENCY_MISMATCH; a request still running is IDEMPOTENCY_IN_PROGRESS.
 *
 * What is kept: the answer of every request that reached the venue (success or failure). A request
 * that failed before sending anything keeps nothing, so retrying it with the same key runs it again.
 * A `running` row whose lease expired belongs to a process that died: if it had sent nothing, the
 * retry takes it over; if it had, the retry is told which position orders/sync will settle.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { idempotencyKeys } from '../../db/schema.ts';
import { ApiError, statusFor, type ErrorCode } from '../errors.ts';
import { canonicalJson } from '../lib/canonical-json.ts';
import type { TradeHooks } from './buy.ts';
import type { TradingUser } from './settings.ts';

const KEY = /^[\x21-\x7e]{1,255}$/;
/** Longer than any buy or sell can run (a few venue deadlines). */
const LEASE_SECONDS = 120;
const RETENTION = sql`interval '24 hours'`;

type Stored = { ok: true; data: unknown } | { ok: false; code: ErrorCode; message: string };

export interface IdempotentCall<T> {
  db: Db;
  user: TradingUser;
  /** The Idempotency-Key header, or null when the caller sent none. */
  key: string | null;
  operation: 'buy' | 'sell';
  input: unknown;
  /** Called when the answer is a replay (the transport sets `Idempotent-Replayed: true`). */
  onReplay: () => void;
  run: (hooks: TradeHooks) => Promise<T>;
}

function replay<T>(stored: Stored, onReplay: () => void): T {
  onReplay();
  if (stored.ok) return stored.data as T;
  throw new ApiError(stored.code, stored.message);
}

export async function runIdempotent<T>(call: IdempotentCall<T>): Promise<T> {
  const { db, user, key } = call;
  if (key === null) return call.run({});
  if (!KEY.test(key)) throw new ApiError('BAD_REQUEST', 'Idempotency-Key: must be 1-255 visible ASCII characters');
  const requestHash = new Bun.CryptoHasher('sha256').update(`${call.operation}\n${canonicalJson(call.input)}`).digest('hex');
  const whereKey = and(eq(idempotencyKeys.accountId, user.accountId), eq(idempotencyKeys.userId, user.userId), eq(idempotencyKeys.key, key));

  // Keys are remembered for 24 hours; an older row no longer counts.
  await db.delete(idempotencyKeys).where(and(whereKey, sql`${idempotencyKeys.createdAt} < now() - ${RETENTION}`));
  const [claimed] = await db
    .insert(idempotencyKeys)
    .values({ ...user, key, requestHash, state: 'running', leaseUntil: sql`now() + ${LEASE_SECONDS} * interval '1 second'` })
    .onConflictDoNothing()
    .returning({ key: idempotencyKeys.key });

  if (!claimed) {
    const [row] = await db
      .select({
        requestHash: idempotencyKeys.requestHash,
        state: idempotencyKeys.state,
        response: idempotencyKeys.response,
        positionId: idempotencyKeys.positionId,
        leaseUntil: idempotencyKeys.leaseUntil,
        leaseLive: sql<boolean>`${idempotencyKeys.leaseUntil} > now()`,
      })
      .from(idempotencyKeys)
      .where(whereKey);
    // Deleted in between (its request failed before sending anything): this request may run.
    if (!row) return runIdempotent(call);
    if (row.requestHash !== requestHash) {
      throw new ApiError('IDEMPOTENCY_MISMATCH', 'Idempotency-Key: already used with a different request body; use a new key for a new request');
    }
    if (row.state === 'done') return replay<T>(row.response as Stored, call.onReplay);
    if (row.leaseLive) throw new ApiError('IDEMPOTENCY_IN_PROGRESS', 'Idempotency-Key: the first request with this key is still running; retry shortly');
    if (row.positionId) {
      throw new ApiError(
        'IDEMPOTENCY_IN_PROGRESS',
        `Idempotency-Key: the first request with this key was interrupted after sending orders for position ${row.positionId}; POST /api/trading/orders/sync settles it`,
      );
    }
    const [taken] = await db
      .update(idempotencyKeys)
      .set({ leaseUntil: sql`now() + ${LEASE_SECONDS} * interval '1 second'` })
      .where(and(whereKey, eq(idempotencyKeys.state, 'running'), eq(idempotencyKeys.leaseUntil, row.leaseUntil)))
      .returning({ key: idempotencyKeys.key });
    if (!taken) throw new ApiError('IDEMPOTENCY_IN_PROGRESS', 'Idempotency-Key: another request with this key is running; retry shortly');
  }

  let sent = false;
  const hooks: TradeHooks = {
    onIntent: async (positionId) => {
      sent = true;
      await db.update(idempotencyKeys).set({ positionId }).where(whereKey);
    },
  };
  const finish = (stored: Stored, status: number) =>
    db.update(idempotencyKeys).set({ state: 'done', response: stored, responseStatus: status }).where(whereKey);
  try {
    const data = await call.run(hooks);
    await finish({ ok: true, data }, 200);
    return data;
  } catch (error) {
    if (sent && error instanceof ApiError) await finish({ ok: false, code: error.apiCode, message: error.message }, statusFor(error.apiCode));
    else if (!sent) await db.delete(idempotencyKeys).where(whereKey);
    // Sent, then an unexpected error: the row stays running; its lease runs out and a retry is told
    // which position orders/sync settles.
    throw error;
  }
}
