/**
 * Test mode beside live mode, on one server whose live venue is Polymarket (the CLOB stand-in): a
 * live key and a test key of one account, for the same trading user, trade side by side. The test
 * key's orders go to the paper venue (filled against the live books); neither key sees the other's
 * positions, orders, history, stream events or webhooks; test calls are free (TEST_COST_PER_REQUEST_USD
 * 0) and never move the live balance or the live venue account; a test key reads no private-company
 * data and can start again (reset), a live key cannot.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { and, count, eq } from 'drizzle-orm';
import { accountEvents, usageRecords } from '../../db/schema.ts';
import { testSideOf } from '../../server/accounts/modes.ts';
import { deliverDue } from '../../server/webhooks/worker.ts';
import { createApiKey } from '../../server/accounts/api-keys.ts';
import { createTestApp, DASHBOARD_KEY, json, type TestApp } from '../harness/app.ts';
import { fundedAccount } from '../harness/factories.ts';
import { dashboardHeaders } from '../harness/factories.ts';
import { api, buy, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp, ledgerOf } from '../harness/trading-venue.ts';
import { startReceiver, type WebhookReceiver } from '../harness/webhook-receiver.ts';

let t: TestApp;
let live: Trader;
/** The same account and trading user, with a test key. */
let sandbox: Trader;
let receiver: WebhookReceiver;
const hooks: Record<'live' | 'test', string> = { live: '', test: '' };

const dash = () => dashboardHeaders(DASHBOARD_KEY, live.account.accountId);
const balanceUsd = async () => (await json(await t.request('/api/accounts/me', { headers: dash() }))).balanceUsd as number;

beforeAll(async () => {
  receiver = startReceiver();
  t = await createTradingApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', MARKET_DATA_TTL_MS: '0' }, { venueKind: 'polymarket' });
  live = await trader(t);
  const created = await t.request('/api/keys', { method: 'POST', headers: { ...dash(), 'content-type': 'application/json' }, body: JSON.stringify({ name: 'sandbox', mode: 'test' }) });
  expect(created.status).toBe(201);
  const key = await json(created);
  expect(key.key).toStartWith('pipo_test_');
  expect(key).toMatchObject({ mode: 'test', allScopes: false });
  expect(key.scopes).not.toContain('data:read');
  const headers = { 'x-api-key': key.key, 'x-user-id': live.userId };
  sandbox = { account: { ...live.account, apiKey: key.key, apiKeyId: key.id, headers: { 'x-api-key': key.key } }, userId: live.userId, credentials: live.credentials, headers };
  // The paper venue takes any credentials.
  expect((await api(t, sandbox, 'POST', '/api/trading/credentials', { apiKey: 'sandbox', secret: 'c2FuZGJveA==', passphrase: 'sandbox' })).res.status).toBe(200);
  for (const [mode, who] of [['live', live], ['test', sandbox]] as const) {
    const res = await api(t, who, 'POST', '/api/webhooks', { url: `${receiver.url}/${mode}`, events: ['order.filled', 'position.opened'] });
    expect(res.res.status).toBe(201);
    hooks[mode] = res.body.id;
  }
});
afterAll(async () => {
  await t.close();
  receiver.stop();
});

