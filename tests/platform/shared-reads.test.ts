/**
 * Reads that share a statement (lib/batch-queue.ts; docs/decisions.md §4, "Reads that share a
 * statement"): unfiltered usage pages, trade history and order lists read at the same moment go to
 * the database as one statement. Sharing a statement must never share an answer: under a burst that
 * mixes accounts, users of one account and page sizes, every answer holds only its caller's rows and
 * totals — the same answer the caller gets alone, and the same as the filtered path (its own,
 * separately written statements) gives for a range that covers everything. On PostgreSQL the burst is
 * also shown to have shared statements (a test that never batched would prove nothing about mixing).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { openDatabase, type Database } from '../../db/client.ts';
import { usageRecords } from '../../db/schema.ts';
import type { TestApp } from '../harness/app.ts';
import { engine, freshDatabase, type TestDatabase } from '../harness/databases.ts';
import { fundedAccount } from '../harness/factories.ts';
import { api, buy, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp } from '../harness/trading-venue.ts';

let base: TestDatabase;
let observed: Database | undefined;
let t: TestApp;
/** The statements sent, by their text (PostgreSQL: an observed pool). */
const statements: string[] = [];
/** Two users of one account, and a user of another account. */
let traders: Trader[];

beforeAll(async () => {
  base = await freshDatabase();
  if (base.url) observed = await openDatabase({ kind: 'postgres', url: base.url, poolSize: 4, onQuery: (query) => statements.push(query) });
  t = await createTradingApp({}, { database: observed ?? base });
  const first = await trader(t);
  traders = [first, await trader(t, { account: first.account }), await trader(t)];
  const { body } = await api(t, { headers: {} }, 'GET', '/api/trading/events');
  const open = body.events.filter((e: { status: string }) => e.status === 'open').map((e: { id: string }) => e.id);
  // Different histories: 1, 2 and 3 buys.
  for (const [i, who] of traders.entries()) {
    for (let n = 0; n <= i; n++) expect((await buy(t, who, { eventId: open[n % open.length], side: n % 2 ? 'SHORT' : 'LONG', amount: 40 })).res.status).toBe(200);
  }
}, 120_000);
afterAll(async () => {
  await t?.close();
  await observed?.close();
  await base?.close();
});

const shared = (name: string) => statements.filter((s) => s.includes(name)).length;

describe('usage pages', () => {
  test(`a burst over several accounts: each page only its account's rows, its total its own count (${engine})`, async () => {
    const accounts = await Promise.all([1, 2, 3].map(() => fundedAccount(t)));
    // Different histories first: 3, 6 and 9 billed calls.
    for (const [i, a] of accounts.entries()) for (let n = 0; n < 3 * (i + 1); n++) expect((await t.request('/api/billing', { headers: a.headers })).status).toBe(200);
    const before = shared('after_key text');
    const calls = Array.from({ length: 36 }, (_, i) => ({ account: accounts[i % 3]!, limit: [1, 5, 50][i % 3]! }));
    const answers = await Promise.all(calls.map((c) => t.request(`/api/usage?limit=${c.limit}`, { headers: c.account.headers }).then((r) => r.json())));
    if (observed) expect(shared('after_key text') - before).toBeLessThan(calls.length / 2);
    for (const [i, { account, limit }] of calls.entries()) {
      const own = new Set((await t.database.db.select({ id: usageRecords.id }).from(usageRecords).where(eq(usageRecords.accountId, account.accountId))).map((r) => r.id));
      const answer = answers[i]!;
      expect(answer.records.length).toBe(Math.min(limit, answer.total));
      for (const record of answer.records) expect(own.has(record.id)).toBe(true);
      // Its total counts its account's rows at that moment: between the calls before the burst (and
      // its own) and everything the account has now.
      expect(answer.total).toBeGreaterThanOrEqual(3 * (accounts.indexOf(account) + 1) + 1);
      expect(answer.total).toBeLessThanOrEqual(own.size);
    }
    // Once the burst is over, the page is the filtered path's page for a range that covers everything.
    for (const account of accounts) {
      const alone = await t.request('/api/usage?limit=20', { headers: account.headers }).then((r) => r.json());
      const filtered = await t.request('/api/usage?limit=20&from=2000-01-01', { headers: account.headers }).then((r) => r.json());
      // The second call's own row is the newest of its page; the pages agree below it.
      expect(filtered.records.slice(1)).toEqual(alone.records.slice(0, 19));
      expect(filtered.total).toBe(alone.total + 1);
    }
  });
});

describe('trade history and order lists', () => {
  test(`a burst over users and accounts: each answer the caller's alone, equal to the filtered path's (${engine})`, async () => {
    const alone = async (who: Trader) => ({
      history: (await api(t, who, 'GET', '/api/trading/history?limit=5')).body,
      orders: (await api(t, who, 'GET', '/api/trading/orders?limit=5')).body,
      historyFiltered: (await api(t, who, 'GET', '/api/trading/history?limit=5&startDate=2000-01-01')).body,
    });
    const expected = await Promise.all(traders.map(alone));
    for (const [i, e] of expected.entries()) {
      // Buys of 7-band events: each user's trades and orders are its own, and the totals count only them.
      expect(e.history.summary.totalTrades).toBeGreaterThan(0);
      expect(e.history).toEqual(e.historyFiltered);
      expect(e.orders.total).toBeGreaterThanOrEqual(e.history.summary.totalTrades);
      if (i > 0) expect(e.history.summary.totalTrades).not.toBe(expected[i - 1]!.history.summary.totalTrades);
    }
    const before = { trades: shared('select * from trades t'), orders: shared('select * from orders o') };
    const burst = Array.from({ length: 30 }, (_, i) => traders[i % 3]!);
    const answers = await Promise.all(
      burst.map(async (who) => ({ history: (await api(t, who, 'GET', '/api/trading/history?limit=5')).body, orders: (await api(t, who, 'GET', '/api/trading/orders?limit=5')).body })),
    );
    if (observed) {
      expect(shared('select * from trades t') - before.trades).toBeLessThan(burst.length / 2);
      expect(shared('select * from orders o') - before.orders).toBeLessThan(burst.length / 2);
    }
    for (const [i, who] of burst.entries()) {
      const e = expected[traders.indexOf(who)]!;
      expect(answers[i]!.history).toEqual(e.history);
      expect(answers[i]!.orders).toEqual(e.orders);
    }
  });
});
