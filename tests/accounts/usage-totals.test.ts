/**
 * Usage totals and summaries from the day and hour cells (server/accounts/usage.ts): over ranges of
 * every shape — open ends, whole days, whole hours, a partial first or last day or hour, both within
 * one hour, millisecond edges — with and without a key and a path, `total` and every summary figure equal a direct count of
 * the rows; and paging by cursor walks every row once, newest first.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { and, eq, gte, lte, sql } from 'drizzle-orm';
import { usageRecords } from '../../db/schema.ts';
import { createApiKey } from '../../server/accounts/api-keys.ts';
import { createTestApp, json, type TestApp } from '../harness/app.ts';
import { fundedAccount, type FundedAccount } from '../harness/factories.ts';
import { ledger, redateUsage } from '../harness/ledger.ts';

let t: TestApp;
let acct: FundedAccount;
let secondKey: { key: string; id: string };
const START = Date.parse('2026-11-20T00:00:00.000Z');
const HOUR = 3_600_000;
/** A deterministic spread: 120 rows over 100 hours (five UTC days), some on exact hour boundaries. */
const at = (i: number) => new Date(START + ((i * 7919) % 100) * HOUR + (i % 5 === 0 ? 0 : ((i * 104729) % HOUR))).toISOString();

beforeAll(async () => {
  t = await createTestApp();
  acct = await fundedAccount(t, { usd: 50 });
  secondKey = await createApiKey(t.database.db, { accountId: acct.accountId, name: 'second' });
  for (let i = 0; i < 120; i++) {
    const headers = i % 3 === 0 ? { 'x-api-key': secondKey.key } : acct.headers;
    expect((await t.request(i % 4 === 0 ? '/api/usage?limit=1' : '/api/billing', { headers })).status).toBe(200);
  }
  const rows = await t.database.db.select({ id: usageRecords.id }).from(usageRecords).where(eq(usageRecords.accountId, acct.accountId)).orderBy(usageRecords.createdAt, usageRecords.id);
  await redateUsage(t, acct.accountId, rows.map((row, i) => [row.id, at(i)]));
  await ledger(t, acct.accountId); // cells = rows
});
afterAll(() => t.close());

/** What a direct count of the rows says (the answer the cells must give). */
async function direct(f: { from?: string; to?: string; keyId?: string; path?: string }) {
  const where = and(
    eq(usageRecords.accountId, acct.accountId),
    f.from ? gte(usageRecords.createdAt, new Date(f.from)) : undefined,
    f.to ? lte(usageRecords.createdAt, new Date(f.to)) : undefined,
    f.keyId ? eq(usageRecords.apiKeyId, f.keyId) : undefined,
    f.path ? eq(usageRecords.path, f.path) : undefined,
  );
  const [row] = await t.database.db.select({ n: sql<number>`count(*)::int`, cost: sql<number>`coalesce(sum(cost_micros), 0)::bigint` }).from(usageRecords).where(where);
  return { requests: Number(row!.n), costMicros: Number(row!.cost) };
}

const ranges: Array<{ from?: string; to?: string }> = [
  {},
  { from: '2026-11-20T05:00:00.000Z' },
  { to: '2026-11-21T03:59:59.999Z' },
  { from: '2026-11-20T05:00:00.000Z', to: '2026-11-20T09:59:59.999Z' }, // whole hours only
  { from: '2026-11-20T05:17:00.000Z', to: '2026-11-20T09:42:10.500Z' }, // partial first and last
  { from: '2026-11-20T07:10:00.000Z', to: '2026-11-20T07:50:00.000Z' }, // within one hour
  { from: '2026-11-20T07:00:00.000Z', to: '2026-11-20T08:00:00.000Z' }, // one hour and one millisecond
  { from: '2026-11-20T06:59:59.999Z', to: '2026-11-20T07:00:00.000Z' }, // across a boundary by a millisecond
  { from: '2026-11-19T00:00:00.000Z', to: '2026-11-25T00:00:00.000Z' }, // around all of it
  { from: '2026-11-21T00:00:00.000Z', to: '2026-11-22T23:59:59.999Z' }, // whole days only
  { from: '2026-11-20T05:17:00.000Z', to: '2026-11-23T09:42:10.500Z' }, // partial first and last day, and hour
  { from: '2026-11-20T21:00:00.000Z', to: '2026-11-21T02:59:59.999Z' }, // whole hours across midnight, no whole day
  { from: '2026-11-21T00:00:00.000Z', to: '2026-11-21T00:00:00.000Z' }, // one millisecond at midnight
  { from: '2026-11-22T00:00:00.000Z' }, // after all of it
];

