/**
 * Idempotency-Key for buy and sell (docs/decisions.md §7), kept in the database so it holds across
 * instances. The same key with the same body within 24 h replays the first answer; a different body
 * is IDEMPOTENCY_MISMATCH; a request still running is IDEMPOTENCY_IN_PROGRESS.
 *
 * - A request that failed before sending anything keeps nothing: its retry runs it again.
 * - A request that reached the venue keeps its answer (success or refusal) for replays.
 * - A request that reached the venue but could not learn every outcome (503, or its process died)
 *   is `unsettled`: a retry with the key settles it (orders/sync) and answers what it became,
 *   rebuilt from the records, instead of running it a second time.
 * Each attempt holds the key with a random owner token; every write checks it, so a slow attempt
 * whose lease was taken over cannot overwrite or free the key.
 *
 * Expired keys are purged on the way: an idempotent request starts a purge when this process has not
 * run one for PURGE_EVERY_MS (no timer to start or stop), in short batches that skip locked rows.
 */
import { and, eq, isNull, lte, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { idempotencyKeys } from '../../db/schema.ts';
import { ApiError, statusFor, type ErrorCode } from '../errors.ts';
import { canonicalJson } from '../lib/canonical-json.ts';
import { IDEMPOTENCY_KEY, IDEMPOTENCY_KEY_RULE } from '../lib/identifiers.ts';
import type { TradeHooks } from './buy.ts';
import type { TradingUser } from './settings.ts';

const RETENTION = sql`interval '24 hours'`;
/** At most one purge of expired keys per process and database this often. */
export const PURGE_EVERY_MS = 10 * 60_000;
/** Rows one DELETE removes: each statement is short and never holds many row locks for long. */
const PURGE_BATCH = 500;
/** Statements one purge runs at most; a larger backlog is taken up again after PURGE_BACKLOG_MS. */
const PURGE_MAX_BATCHES = 20;
const PURGE_BACKLOG_MS = 10_000;
const nextPurgeAt = new WeakMap<Db, number>();

type Stored = { ok: true; data: unknown } | { ok: false; code: ErrorCode; message: string };

export interface IdempotentCall<T> {
  db: Db;
  user: TradingUser;
  /** The Idempotency-Key header, or null when the caller sent none. */
  key: string | null;
  operation: 'buy' | 'sell';
  input: unknown;
  /** How long an attempt may hold the key before it counts as dead (longer than any trade runs). */
  leaseSeconds: number;
  /** Called when the answer is a replay (the transport sets `Idempotent-Replayed: true`). */
  onReplay: () => void;
  run: (hooks: TradeHooks) => Promise<T>;
  /** Settles an earlier attempt's position/operation and answers what it became. */
  recover: (positionId: string, operationId: string) => Promise<T>;
}

/** What identifies "the same request": the operation and its parsed input, key order ignored. */
export const requestHashOf = (operation: string, input: unknown) => new Bun.CryptoHasher('sha256').update(`${operation}\n${canonicalJson(input)}`).digest('hex');

const newOwner = () => Buffer.from(crypto.getRandomValues(new Uint8Array(12))).toString('hex');

/**
 * Deletes keys past their 24 h window, `batch` rows per statement (rows a request holds are skipped,
 * never waited for), until fewer than a batch are left or `maxBatches` statements ran (`backlog`).
 */
export async function purgeExpiredKeys(db: Db, batch = PURGE_BATCH, maxBatches = PURGE_MAX_BATCHES): Promise<{ deleted: number; backlog: boolean }> {
  let deleted = 0;
  for (let i = 0; i < maxBatches; i++) {
    const rows = await db
      .delete(idempotencyKeys)
      .where(
        sql`(${idempotencyKeys.accountId}, ${idempotencyKeys.userId}, ${idempotencyKeys.key}) in (
          select account_id, user_id, key from idempotency_keys
           where created_at < now() - ${RETENTION} limit ${batch} for update skip locked)`,
      )
      .returning({ key: idempotencyKeys.key });
    deleted += rows.length;
    if (rows.length < batch) return { deleted, backlog: false };
  }
  return { deleted, backlog: true };
}

/**
 * Starts a purge unless this process ran one on this database in the last PURGE_EVERY_MS (sooner when
 * the last one left a backlog). It runs beside the request, which never waits for it; a failure
 * (the database away) just waits for the next turn. Resolves to the rows deleted, or undefined when
 * it was not this call's turn.
 */
export function purgeExpiredKeysOccasionally(db: Db, now = Date.now()): Promise<number> | undefined {
  if (now < (nextPurgeAt.get(db) ?? 0)) return undefined;
  nextPurgeAt.set(db, now + PURGE_EVERY_MS);
  return purgeExpiredKeys(db).then(
    ({ deleted, backlog }) => {
      if (backlog) nextPurgeAt.set(db, now + PURGE_BACKLOG_MS);
      return deleted;
    },
    () => 0,
  );
}

export async function runIdempotent<T>(call: IdempotentCall<T>): Promise<T> {
  const { db, user, key } = call;
  if (key === null) return call.run({});
  if (!IDEMPOTENCY_KEY.test(key)) throw new ApiError('BAD_REQUEST', `Idempotency-Key: ${IDEMPOTENCY_KEY_RULE}`);
  void purgeExpiredKeysOccasionally(db);
  const requestHash = requestHashOf(call.operation, call.input);
  const whereKey = and(eq(idempotencyKeys.accountId, user.accountId), eq(idempotencyKeys.userId, user.userId), eq(idempotencyKeys.key, key));
  const lease = sql`now() + ${call.leaseSeconds} * interval '1 second'`;
  const owner = newOwner();

  // Keys are remembered for 24 hours; an older row no longer counts.
  await db.delete(idempotencyKeys).where(and(whereKey, sql`${idempotencyKeys.createdAt} < now() - ${RETENTION}`));
  const [claimed] = await db
    .insert(idempotencyKeys)
    .values({ ...user, key, requestHash, state: 'running', owner, leaseUntil: lease })
    .onConflictDoNothing()
    .returning({ key: idempotencyKeys.key });
  if (claimed) return attempt(call, whereKey, owner, (hooks) => call.run(hooks), false);

  const [row] = await db
    .select({
      requestHash: idempotencyKeys.requestHash,
      state: idempotencyKeys.state,
      response: idempotencyKeys.response,
      positionId: idempotencyKeys.positionId,
      operationId: idempotencyKeys.operationId,
      leaseLive: sql<boolean>`${idempotencyKeys.leaseUntil} > now()`,
    })
    .from(idempotencyKeys)
    .where(whereKey);
  // Deleted in between (its request failed before sending anything): this request may run.
  if (!row) return runIdempotent(call);
  if (row.requestHash !== requestHash) {
    throw new ApiError('IDEMPOTENCY_MISMATCH', 'Idempotency-Key: already used with a different request body; use a new key for a new request');
  }
  if (row.state === 'done') {
    call.onReplay();
    const stored = row.response as Stored;
    if (stored.ok) return stored.data as T;
    throw new ApiError(stored.code, stored.message);
  }
  if (row.state === 'running' && row.leaseLive) throw new ApiError('IDEMPOTENCY_IN_PROGRESS', 'Idempotency-Key: the first request with this key is still running; retry shortly');

  // Unsettled, or running under an expired lease (its process died): take the key over, atomically.
  const [taken] = await db
    .update(idempotencyKeys)
    .set({ owner, state: 'running', leaseUntil: lease })
    .where(and(whereKey, or(eq(idempotencyKeys.state, 'unsettled'), and(eq(idempotencyKeys.state, 'running'), lte(idempotencyKeys.leaseUntil, sql`now()`)))))
    .returning({ positionId: idempotencyKeys.positionId, operationId: idempotencyKeys.operationId });
  if (!taken) throw new ApiError('IDEMPOTENCY_IN_PROGRESS', 'Idempotency-Key: another request with this key is running; retry shortly');
  if (taken.positionId && taken.operationId) {
    const { positionId, operationId } = taken;
    // Not run again: the answer is what the first request became.
    call.onReplay();
    return attempt(call, whereKey, owner, () => call.recover(positionId, operationId), true);
  }
  return attempt(call, whereKey, owner, (hooks) => call.run(hooks), false);
}

/** Runs `work` as the key's owner and records how it ended. */
async function attempt<T>(call: IdempotentCall<T>, whereKey: ReturnType<typeof and>, owner: string, work: (hooks: TradeHooks) => Promise<T>, alreadySent: boolean): Promise<T> {
  const { db } = call;
  const mine = and(whereKey, eq(idempotencyKeys.owner, owner));
  let sent = alreadySent;
  const hooks: TradeHooks = {
    onIntent: async (positionId, operationId) => {
      sent = true;
      await db.update(idempotencyKeys).set({ positionId, operationId }).where(mine);
    },
  };
  const finish = (stored: Stored, status: number) => db.update(idempotencyKeys).set({ state: 'done', response: stored, responseStatus: status }).where(mine);
  try {
    const data = await work(hooks);
    await finish({ ok: true, data }, 200);
    return data;
  } catch (error) {
    if (!sent) {
      await db.delete(idempotencyKeys).where(and(mine, isNull(idempotencyKeys.positionId)));
    } else if (error instanceof ApiError && statusFor(error.apiCode) < 500) {
      await finish({ ok: false, code: error.apiCode, message: error.message }, statusFor(error.apiCode));
    } else {
      // Orders went out but not every outcome is known: the next retry settles and answers.
      await db.update(idempotencyKeys).set({ state: 'unsettled', leaseUntil: sql`now()` }).where(mine);
    }
    throw error;
  }
}
