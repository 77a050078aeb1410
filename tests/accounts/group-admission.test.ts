/**
 * Group admission (server/accounts/admission-queue.ts): billed requests that arrive together are
 * admitted by one statement, and every promise billing made per request still holds per request —
 * exact balances under concurrency on several instances and several accounts at once (no deadlock
 * between batches that share accounts), each request's own answer in a batch that mixes keys,
 * sessions, unknown, revoked and capped keys and metered accounts, and the dataset version read with
 * the admission.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { openDatabase } from '../../db/client.ts';
import { accounts, apiKeys, companies, usageRecords } from '../../db/schema.ts';
import { bumpDatasetVersion, datasetVersion } from '../../server/companies/aggregate-cache.ts';
import { createTestApp, DASHBOARD_KEY, json, type TestApp } from '../harness/app.ts';
import { engine } from '../harness/databases.ts';
import { dashboardHeaders, fundedAccount, type FundedAccount } from '../harness/factories.ts';
import { ledger } from '../harness/ledger.ts';
import { signIn } from '../harness/sign-in.ts';

let first: TestApp;
/** Three instances on one database: on PostgreSQL each with its own pool (and its own admission queue), as three servers. */
let instances: TestApp[];
const closers: Array<() => Promise<void>> = [];
beforeAll(async () => {
  first = await createTestApp();
  instances = [first];
  for (let i = 0; i < 2; i++) {
    if (first.database.url) {
      const db = await openDatabase({ kind: 'postgres', url: first.database.url, poolSize: 5 });
      closers.push(() => db.close());
      instances.push(await createTestApp({}, { database: db }));
    } else {
      instances.push(await createTestApp({}, { database: first.database }));
    }
  }
});
afterAll(async () => {
  for (const app of instances.slice(1)) await app.close();
  for (const close of closers) await close();
  await first.close();
});

/** The batch-size histogram's observations on `app` so far: statements and the requests they admitted. */
async function batches(app: TestApp): Promise<{ statements: number; requests: number }> {
  // The admission counts into the metrics of the last services built on its database: on PGlite the
  // instances share one database, so the last instance's.
  const bound = app.database.url ? app : instances.at(-1)!;
  const metrics = await bound.services.metrics.registry.getSingleMetric('preipo_billing_admission_batch_size')!.get();
  const value = (suffix: string) => (metrics.values as Array<{ metricName?: string; value: number }>).find((v) => v.metricName === `preipo_billing_admission_batch_size${suffix}`)?.value ?? 0;
  return { statements: value('_count'), requests: value('_sum') };
}

describe('batches', () => {
  test(`200 concurrent billed requests take far fewer statements (${engine})`, async () => {
    const acct = await fundedAccount(first);
    const before = await batches(first);
    const responses = await Promise.all(Array.from({ length: 200 }, () => first.request('/api/billing', { headers: acct.headers })));
    expect(responses.every((r) => r.status === 200)).toBe(true);
    const after = await batches(first);
    expect(after.requests - before.requests).toBe(200);
    expect(after.statements - before.statements).toBeLessThan(100);
    expect(await ledger(first, acct.accountId)).toMatchObject({ used: 200 * 2_000, usageRows: 200 });
  });

  test('a lone request is admitted at once, in a batch of its own', async () => {
    const acct = await fundedAccount(first);
    const before = await batches(first);
    expect((await first.request('/api/billing', { headers: acct.headers })).status).toBe(200);
    const after = await batches(first);
    expect([after.statements - before.statements, after.requests - before.requests]).toEqual([1, 1]);
  });
});

describe('several instances, several accounts', () => {
  test(`3 instances × 8 accounts, each funded for exactly 40 of 100 concurrent requests: 40 each, exact books, no error (${engine})`, async () => {
    const accts: FundedAccount[] = [];
    for (let i = 0; i < 8; i++) accts.push(await fundedAccount(first, { usd: 40 * 0.002 }));
    // Every instance's batches hold all eight accounts, in every order: batches that share accounts
    // must wait for each other, never deadlock.
    const calls = accts.flatMap((acct, a) => Array.from({ length: 100 }, (_, i) => ({ acct, app: instances[(i + a) % instances.length]! })));
    calls.sort(() => Math.random() - 0.5);
    const responses = await Promise.all(calls.map(({ acct, app }) => app.request('/api/billing', { headers: acct.headers }).then((r) => ({ acct, status: r.status }))));
    expect(responses.filter((r) => r.status !== 200 && r.status !== 402)).toEqual([]);
    for (const acct of accts) {
      expect(responses.filter((r) => r.acct === acct && r.status === 200)).toHaveLength(40);
      expect(await ledger(first, acct.accountId)).toEqual({ balance: 0, credited: 80_000, used: 80_000, usageRows: 40 });
    }
  }, 60_000);

  test('the monthly cap of a metered account holds across instances', async () => {
    const acct = await fundedAccount(first, { usd: 0 });
    await first.database.db.update(accounts).set({ billingPlan: 'metered', monthlyCapMicros: 30 * 2_000, stripeCustomerId: 'cus_group' }).where(eq(accounts.id, acct.accountId));
    const responses = await Promise.all(Array.from({ length: 90 }, (_, i) => instances[i % 3]!.request('/api/billing', { headers: acct.headers })));
    expect(responses.filter((r) => r.status === 200)).toHaveLength(30);
    expect(responses.filter((r) => r.status === 402)).toHaveLength(60);
    const [row] = await first.database.db.select({ spent: accounts.meteredSpentMicros, balance: accounts.balanceMicros }).from(accounts).where(eq(accounts.id, acct.accountId));
    expect(row).toEqual({ spent: 60_000, balance: 0 });
  }, 60_000);
});