describe('total = a direct count, for every range shape and filter', () => {
  for (const range of ranges) {
    test(`from ${range.from ?? '…'} to ${range.to ?? '…'}`, async () => {
      for (const filter of [{}, { keyId: secondKey.id }, { path: '/api/billing' }, { keyId: secondKey.id, path: '/api/usage' }]) {
        const f = { ...range, ...filter };
        const query = new URLSearchParams({ limit: '1', ...f } as Record<string, string>);
        const { total } = await json(await t.request(`/api/usage?${query}`, { headers: acct.headers }));
        // The count after the answer: the request's own row (and those of the requests before it, all
        // dated now) was written before its handler ran, so both include it when the range does.
        expect(`${JSON.stringify(f)}: ${total}`).toBe(`${JSON.stringify(f)}: ${(await direct(f)).requests}`);
      }
    });
  }
});

describe('the summary adds up to the rows', () => {
  test('per hour and per day, per path and per key, over partial ranges', async () => {
    for (const range of ranges.filter((r) => r.from && r.to)) {
      for (const bucket of ['hour', 'day'] as const) {
        const query = new URLSearchParams({ ...range, bucket } as Record<string, string>);
        const summary = await json(await t.request(`/api/usage/summary?${query}`, { headers: acct.headers }));
        const expected = await direct(range);
        expect(summary.totals.requests).toBe(expected.requests);
        expect(Math.round(summary.totals.costUsd * 1e6)).toBe(expected.costMicros);
        // Every bucket is the rows of its UTC hour or day inside the range.
        for (const b of summary.buckets) {
          const start = Date.parse(b.start);
          const end = start + (bucket === 'hour' ? HOUR : 24 * HOUR) - 1;
          const from = new Date(Math.max(start, Date.parse(range.from!))).toISOString();
          const to = new Date(Math.min(end, Date.parse(range.to!))).toISOString();
          expect(b.requests).toBe((await direct({ from, to })).requests);
        }
        expect(summary.byPath.reduce((n: number, p: { requests: number }) => n + p.requests, 0)).toBe(expected.requests);
        for (const p of summary.byPath) expect(p.requests).toBe((await direct({ ...range, path: p.path })).requests);
        for (const k of summary.byKey) expect(k.requests).toBe((await direct({ ...range, keyId: k.keyId })).requests);
      }
    }
  });
});

describe('paging by cursor', () => {
  test('walks every row once, newest first, whatever the page size', async () => {
    const all = (await t.database.db.select({ id: usageRecords.id }).from(usageRecords).where(eq(usageRecords.accountId, acct.accountId))).length;
    for (const limit of [1, 7, 50]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let last = Infinity;
      for (let pages = 0; pages < 500; pages++) {
        const query = new URLSearchParams({ limit: String(limit), to: '2026-11-30T00:00:00Z', ...(cursor ? { cursor } : {}) });
        const body = await json(await t.request(`/api/usage?${query}`, { headers: acct.headers }));
        for (const r of body.records) {
          expect(Date.parse(r.timestamp)).toBeLessThanOrEqual(last);
          last = Date.parse(r.timestamp);
          seen.push(r.id);
        }
        cursor = body.nextCursor;
        if (!cursor) break;
      }
      // Every row up to `to` (the 120 spread in November; the walk's own requests are dated now, after it).
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.length).toBeLessThanOrEqual(all);
      expect(seen.length).toBe((await direct({ to: '2026-11-30T00:00:00Z' })).requests);
    }
  });

  test('a bad cursor, or a cursor with an offset, is a 400 naming it, and costs nothing', async () => {
    for (const [query, parameter] of [['cursor=nope', 'cursor'], ['cursor=WyJvbGRlc3QiLCJ4Il0&offset=0', 'cursor']] as const) {
      const res = await t.request(`/api/usage?${query}`, { headers: acct.headers });
      expect([res.status, res.headers.get('x-request-cost-usd')]).toEqual([400, '0']);
      expect((await json(res)).message).toContain(parameter);
    }
    const first = await json(await t.request('/api/usage?limit=1', { headers: acct.headers }));
    const res = await t.request(`/api/usage?limit=1&offset=3&cursor=${first.nextCursor}`, { headers: acct.headers });
    expect([res.status, (await json(res)).message]).toEqual([400, expect.stringContaining('offset')]);
  });
});
