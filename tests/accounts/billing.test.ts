/** Per-request billing (docs/decisions.md §4): reserve, charge, reverse on error, and the cost header. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createTestApp, DASHBOARD_KEY, json, trpcClient, type TestApp } from '../harness/app.ts';
import { dashboardHeaders, fundedAccount } from '../harness/factories.ts';
import { ledger } from '../harness/ledger.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('pricing', () => {
  test('GET /api/pricing is public, unbilled and exactly the documented body', async () => {
    const res = await t.request('/api/pricing');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-cost-usd')).toBeNull();
    expect(await res.text()).toBe('{"pricing":{"unit":"per 1,000 requests","amountUsd":2,"currency":"USD"},"costPerRequestUsd":0.002}');
  });

  test('follows COST_PER_REQUEST_USD', async () => {
    const other = await createTestApp({ COST_PER_REQUEST_USD: '0.005' }, { database: t.database });
    expect(await json(await other.request('/api/pricing'))).toEqual({
      pricing: { unit: 'per 1,000 requests', amountUsd: 5, currency: 'USD' },
      costPerRequestUsd: 0.005,
    });
    await other.close();
  });
});

describe('a billed request', () => {
  test('costs the standard rate, says so in X-Request-Cost-USD and leaves a usage row', async () => {
    const acct = await fundedAccount(t, { usd: 1 });
    const res = await t.request('/api/billing', { headers: acct.headers });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-cost-usd')).toBe('0.002');
    const body = await json(res);
    // The summary includes the request that asked for it.
    expect(body).toEqual({
      usageCount: 1,
      usageCostUsd: 0.002,
      balanceUsd: 0.998,
      pricing: { unit: 'per 1,000 requests', amountUsd: 2, currency: 'USD' },
      costPerRequestUsd: 0.002,
      depositedUsd: 0,
      pendingDepositsUsd: 0,
    });
    expect(await ledger(t, acct.accountId)).toEqual({ balance: 998_000, credited: 1_000_000, used: 2_000, usageRows: 1 });
  });

  test('that fails validation costs nothing: the reservation and its usage row are reversed', async () => {
    const acct = await fundedAccount(t, { usd: 1 });
    const res = await t.request('/api/usage?limit=0', { headers: acct.headers });
    expect(res.status).toBe(400);
    expect(res.headers.get('x-request-cost-usd')).toBe('0');
    expect(await ledger(t, acct.accountId)).toEqual({ balance: 1_000_000, credited: 1_000_000, used: 0, usageRows: 0 });
  });

  test('with too little balance is 402 INSUFFICIENT_BALANCE, costs nothing and changes nothing', async () => {
    const acct = await fundedAccount(t, { usd: 0.001 });
    const res = await t.request('/api/billing', { headers: acct.headers });
    expect(res.status).toBe(402);
    expect(res.headers.get('x-request-cost-usd')).toBe('0');
    expect(await json(res)).toMatchObject({ code: 'INSUFFICIENT_BALANCE', status: 402 });
    expect(await ledger(t, acct.accountId)).toEqual({ balance: 1_000, credited: 1_000, used: 0, usageRows: 0 });
  });

  test('with a zero balance is 402', async () => {
    const acct = await fundedAccount(t, { usd: 0 });
    const res = await t.request('/api/usage', { headers: acct.headers });
    expect(res.status).toBe(402);
  });

  test('uses the per-account rate once the dashboard sets one', async () => {
    const acct = await fundedAccount(t, { usd: 1 });
    const set = await t.request('/api/accounts/rate', {
      method: 'PUT',
      headers: { ...dashboardHeaders(DASHBOARD_KEY, acct.accountId), 'content-type': 'application/json' },
      body: JSON.stringify({ costPerRequestUsd: 0.0005 }),
    });
    expect(set.status).toBe(200);
    const res = await t.request('/api/billing', { headers: acct.headers });
    expect(res.headers.get('x-request-cost-usd')).toBe('0.0005');
    const body = await json(res);
    expect(body.costPerRequestUsd).toBe(0.0005);
    expect(body.pricing.amountUsd).toBe(0.5);
    expect(body.balanceUsd).toBe(0.9995);
  });

  test('over tRPC is billed the same, and a batch reports the sum of its calls', async () => {
    const acct = await fundedAccount(t, { usd: 1 });
    const client = trpcClient(t, acct.headers);
    const summary = await client.billing.get.query();
    expect(summary.usageCount).toBe(1);
    expect(summary.balanceUsd).toBe(0.998);

    const batch = await t.app.handle(
      new Request('http://localhost/trpc/billing.get,usage.list?batch=1&input=' + encodeURIComponent('{"0":{},"1":{}}'), { headers: acct.headers }),
    );
    expect(batch.status).toBe(200);
    expect(batch.headers.get('x-request-cost-usd')).toBe('0.004');
    const usage = (await json(await t.request('/api/usage', { headers: acct.headers }))).records;
    // The calls of a batch are admitted concurrently (the key was admitted just before): their order is not defined.
    expect(usage[0].path).toBe('/api/usage');
    expect(usage.slice(1).map((r: any) => r.path).sort()).toEqual(['/trpc/billing.get', '/trpc/billing.get', '/trpc/usage.list']);
    expect(await ledger(t, acct.accountId)).toMatchObject({ balance: 1_000_000 - 4 * 2_000, used: 4 * 2_000 });
  });

  test('the balance always equals credits minus usage', async () => {
    const acct = await fundedAccount(t, { usd: 0.05 });
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const path = i % 3 === 0 ? '/api/usage?limit=-1' : '/api/billing';
      statuses.push((await t.request(path, { headers: acct.headers })).status);
      const l = await ledger(t, acct.accountId);
      expect(l.balance).toBe(l.credited - l.used);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.filter((s) => s === 400)).toHaveLength(10);
  });
});
