/** Dashboard account operations (docs/decisions.md §3) and the operator CLI doing the same. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { accounts, credits } from '../../db/schema.ts';
import { creditAccount, setAccountRate } from '../../server/accounts/accounts.ts';
import { runCli } from '../../server/commands/cli.ts';
import { createTestApp, DASHBOARD_KEY, json, trpcClient, type TestApp } from '../harness/app.ts';
import { dashboardHeaders, fundedAccount } from '../harness/factories.ts';
import { ledger } from '../harness/ledger.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const post = (accountId: string, path: string, body: unknown, method = 'POST') =>
  t.request(path, {
    method,
    headers: { ...dashboardHeaders(DASHBOARD_KEY, accountId), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** Creates an account the one way HTTP can: with its first key. */
async function openAccount(accountId: string) {
  expect((await post(accountId, '/api/keys', { name: 'first' })).status).toBe(201);
}

describe('credits', () => {
  test('add funds once per reference', async () => {
    await openAccount('fund-1');
    const first = await post('fund-1', '/api/accounts/credits', { amountUsd: 25.5, reference: 'tx-1' });
    expect(first.status).toBe(200);
    expect(await json(first)).toEqual({ accountId: 'fund-1', balanceUsd: 25.5, credited: true });
    const repeat = await post('fund-1', '/api/accounts/credits', { amountUsd: 25.5, reference: 'tx-1' });
    expect(await json(repeat)).toEqual({ accountId: 'fund-1', balanceUsd: 25.5, credited: false });
    const second = await post('fund-1', '/api/accounts/credits', { amountUsd: 0.000001, reference: 'tx-2' });
    expect((await json(second)).balanceUsd).toBe(25.500001);
    expect(await ledger(t, 'fund-1')).toEqual({ balance: 25_500_001, credited: 25_500_001, used: 0, usageRows: 0 });
  });

  test('concurrent credits with one reference credit exactly once', async () => {
    await openAccount('fund-race');
    const results = await Promise.all(Array.from({ length: 20 }, () => post('fund-race', '/api/accounts/credits', { amountUsd: 3, reference: 'same' })));
    const bodies = await Promise.all(results.map((r) => json(r)));
    expect(bodies.filter((b) => b.credited)).toHaveLength(1);
    expect(await ledger(t, 'fund-race')).toMatchObject({ balance: 3_000_000, credited: 3_000_000 });
  });

  test('the same reference in another account is another credit', async () => {
    await openAccount('fund-x');
    await openAccount('fund-y');
    await post('fund-x', '/api/accounts/credits', { amountUsd: 1, reference: 'shared' });
    const other = await post('fund-y', '/api/accounts/credits', { amountUsd: 1, reference: 'shared' });
    expect((await json(other)).credited).toBe(true);
  });

  test('refuses bad amounts and references', async () => {
    await openAccount('fund-bad');
    for (const body of [
      { amountUsd: 0, reference: 'r' },
      { amountUsd: -1, reference: 'r' },
      { amountUsd: 0.0000001, reference: 'r' },
      { amountUsd: '5', reference: 'r' },
      { amountUsd: 1e7, reference: 'r' },
      { amountUsd: 1, reference: '' },
      { amountUsd: 1 },
    ]) {
      const res = await post('fund-bad', '/api/accounts/credits', body);
      expect(res.status).toBe(400);
      expect((await json(res)).code).toBe('BAD_REQUEST');
    }
    expect(await ledger(t, 'fund-bad')).toMatchObject({ balance: 0, credited: 0 });
  });
});

describe('me and rate', () => {
  test('GET /api/accounts/me reports an account created by its first key', async () => {
    await openAccount('fresh-account');
    const res = await t.request('/api/accounts/me', { headers: dashboardHeaders(DASHBOARD_KEY, 'fresh-account') });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ accountId: 'fresh-account', balanceUsd: 0, costPerRequestUsd: 0.002 });
    expect(new Date(body.createdAt).toISOString()).toBe(body.createdAt);
  });

  test('PUT /api/accounts/rate sets the rate; private-company routes will cost ten times it', async () => {
    await openAccount('rated');
    const res = await post('rated', '/api/accounts/rate', { costPerRequestUsd: 0.01 }, 'PUT');
    expect(res.status).toBe(200);
    expect((await json(res)).costPerRequestUsd).toBe(0.01);
    const bad = await post('rated', '/api/accounts/rate', { costPerRequestUsd: -0.01 }, 'PUT');
    expect(bad.status).toBe(400);
  });

  test('over tRPC', async () => {
    const client = trpcClient(t, dashboardHeaders(DASHBOARD_KEY, 'trpc-acct'));
    await client.keys.create.mutate({ name: 'first' });
    expect((await client.accounts.credit.mutate({ amountUsd: 2, reference: 'a' })).balanceUsd).toBe(2);
    expect((await client.accounts.me.query()).balanceUsd).toBe(2);
    expect((await client.accounts.setRate.mutate({ costPerRequestUsd: 0.001 })).costPerRequestUsd).toBe(0.001);
  });
});

