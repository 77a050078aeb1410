/**
 * Idempotency keys are kept 24 h and then purged (they used to stay for ever): an idempotent request
 * starts a bounded purge at most once per PURGE_EVERY_MS per process, expired rows disappear, live
 * rows stay, and a replay within the window still replays. Rows are backdated to stand for time.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { and, eq, sql } from 'drizzle-orm';
import { idempotencyKeys } from '../../db/schema.ts';
import { PURGE_EVERY_MS, purgeExpiredKeys, purgeExpiredKeysOccasionally } from '../../server/trading/idempotency.ts';
import type { TestApp } from '../harness/app.ts';
import { buy, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp } from '../harness/trading-venue.ts';

let t: TestApp;
let who: Trader;
beforeAll(async () => {
  t = await createTradingApp();
  who = await trader(t);
});
afterAll(() => t.close());

const hoursAgo = (hours: number) => sql`now() - ${hours} * interval '1 hour'`;

/** A finished key of `who`'s, created `hours` ago. */
async function storedKey(key: string, hours: number) {
  await t.database.db.insert(idempotencyKeys).values({
    accountId: who.account.accountId,
    userId: who.userId,
    key,
    requestHash: 'h',
    state: 'done',
    response: { ok: true, data: {} },
    responseStatus: 200,
    leaseUntil: hoursAgo(hours),
    createdAt: hoursAgo(hours),
  });
}

const keysLeft = async (prefix: string) =>
  (
    await t.database.db
      .select({ key: idempotencyKeys.key })
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.accountId, who.account.accountId), sql`${idempotencyKeys.key} like ${`${prefix}%`}`))
  )
    .map((r) => r.key)
    .sort();

async function eventually(check: () => Promise<boolean>) {
  for (let waited = 0; waited < 10_000 && !(await check()); waited += 20) await Bun.sleep(20);
}

test('an idempotent request purges expired keys of everyone; live keys stay and still replay', async () => {
  // Stored before this database's first idempotent request, which starts its first purge.
  await storedKey('old-25h', 25);
  await storedKey('old-48h', 48);
  await storedKey('live-1h', 1);
  const first = await buy(t, who, { eventId: 'openai-ipo', side: 'LONG', amount: 20 }, { 'idempotency-key': 'recent-buy' });
  expect(first.res.status).toBe(200);
  await eventually(async () => (await keysLeft('old-')).length === 0);
  expect(await keysLeft('old-')).toEqual([]);
  expect(await keysLeft('live-')).toEqual(['live-1h']);

  // 23 hours later the buy's key is still in its window: a purge keeps it and the retry replays.
  await t.database.db.update(idempotencyKeys).set({ createdAt: hoursAgo(23) }).where(eq(idempotencyKeys.key, 'recent-buy'));
  expect((await purgeExpiredKeys(t.database.db)).deleted).toBe(0);
  const replay = await buy(t, who, { eventId: 'openai-ipo', side: 'LONG', amount: 20 }, { 'idempotency-key': 'recent-buy' });
  expect(replay.res.headers.get('idempotent-replayed')).toBe('true');
  expect(replay.body.positionId).toBe(first.body.positionId);

  // Past 24 hours it is purged.
  await t.database.db.update(idempotencyKeys).set({ createdAt: hoursAgo(25) }).where(eq(idempotencyKeys.key, 'recent-buy'));
  expect((await purgeExpiredKeys(t.database.db)).deleted).toBe(1);
  expect(await keysLeft('recent-')).toEqual([]);
});

test('at most one purge per interval and process; each statement deletes a bounded batch', async () => {
  const db = t.database.db;
  const start = Date.now() + 3_600_000; // past whatever turn the requests above took
  await storedKey('batch-a', 30);
  expect(await purgeExpiredKeysOccasionally(db, start)).toBe(1);
  await storedKey('batch-b', 30);
  // Not its turn: nothing runs until the interval has passed.
  expect(purgeExpiredKeysOccasionally(db, start + PURGE_EVERY_MS - 1)).toBeUndefined();
  expect(await keysLeft('batch-')).toEqual(['batch-b']);
  expect(await purgeExpiredKeysOccasionally(db, start + PURGE_EVERY_MS)).toBe(1);

  for (let i = 0; i < 25; i++) await storedKey(`many-${String(i).padStart(2, '0')}`, 30);
  expect(await purgeExpiredKeys(db, 10, 2)).toEqual({ deleted: 20, backlog: true });
  expect(await keysLeft('many-')).toHaveLength(5);
  expect(await purgeExpiredKeys(db, 10, 2)).toEqual({ deleted: 5, backlog: false });
});
