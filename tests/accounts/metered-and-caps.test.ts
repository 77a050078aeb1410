/**
 * Metered plans and key spend caps, through the real HTTP surface: a
 * metered account is never refused for balance, every request is priced and recorded as before (its
 * usage rows billed to the meter), and it is refused (402) only above its monthly cap; a key with a
 * spend cap answers 402 naming its cap while the account's other keys keep working. Both caps hold
 * exactly under 300 concurrent requests, and a failed request's refund gives its spend back.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { usageRecords } from '../../db/schema.ts';
import { runCli } from '../../server/commands/cli.ts';
import { createTestApp, DASHBOARD_KEY, trpcClient, type TestApp } from '../harness/app.ts';
import { engine } from '../harness/databases.ts';
import { dashboardHeaders, fundedAccount } from '../harness/factories.ts';
import { ledger } from '../harness/ledger.ts';
import { StripeStandin } from '../harness/stripe-standin.ts';
import { exportMeteredUsage } from '../../server/billing/meter-export.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const COST = 2_000; // micro-USD per standard request (COST_PER_REQUEST_USD 0.002)
const dash = (accountId: string) => ({ ...dashboardHeaders(DASHBOARD_KEY, accountId), 'content-type': 'application/json' });
const setPlan = (accountId: string, body: Record<string, unknown>) => t.request('/api/accounts/billing-plan', { method: 'PUT', headers: dash(accountId), body: JSON.stringify(body) });
const burst = (n: number, headers: Record<string, string>) => Promise.all(Array.from({ length: n }, () => t.request('/api/billing', { headers })));
const statuses = (responses: Response[]) => responses.map((r) => r.status);
const count = (list: number[], status: number) => list.filter((s) => s === status).length;

describe('the metered plan', () => {
  test('never refused for balance; every request priced and recorded, billed to the meter; back to prepaid, the balance pays again', async () => {
    const acct = await fundedAccount(t, { usd: 0 });
    expect((await t.request('/api/billing', { headers: acct.headers })).status).toBe(402);
    const set = await setPlan(acct.accountId, { plan: 'metered', stripeCustomerId: 'cus_Test123' });
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({ billingPlan: 'metered', stripeCustomerId: 'cus_Test123', monthlyCapUsd: null, meteredThisMonthUsd: 0 });
    const answers = await burst(10, acct.headers);
    expect(statuses(answers)).toEqual(Array(10).fill(200));
    expect(answers.every((r) => r.headers.get('x-request-cost-usd') === '0.002')).toBe(true);
    const rows = await t.database.db.select().from(usageRecords).where(eq(usageRecords.accountId, acct.accountId));
    expect(rows).toHaveLength(10);
    expect(rows.every((r) => r.billedTo === 'meter' && r.costMicros === COST)).toBe(true);
    const me = await (await t.request('/api/accounts/me', { headers: dash(acct.accountId) })).json();
    expect(me).toMatchObject({ balanceUsd: 0, billingPlan: 'metered', meteredThisMonthUsd: 0.02 });
    // A failed request is refunded: nothing counted against the month.
    expect((await t.request('/api/private-companies/2147483000', { headers: acct.headers })).status).toBe(404);
    expect((await (await t.request('/api/accounts/me', { headers: dash(acct.accountId) })).json()).meteredThisMonthUsd).toBe(0.02);

    expect((await setPlan(acct.accountId, { plan: 'prepaid' })).status).toBe(200);
    expect((await t.request('/api/billing', { headers: acct.headers })).status).toBe(402);
  });

  test(`the monthly cap holds exactly under 300 concurrent requests (${engine})`, async () => {
    const acct = await fundedAccount(t, { usd: 0 });
    expect((await setPlan(acct.accountId, { plan: 'metered', stripeCustomerId: 'cus_Cap', monthlyCapUsd: 0.2 })).status).toBe(200); // 100 requests
    const answers = await burst(300, acct.headers);
    expect(count(statuses(answers), 200)).toBe(100);
    expect(count(statuses(answers), 402)).toBe(200);
    const refused = await answers.find((r) => r.status === 402)!.json();
    expect(refused).toMatchObject({ code: 'INSUFFICIENT_BALANCE', message: expect.stringContaining('monthly cap of $0.2') });
    const rows = await t.database.db.select().from(usageRecords).where(eq(usageRecords.accountId, acct.accountId));
    expect(rows).toHaveLength(100);
    expect((await (await t.request('/api/accounts/me', { headers: dash(acct.accountId) })).json()).meteredThisMonthUsd).toBe(0.2);
  });

  test('the plan is the operator\'s: a metered plan needs a Stripe customer; a prepaid one takes no cap; over /trpc and the CLI too', async () => {
    const acct = await fundedAccount(t, { usd: 1 });
    for (const body of [{ plan: 'metered' }, { plan: 'metered', stripeCustomerId: 'acct_1' }, { plan: 'prepaid', monthlyCapUsd: 5 }, { plan: 'free' }, { plan: 'metered', stripeCustomerId: 'cus_X', monthlyCapUsd: -1 }]) {
      const res = await setPlan(acct.accountId, body);
      expect(`${JSON.stringify(body)} → ${res.status}`).toBe(`${JSON.stringify(body)} → 400`);
    }
    expect((await t.request('/api/accounts/billing-plan', { method: 'PUT', headers: { ...acct.headers, 'content-type': 'application/json' }, body: JSON.stringify({ plan: 'prepaid' }) })).status).toBe(401);
    const ops = trpcClient(t, dashboardHeaders(DASHBOARD_KEY, acct.accountId));
    expect(await ops.accounts.setBillingPlan.mutate({ plan: 'metered', stripeCustomerId: 'cus_Trpc', monthlyCapUsd: 50 })).toMatchObject({ billingPlan: 'metered', monthlyCapUsd: 50 });
    // Back to prepaid: the Stripe customer stays (usage metered before the switch is still exported to it).
    expect(await runCli(['set-plan', '--account', acct.accountId, '--plan', 'prepaid'], t.services)).toMatchObject({ billingPlan: 'prepaid', stripeCustomerId: 'cus_Trpc', monthlyCapUsd: null });
    await expect(runCli(['set-plan', '--account', acct.accountId, '--plan', 'metered'], t.services)).rejects.toThrow('--stripe-customer');
  });
  test('real metered requests under load reach Stripe: one export pass sends exactly what the usage rows of the account cost, per minute', async () => {
    const standin = StripeStandin.start({ secretKey: 'sk_test_e2e' });
    const exporter = await createTestApp({ STRIPE_SECRET_KEY: 'sk_test_e2e', STRIPE_API_BASE: standin.url, METER_EXPORT_INTERVAL_MS: '0' }, { database: t.database });
    try {
      const acct = await fundedAccount(t, { usd: 0 });
      await setPlan(acct.accountId, { plan: 'metered', stripeCustomerId: 'cus_E2e' });
      // Under load: 200 concurrent requests.
      expect(statuses(await burst(200, acct.headers))).toEqual(Array(200).fill(200));
      expect((await t.request('/api/private-companies/2147483000', { headers: acct.headers })).status).toBe(404); // refunded: not exported
      const rows = await t.database.db.select().from(usageRecords).where(eq(usageRecords.accountId, acct.accountId));
      // Every minute these rows fall in has closed (and its grace passed) two minutes from now.
      const summary = await exportMeteredUsage(exporter.services, { now: () => new Date(Date.now() + 120_000) });
      expect(summary.failures.filter((f) => f.accountId === acct.accountId)).toEqual([]);
      const sent = standin.events.filter((e) => e.customer === 'cus_E2e');
      expect(sent.reduce((sum, e) => sum + e.value, 0)).toBe(rows.reduce((sum, r) => sum + r.costMicros, 0));
      expect(sent.reduce((sum, e) => sum + e.value, 0)).toBe(200 * COST);
      expect(new Set(sent.map((e) => e.identifier)).size).toBe(sent.length);
    } finally {
      await exporter.close();
      standin.stop();
    }
  });
});

describe('key spend caps', () => {
  const createKey = (accountId: string, body: Record<string, unknown>) => t.request('/api/keys', { method: 'POST', headers: dash(accountId), body: JSON.stringify(body) });

  test(`a capped key stops at its cap, exactly, under 300 concurrent requests (${engine}); the account's other keys keep working`, async () => {
    const acct = await fundedAccount(t, { usd: 10 });
    const created = await createKey(acct.accountId, { name: 'capped', spendCapUsd: 0.1, capPeriod: 'day' }); // 50 requests
    expect(created.status).toBe(201);
    const capped = await created.json();
    expect(capped).toMatchObject({ spendCapUsd: 0.1, capPeriod: 'day' });
    const answers = await burst(300, { 'x-api-key': capped.key });
    expect(count(statuses(answers), 200)).toBe(50);
    expect(count(statuses(answers), 402)).toBe(250);
    expect(await answers.find((r) => r.status === 402)!.json()).toMatchObject({ code: 'INSUFFICIENT_BALANCE', message: expect.stringContaining('spend cap of $0.1 per day') });
    expect(answers.filter((r) => r.status === 402).every((r) => r.headers.get('x-request-cost-usd') === '0')).toBe(true);
    // The uncapped key of the same account is unaffected.
    expect((await t.request('/api/billing', { headers: acct.headers })).status).toBe(200);
    expect(await ledger(t, acct.accountId)).toEqual({ balance: 10_000_000 - 51 * COST, credited: 10_000_000, used: 51 * COST, usageRows: 51 });
    const listed = await (await t.request('/api/keys', { headers: dash(acct.accountId) })).json();
    expect(listed.keys.find((k: any) => k.id === capped.id)).toMatchObject({ spendCapUsd: 0.1, capPeriod: 'day', spentThisPeriodUsd: 0.1 });
    expect(listed.keys.find((k: any) => k.id === acct.apiKeyId)).toMatchObject({ spendCapUsd: null, capPeriod: null, spentThisPeriodUsd: null });
  });

  test('a failed request gives its spend back to the key; a capped key on a metered account counts both caps; bad caps are 400', async () => {
    const acct = await fundedAccount(t, { usd: 10 });
    const capped = await (await createKey(acct.accountId, { name: 'monthly', spendCapUsd: 0.02 })).json(); // 1 premium or 10 standard
    expect(capped.capPeriod).toBe('month');
    expect((await t.request('/api/private-companies/2147483000', { headers: { 'x-api-key': capped.key } })).status).toBe(404);
    let listed = await (await t.request('/api/keys', { headers: dash(acct.accountId) })).json();
    expect(listed.keys.find((k: any) => k.id === capped.id).spentThisPeriodUsd).toBe(0);
    expect(statuses(await burst(11, { 'x-api-key': capped.key })).sort()).toEqual([...Array(10).fill(200), 402]);

    const metered = await fundedAccount(t, { usd: 0 });
    await setPlan(metered.accountId, { plan: 'metered', stripeCustomerId: 'cus_Both', monthlyCapUsd: 0.01 }); // 5 requests
    const key = await (await createKey(metered.accountId, { name: 'k', spendCapUsd: 1 })).json();
    const answers = await burst(20, { 'x-api-key': key.key });
    expect(count(statuses(answers), 200)).toBe(5);
    expect(await answers.find((r) => r.status === 402)!.json()).toMatchObject({ message: expect.stringContaining('monthly cap') });
    listed = await (await t.request('/api/keys', { headers: dash(metered.accountId) })).json();
    expect(listed.keys.find((k: any) => k.id === key.id).spentThisPeriodUsd).toBe(0.01);

    for (const body of [{ name: 'x', capPeriod: 'day' }, { name: 'x', spendCapUsd: 0 }, { name: 'x', spendCapUsd: 1, capPeriod: 'week' }, { name: 'x', spendCapUsd: 'lots' }]) {
      const res = await createKey(acct.accountId, body);
      expect(`${JSON.stringify(body)} → ${res.status}`).toBe(`${JSON.stringify(body)} → 400`);
    }
  });
});
