/** GET /api/usage (docs/decisions.md §4): newest first, inclusive dates, limits, total. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { usageRecords } from '../../db/schema.ts';
import { redateUsage } from '../harness/ledger.ts';
import { createTestApp, json, type TestApp } from '../harness/app.ts';
import { fundedAccount, type FundedAccount } from '../harness/factories.ts';

let t: TestApp;
let acct: FundedAccount;
beforeAll(async () => {
  t = await createTestApp();
  acct = await fundedAccount(t);
  // Three billed calls, then spread their timestamps over three days.
  for (let i = 0; i < 3; i++) await t.request('/api/billing', { headers: acct.headers });
  const rows = await t.database.db.select({ id: usageRecords.id }).from(usageRecords).orderBy(usageRecords.createdAt, usageRecords.id);
  const days = ['2026-11-01T10:00:00.000Z', '2026-11-02T23:59:59.000Z', '2026-11-03T00:00:00.000Z'];
  await redateUsage(t, acct.accountId, rows.map((row, i) => [row.id, days[i]!]));
});
afterAll(() => t.close());

const usage = async (query = '') => {
  const res = await t.request(`/api/usage${query}`, { headers: acct.headers });
  return { res, body: await json(res) };
};

describe('GET /api/usage', () => {
  test('lists records newest first with the documented members', async () => {
    const { res, body } = await usage();
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-cost-usd')).toBe('0.002');
    // This request itself is the newest record.
    expect(body.total).toBe(4);
    expect(Object.keys(body.records[0]).sort()).toEqual(['costUsd', 'currency', 'id', 'keyId', 'method', 'path', 'timestamp']);
    expect(body.records[0]).toMatchObject({ path: '/api/usage', method: 'GET', costUsd: 0.002, currency: 'USD' });
    expect(body.records.slice(1).map((r: any) => r.timestamp)).toEqual([
      '2026-11-03T00:00:00.000Z',
      '2026-11-02T23:59:59.000Z',
      '2026-11-01T10:00:00.000Z',
    ]);
    expect(body.records[0].id).toMatch(/^use_/);
  });

  test('from and to are inclusive; a date-only `to` covers that whole day', async () => {
    expect((await usage('?from=2026-11-02&to=2026-11-02')).body.records.map((r: any) => r.timestamp)).toEqual(['2026-11-02T23:59:59.000Z']);
    expect((await usage('?from=2026-11-02T23:59:59Z&to=2026-11-03T00:00:00.000Z')).body.total).toBe(2);
    expect((await usage('?to=2026-11-01')).body.total).toBe(1);
  });

  test('limit pages the newest records while total counts all matches', async () => {
    const { body } = await usage('?limit=2&to=2026-11-05');
    expect(body.records).toHaveLength(2);
    expect(body.total).toBe(3);
  });

  test('bad parameters are 400 naming the parameter, and cost nothing', async () => {
    for (const [query, name] of [
      ['?limit=0', 'limit'],
      ['?limit=10001', 'limit'],
      ['?limit=1e2', 'limit'],
      ['?limit=0x10', 'limit'],
      ['?limit=abc', 'limit'],
      ['?limit=1&limit=2', 'limit'],
      ['?from=yesterday', 'from'],
      ['?to=2026-13-45', 'to'],
      ['?from=2026-11-03&to=2026-11-01', 'from'],
      ['?colour=blue', 'colour'],
    ] as const) {
      const { res, body } = await usage(query);
      expect(`${query} → ${res.status}`).toBe(`${query} → 400`);
      expect(body.code).toBe('BAD_REQUEST');
      expect(body.message).toContain(name);
      expect(res.headers.get('x-request-cost-usd')).toBe('0');
    }
  });

  test('another account sees none of these records', async () => {
    const other = await fundedAccount(t);
    const res = await t.request('/api/usage', { headers: other.headers });
    const body = await json(res);
    expect(body.total).toBe(1);
    expect(body.records[0].path).toBe('/api/usage');
  });
});
