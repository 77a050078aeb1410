/**
 * 300 concurrent billed requests against a balance worth exactly 100 of them: the conditional
 * debit lets exactly 100 through, never overdraws, and leaves exactly 100 usage rows. On PostgreSQL
 * this runs through a real pool of 10 connections.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { createTestApp, type TestApp } from '../harness/app.ts';
import { engine } from '../harness/databases.ts';
import { fundedAccount } from '../harness/factories.ts';
import { ledger } from '../harness/ledger.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test(`300 concurrent billed requests, balance for 100 (${engine})`, async () => {
  const acct = await fundedAccount(t, { usd: 0.2 }); // 100 × 0.002
  const responses = await Promise.all(Array.from({ length: 300 }, () => t.request('/api/billing', { headers: acct.headers })));
  const statuses = responses.map((r) => r.status);
  expect(statuses.filter((s) => s === 200)).toHaveLength(100);
  expect(statuses.filter((s) => s === 402)).toHaveLength(200);
  const costs = responses.map((r) => r.headers.get('x-request-cost-usd'));
  expect(costs.filter((c) => c === '0.002')).toHaveLength(100);
  expect(costs.filter((c) => c === '0')).toHaveLength(200);
  expect(await ledger(t, acct.accountId)).toEqual({ balance: 0, credited: 200_000, used: 200_000, usageRows: 100 });
});

test('concurrent requests that fail are all refunded exactly', async () => {
  // Failing requests hold a reservation until they fail, so fund all 200 reservations.
  const acct = await fundedAccount(t, { usd: 0.4 });
  const responses = await Promise.all(
    Array.from({ length: 200 }, (_, i) => t.request(i % 2 ? '/api/billing' : '/api/usage?limit=99999', { headers: acct.headers })),
  );
  expect(responses.filter((r) => r.status === 200)).toHaveLength(100);
  expect(responses.filter((r) => r.status === 400)).toHaveLength(100);
  expect(await ledger(t, acct.accountId)).toEqual({ balance: 200_000, credited: 400_000, used: 200_000, usageRows: 100 });
});