describe('a live key and a test key of one account', () => {
  let livePosition: string;
  let testPosition: string;

  test('both buy; the test buy goes to the paper venue and moves neither the live balance nor the live venue account', async () => {
    const ledger = ledgerOf(t);
    const liveBought = await buy(t, live, { eventId: 'openai-ipo', side: 'LONG', amount: 20 });
    expect(liveBought.res.status).toBe(200);
    livePosition = liveBought.body.positionId;
    const liveCollateral = await ledger.collateral(live);
    const balance = await balanceUsd();

    const testBought = await buy(t, sandbox, { eventId: 'openai-ipo', side: 'LONG', amount: 20 });
    expect(testBought.res.status).toBe(200);
    expect(testBought.res.headers.get('x-request-cost-usd')).toBe('0');
    testPosition = testBought.body.positionId;
    // Filled against the live books: the same plan prices both.
    expect(testBought.body.orders.length).toBe(liveBought.body.orders.length);
    expect(await ledger.collateral(live)).toBe(liveCollateral);
    expect(await balanceUsd()).toBe(balance);
    // The paper account paid for it.
    expect((await api(t, sandbox, 'GET', '/api/trading/settings')).body.hasCredentials).toBe(true);
  });

  test('neither sees the other\'s positions, orders or history', async () => {
    for (const [who, mine, theirs] of [[live, livePosition, testPosition], [sandbox, testPosition, livePosition]] as const) {
      const positions = (await api(t, who, 'GET', '/api/trading/positions')).body.positions.map((p: { id: string }) => p.id);
      expect(positions).toEqual([mine]);
      expect((await api(t, who, 'GET', `/api/trading/positions/${theirs}`)).res.status).toBe(404);
      const orders = (await api(t, who, 'GET', '/api/trading/orders')).body.orders;
      expect(orders.length).toBeGreaterThan(0);
      expect(orders.every((o: { positionId: string }) => o.positionId === mine)).toBe(true);
      const history = (await api(t, who, 'GET', '/api/trading/history')).body;
      expect(JSON.stringify(history)).toContain(mine);
      expect(JSON.stringify(history)).not.toContain(theirs);
    }
  });

  test('stream events and webhooks stay in their mode', async () => {
    for (const [who, mine, theirs] of [[live, livePosition, testPosition], [sandbox, testPosition, livePosition]] as const) {
      const caught = (await api(t, who, 'GET', '/api/trading/stream/account?lastEventId=0')).body;
      expect(JSON.stringify(caught.events)).toContain(mine);
      expect(JSON.stringify(caught.events)).not.toContain(theirs);
      const listed = (await api(t, who, 'GET', '/api/webhooks')).body.webhooks.map((w: { id: string }) => w.id);
      expect(listed).toEqual([hooks[who === live ? 'live' : 'test']]);
    }
    const testEvents = await t.database.db.select({ data: accountEvents.data }).from(accountEvents).where(and(eq(accountEvents.accountId, testSideOf(live.account.accountId))));
    expect(JSON.stringify(testEvents)).toContain(testPosition);
    while ((await deliverDue(t.services)).claimed > 0);
    const byPath = (path: string) => receiver.received.filter((r) => r.path.startsWith(`/${path}`)).map((r) => r.body).join('\n');
    expect(byPath('live')).toContain(livePosition);
    expect(byPath('live')).not.toContain(testPosition);
    expect(byPath('test')).toContain(testPosition);
    expect(byPath('test')).not.toContain(livePosition);
  });

  test('usage and billing are the test side\'s own; the key listing shows both modes', async () => {
    const testUsage = (await api(t, sandbox, 'GET', '/api/usage?limit=100')).body;
    const liveUsage = (await api(t, live, 'GET', '/api/usage?limit=100')).body;
    expect(testUsage.records.every((r: { keyId: string }) => r.keyId === sandbox.account.apiKeyId)).toBe(true);
    expect(liveUsage.records.some((r: { keyId: string }) => r.keyId === sandbox.account.apiKeyId)).toBe(false);
    expect((await api(t, sandbox, 'GET', '/api/billing')).body).toMatchObject({ balanceUsd: 0, costPerRequestUsd: 0 });
    const keys = (await json(await t.request('/api/keys', { headers: dash() }))).keys;
    expect(keys.map((k: { mode: string }) => k.mode).sort()).toEqual(['live', 'test']);
    expect(keys.find((k: { mode: string }) => k.mode === 'test').maskedKey).toStartWith('pipo_test_');
    // The test side's balance and usage, for an operator.
    const side = await t.request('/api/accounts/me', { headers: dashboardHeaders(DASHBOARD_KEY, testSideOf(live.account.accountId)) });
    expect(side.status).toBe(200);
  });

  test('a test key reads no private-company data (403 naming data:read, not charged)', async () => {
    const refused = await t.request('/api/private-companies?limit=1', { headers: sandbox.account.headers });
    expect(refused.status).toBe(403);
    expect((await json(refused)).message).toContain('data:read');
    const tried = await t.request('/api/keys', { method: 'POST', headers: { ...dash(), 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x', mode: 'test', scopes: ['data:read'] }) });
    expect(tried.status).toBe(400);
  });

  test('a test key resets its paper account; a live key is refused and keeps everything', async () => {
    const refused = await api(t, live, 'POST', '/api/trading/reset', {});
    expect(refused.res.status).toBe(403);
    const reset = await api(t, sandbox, 'POST', '/api/trading/reset', {});
    expect(reset.res.status).toBe(200);
    expect(reset.body).toMatchObject({ success: true, positionsRemoved: 1, paperBalance: t.config.paper.startingBalanceMicros / 1e6 });
    expect((await api(t, sandbox, 'GET', '/api/trading/positions')).body.positions).toEqual([]);
    expect((await api(t, sandbox, 'GET', '/api/trading/history')).body.total ?? 0).toBe(0);
    expect((await api(t, live, 'GET', '/api/trading/positions')).body.positions.map((p: { id: string }) => p.id)).toEqual([livePosition]);
    // And it trades again from the starting balance.
    const again = await buy(t, sandbox, { eventId: 'openai-ipo', side: 'LONG', amount: 20 });
    expect(`${again.res.status} ${JSON.stringify(again.body)}`).toStartWith('200 ');
  });
});

describe('free test calls are bounded', () => {
  test('the test keys of one account share one budget (429 before any charge); its live key is not limited by it', async () => {
    const limited = await createTestApp({ RATE_LIMIT_TEST_RPS: '0.01', RATE_LIMIT_TEST_BURST: '4' });
    try {
      const account = await fundedAccount(limited, { usd: 1 });
      const keys = await Promise.all([1, 2, 3].map((n) => createApiKey(limited.database.db, { accountId: account.accountId, name: `test ${n}`, mode: 'test' })));
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await limited.request('/api/billing', { headers: { 'x-api-key': keys[i % 3]!.key } })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
      const refused = await limited.request('/api/billing', { headers: { 'x-api-key': keys[0]!.key } });
      expect(refused.headers.get('retry-after')).not.toBeNull();
      expect(refused.headers.get('x-request-cost-usd')).toBe('0');
      // Nothing was written for the refusals: four usage rows on the test side.
      const rows = await limited.database.db.select({ n: count() }).from(usageRecords).where(eq(usageRecords.accountId, testSideOf(account.accountId)));
      expect(rows[0]!.n).toBe(4);
      expect((await limited.request('/api/billing', { headers: account.headers })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
