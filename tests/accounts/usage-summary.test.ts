/**
 * Usage by key, path and time (the dashboard's usage page, over /api and /trpc): each record names its
 * key; /api/usage filters by key and path and pages with offset; /api/usage/summary sums requests and
 * cost per UTC hour or day, per path and per key — and its totals equal the records it summarises.
 * A signed-in customer reads their own, billed like a key; another account's never.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { usageRecords } from '../../db/schema.ts';
import { createApiKey } from '../../server/accounts/api-keys.ts';
import { redateUsage } from '../harness/ledger.ts';
import { createTestApp, trpcClient, type TestApp } from '../harness/app.ts';
import { fundedAccount, type FundedAccount } from '../harness/factories.ts';
import { signIn } from '../harness/sign-in.ts';

let t: TestApp;
let acct: FundedAccount;
let second: string;
const DAY1 = '2026-11-20T10:15:00Z';
const DAY2 = '2026-11-21T23:59:00Z';

beforeAll(async () => {
  t = await createTestApp();
  acct = await fundedAccount(t, { usd: 5 });
  second = (await createApiKey(t.database.db, { accountId: acct.accountId, name: 'second key' })).key;
  // 3 × /api/billing and 2 × /api/pricing... (pricing is public: unbilled) → use /api/usage as the second path.
  for (let i = 0; i < 3; i++) expect((await t.request('/api/billing', { headers: acct.headers })).status).toBe(200);
  for (let i = 0; i < 2; i++) expect((await t.request('/api/billing', { headers: { 'x-api-key': second } })).status).toBe(200);
  expect((await t.request('/api/usage?limit=1', { headers: { 'x-api-key': second } })).status).toBe(200);
  // Spread them over two days (the first four on day 1).
  const rows = await t.database.db.select({ id: usageRecords.id }).from(usageRecords).where(eq(usageRecords.accountId, acct.accountId)).orderBy(usageRecords.createdAt, usageRecords.id);
  await redateUsage(t, acct.accountId, rows.map((row, i) => [row.id, i < 4 ? DAY1 : DAY2]));
});
afterAll(() => t.close());

const get = async (path: string, headers: Record<string, string> = acct.headers) => {
  const res = await t.request(path, { headers });
  return { status: res.status, body: await res.json() };
};

test('records name their key; filters by key and path; offset pages', async () => {
  const all = (await get('/api/usage?from=2026-11-20&to=2026-11-21')).body;
  expect(all.total).toBe(6);
  expect(new Set(all.records.map((r: any) => r.keyId))).toEqual(new Set([acct.apiKeyId, all.records.find((r: any) => r.path === '/api/usage').keyId]));
  const byKey = (await get(`/api/usage?keyId=${acct.apiKeyId}&from=2026-11-20&to=2026-11-21`)).body;
  expect(byKey.total).toBe(3);
  expect(byKey.records.every((r: any) => r.keyId === acct.apiKeyId)).toBe(true);
  const byPath = (await get('/api/usage?path=/api/usage&from=2026-11-20&to=2026-11-21')).body;
  expect(byPath.records.map((r: any) => r.path)).toEqual(['/api/usage']);
  const page1 = (await get('/api/usage?from=2026-11-20&to=2026-11-21&limit=4')).body.records;
  const page2 = (await get('/api/usage?from=2026-11-20&to=2026-11-21&limit=4&offset=4')).body.records;
  expect([...page1, ...page2].map((r: any) => r.id)).toEqual(all.records.map((r: any) => r.id));
});

test('the summary per day, path and key adds up to the records it covers', async () => {
  const range = 'from=2026-11-20&to=2026-11-21';
  const { status, body } = await get(`/api/usage/summary?${range}`);
  expect(status).toBe(200);
  expect(body.bucket).toBe('day');
  expect(body.buckets).toEqual([
    { start: '2026-11-20T00:00:00Z', requests: 4, costUsd: 0.008 },
    { start: '2026-11-21T00:00:00Z', requests: 2, costUsd: 0.004 },
  ]);
  expect(body.totals).toEqual({ requests: 6, costUsd: 0.012 });
  expect(body.byPath).toEqual([
    { path: '/api/billing', requests: 5, costUsd: 0.01 },
    { path: '/api/usage', requests: 1, costUsd: 0.002 },
  ]);
  expect(body.byKey.find((k: any) => k.keyId === acct.apiKeyId)).toEqual({ keyId: acct.apiKeyId, keyName: 'test key', requests: 3, costUsd: 0.006 });
  expect(body.byKey.find((k: any) => k.keyName === 'second key')).toMatchObject({ requests: 3, costUsd: 0.006 });
  // By hour, filtered to one key.
  const hourly = (await get(`/api/usage/summary?${range}&bucket=hour&keyId=${acct.apiKeyId}`)).body;
  expect(hourly.buckets).toEqual([{ start: '2026-11-20T10:00:00Z', requests: 3, costUsd: 0.006 }]);
  // Over /trpc, the same.
  const viaTrpc = await trpcClient(t, acct.headers).usage.summary.query({ from: '2026-11-20', to: '2026-11-21' });
  expect(viaTrpc.totals).toEqual(body.totals);
});

test('bad summaries are 400; a session reads its own account only, billed like a key', async () => {
  for (const query of ['bucket=week', 'bucket=hour', 'bucket=hour&from=2026-01-01&to=2026-11-21', 'from=2026-11-22&to=2026-11-20']) {
    const { status, body } = await get(`/api/usage/summary?${query}`);
    expect(`${query} → ${status}`).toBe(`${query} → 400`);
    expect(body.code).toBe('BAD_REQUEST');
  }
  const customer = await signIn(t);
  await fundedAccount(t, { accountId: customer.accountId, usd: 1 });
  const mine = await t.request('/api/usage/summary', { headers: customer.headers });
  expect(mine.status).toBe(200);
  expect(mine.headers.get('x-request-cost-usd')).toBe('0.002');
  // Its own call is the one on the account: billed to it, under no key.
  const summary = await mine.json();
  expect(summary.totals).toEqual({ requests: 1, costUsd: 0.002 });
  expect(summary.byKey).toEqual([{ keyId: null, keyName: null, requests: 1, costUsd: 0.002 }]);
  expect((await get(`/api/usage?keyId=${acct.apiKeyId}`, customer.headers)).body.total).toBe(0);
});