describe('one batch, each request its own answer', () => {
  test('keys, a session, an unknown key, a revoked key, a capped key and an empty account, all at once', async () => {
    const rich = await fundedAccount(first);
    const poor = await fundedAccount(first, { usd: 0.004 }); // two requests
    const revoked = await fundedAccount(first);
    await first.database.db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, revoked.apiKeyId));
    const capped = await fundedAccount(first);
    await first.database.db.update(apiKeys).set({ spendCapMicros: 3 * 2_000, capPeriod: 'day' }).where(eq(apiKeys.id, capped.apiKeyId));
    const session = await signIn(first);
    await first.request('/api/accounts/credits', {
      method: 'POST',
      headers: { ...dashboardHeaders(DASHBOARD_KEY, session.accountId), 'content-type': 'application/json' },
      body: JSON.stringify({ amountUsd: 1, reference: `group-session-${session.accountId}` }),
    });
    const unknown = { 'x-api-key': `pipo_${'x'.repeat(40)}` };
    const calls = [
      ...Array.from({ length: 10 }, () => ({ kind: 'rich', headers: rich.headers })),
      ...Array.from({ length: 6 }, () => ({ kind: 'poor', headers: poor.headers })),
      ...Array.from({ length: 3 }, () => ({ kind: 'revoked', headers: revoked.headers })),
      ...Array.from({ length: 6 }, () => ({ kind: 'capped', headers: capped.headers })),
      ...Array.from({ length: 4 }, () => ({ kind: 'session', headers: session.headers })),
      ...Array.from({ length: 3 }, () => ({ kind: 'unknown', headers: unknown })),
    ].sort(() => Math.random() - 0.5);
    const answered = await Promise.all(calls.map(async (c) => ({ kind: c.kind, status: (await first.request('/api/billing', { headers: c.headers })).status })));
    const statuses = (kind: string) => answered.filter((a) => a.kind === kind).map((a) => a.status).sort();
    expect(statuses('rich')).toEqual(Array(10).fill(200));
    expect(statuses('poor')).toEqual([200, 200, 402, 402, 402, 402]);
    expect(statuses('revoked')).toEqual([401, 401, 401]);
    expect(statuses('capped')).toEqual([200, 200, 200, 402, 402, 402]);
    expect(statuses('session')).toEqual([200, 200, 200, 200]);
    expect(statuses('unknown')).toEqual([401, 401, 401]);
    for (const acct of [rich, poor, revoked, capped]) {
      const books = await ledger(first, acct.accountId);
      expect(books.balance).toBe(books.credited - books.used);
    }
    expect(await ledger(first, poor.accountId)).toMatchObject({ balance: 0, usageRows: 2 });
    expect(await ledger(first, revoked.accountId)).toMatchObject({ usageRows: 0 });
    // (Not ledger(): its check that every row names a key of the account is for keys' rows.)
    const sessionRows = await first.database.db.select({ keyId: usageRecords.apiKeyId, cost: usageRecords.costMicros }).from(usageRecords).where(eq(usageRecords.accountId, session.accountId));
    expect(sessionRows).toEqual(Array(4).fill({ keyId: null, cost: 2_000 }));
    const [sessionAccount] = await first.database.db.select({ balance: accounts.balanceMicros, count: accounts.usageCount }).from(accounts).where(eq(accounts.id, session.accountId));
    expect(sessionAccount).toEqual({ balance: 1_000_000 - 4 * 2_000, count: 4 });
  });
});

describe('the dataset version comes with the admission', () => {
  test('a company answer kept on one instance is not served after another instance changed the dataset', async () => {
    const acct = await fundedAccount(first, { usd: 5 });
    const [a, b] = [instances[0]!, instances[1]!];
    const read = async (app: TestApp) => json(await app.request('/api/private-companies/source/openai', { headers: acct.headers }));
    const before = await read(a);
    expect((await read(a)).employees).toBe(before.employees); // kept
    // The other instance writes the record (an import would): the version moves in the same transaction.
    const version = await datasetVersion(b.database.db);
    await b.database.db.transaction(async (tx) => {
      await tx.update(companies).set({ employees: (before.employees ?? 0) + 1 }).where(eq(companies.sourceId, 'openai'));
      await bumpDatasetVersion(tx as never);
    });
    expect(await datasetVersion(a.database.db)).toBe(version + 1);
    expect((await read(a)).employees).toBe((before.employees ?? 0) + 1);
  });
});