describe('only creating a first key creates an account', () => {
  const expectNoAccount = async (res: Response, accountId: string) => {
    expect(res.status).toBe(404);
    const body = await json(res);
    expect(body).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect(body.message).toBe(`No account ${accountId}; creating its first key (POST /api/keys) creates it`);
  };

  test('reads and writes naming an unknown account answer 404 and create nothing', async () => {
    const typo = 'acme-typo';
    const dash = dashboardHeaders(DASHBOARD_KEY, typo);
    await expectNoAccount(await t.request('/api/accounts/me', { headers: dash }), typo);
    await expectNoAccount(await t.request('/api/keys', { headers: dash }), typo);
    await expectNoAccount(await t.request('/api/keys/key_1', { method: 'DELETE', headers: dash }), typo);
    // A credit to a mistyped account used to fund a new account silently.
    await expectNoAccount(await post(typo, '/api/accounts/credits', { amountUsd: 5, reference: 'wire-typo' }), typo);
    await expectNoAccount(await post(typo, '/api/accounts/rate', { costPerRequestUsd: 0.01 }, 'PUT'), typo);
    // Still nothing: no account row, no ledger row.
    await expectNoAccount(await t.request('/api/accounts/me', { headers: dash }), typo);
    expect(await t.database.db.select().from(accounts).where(eq(accounts.id, typo))).toEqual([]);
    expect(await t.database.db.select().from(credits).where(eq(credits.accountId, typo))).toEqual([]);
  });

  test('over tRPC too', async () => {
    const client = trpcClient(t, dashboardHeaders(DASHBOARD_KEY, 'trpc-typo'));
    for (const call of [() => client.accounts.me.query(), () => client.accounts.credit.mutate({ amountUsd: 1, reference: 'r' }), () => client.keys.list.query()]) {
      const error = await call().catch((e) => e);
      expect(error.data.api).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    }
  });

  test('POST /api/keys creates the account with its first key, and only once', async () => {
    const [a, b] = await Promise.all([post('born', '/api/keys', { name: 'one' }), post('born', '/api/keys', { name: 'two' })]);
    expect([a.status, b.status]).toEqual([201, 201]);
    const me = await t.request('/api/accounts/me', { headers: dashboardHeaders(DASHBOARD_KEY, 'born') });
    expect(await json(me)).toMatchObject({ accountId: 'born', balanceUsd: 0 });
    expect((await json(await t.request('/api/keys', { headers: dashboardHeaders(DASHBOARD_KEY, 'born') }))).keys).toHaveLength(2);
  });

  test('the domain verbs refuse an unknown account themselves (no foreign-key error, nothing written)', async () => {
    const db = t.database.db;
    await expect(creditAccount(db, { accountId: 'domain-typo', amountMicros: 1, reference: 'r' })).rejects.toMatchObject({ apiCode: 'NOT_FOUND' });
    await expect(setAccountRate(db, { accountId: 'domain-typo', costPerRequestMicros: 1 })).rejects.toMatchObject({ apiCode: 'NOT_FOUND' });
    expect(await db.select().from(accounts).where(eq(accounts.id, 'domain-typo'))).toEqual([]);
  });

  test('a refused key creation creates no account', async () => {
    expect((await post('never-born', '/api/keys', { name: '' })).status).toBe(400);
    await expectNoAccount(await t.request('/api/accounts/me', { headers: dashboardHeaders(DASHBOARD_KEY, 'never-born') }), 'never-born');
  });
});

describe('operator CLI', () => {
  test('create-key, credit (idempotent), set-rate, show, list-keys, revoke-key', async () => {
    const created = (await runCli(['create-key', '--account', 'cli-acct', '--name', 'ops'], t.services)) as any;
    expect(created.key).toMatch(/^pipo_/);
    expect(await runCli(['credit', '--account', 'cli-acct', '--usd', '1.25', '--reference', 'wire-1'], t.services)).toEqual({
      accountId: 'cli-acct',
      credited: true,
      balanceUsd: 1.25,
    });
    expect(((await runCli(['credit', '--account', 'cli-acct', '--usd', '1.25', '--reference', 'wire-1'], t.services)) as any).credited).toBe(false);
    await runCli(['set-rate', '--account', 'cli-acct', '--usd', '0.001'], t.services);
    expect(await runCli(['show', '--account', 'cli-acct'], t.services)).toMatchObject({ balanceUsd: 1.25, costPerRequestUsd: 0.001 });
    const billed = await t.request('/api/billing', { headers: { 'x-api-key': created.key } });
    expect(billed.headers.get('x-request-cost-usd')).toBe('0.001');
    const listed = (await runCli(['list-keys', '--account', 'cli-acct'], t.services)) as any;
    expect(listed.keys).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toContain(created.key);
    await runCli(['revoke-key', '--account', 'cli-acct', '--key', created.id], t.services);
    expect((await t.request('/api/billing', { headers: { 'x-api-key': created.key } })).status).toBe(401);
  });

  test('usage errors name the flag', async () => {
    await expect(runCli(['credit', '--account', 'cli-acct', '--usd', 'lots', '--reference', 'r'], t.services)).rejects.toThrow('--usd');
    await expect(runCli(['frobnicate', '--account', 'cli-acct'], t.services)).rejects.toThrow('usage');
    await expect(runCli(['show'], t.services)).rejects.toThrow('--account');
  });

  test('an API key never reaches the dashboard routes, even with funds', async () => {
    const acct = await fundedAccount(t);
    const res = await t.request('/api/accounts/me', { headers: { ...acct.headers, 'x-account-id': acct.accountId } });
    expect(res.status).toBe(401);
  });
});
