/**
 * Two app instances on one database (on PostgreSQL each has its own connection pool, as two servers
 * would): a key revoked through one is refused by the other on its very next request.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { openDatabase } from '../../db/client.ts';
import { createTestApp, DASHBOARD_KEY, json, type TestApp } from '../harness/app.ts';
import { engine } from '../harness/databases.ts';
import { dashboardHeaders, fundedAccount } from '../harness/factories.ts';

let first: TestApp;
let second: TestApp;
let closeSecondDb = async () => {};
beforeAll(async () => {
  first = await createTestApp();
  if (first.database.url) {
    const db = await openDatabase({ kind: 'postgres', url: first.database.url, poolSize: 5 });
    closeSecondDb = () => db.close();
    second = await createTestApp({}, { database: db });
  } else {
    second = await createTestApp({}, { database: first.database });
  }
});
afterAll(async () => {
  await second.close();
  await closeSecondDb();
  await first.close();
});

test(`revocation on one instance is seen by the other on its next request (${engine})`, async () => {
  const acct = await fundedAccount(first);
  // Warm both instances with the key.
  expect((await first.request('/api/billing', { headers: acct.headers })).status).toBe(200);
  expect((await second.request('/api/billing', { headers: acct.headers })).status).toBe(200);
  const revoke = await first.request(`/api/keys/${acct.apiKeyId}`, { method: 'DELETE', headers: dashboardHeaders(DASHBOARD_KEY, acct.accountId) });
  expect(revoke.status).toBe(200);
  const refused = await second.request('/api/billing', { headers: acct.headers });
  expect(refused.status).toBe(401);
  expect((await json(refused)).code).toBe('UNAUTHORIZED');
});

test('both instances draw on one balance without overdrawing it', async () => {
  const acct = await fundedAccount(first, { usd: 0.1 }); // 50 requests
  const responses = await Promise.all(
    Array.from({ length: 120 }, (_, i) => (i % 2 ? first : second).request('/api/billing', { headers: acct.headers })),
  );
  expect(responses.filter((r) => r.status === 200)).toHaveLength(50);
  expect(responses.filter((r) => r.status === 402)).toHaveLength(70);
});
