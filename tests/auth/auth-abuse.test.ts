/**
 * Denial of service before authentication:
 *  - a key is looked up at most once per HTTP request: a tRPC batch of N calls with an unknown key
 *    costs one lookup, not N (counted with the database's query observer);
 *  - failed authentications are limited per client IP: once an address's bucket is empty, its
 *    requests presenting a key are answered 429 with Retry-After before any lookup.
 * Both limiters: in-process, and Redis (shared by instances) when REDIS_URL is set.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { openDatabase } from '../../db/client.ts';
import { MAX_BATCH_CALLS } from '../../server/lib/input-limits.ts';
import { RedisRateLimiter } from '../../server/platform/ratelimit/redis-rate-limiter.ts';
import { createTestApp, DASHBOARD_KEY, json, type TestApp } from '../harness/app.ts';
import { freshDatabase } from '../harness/databases.ts';
import { dashboardHeaders, fundedAccount } from '../harness/factories.ts';
import { ledger } from '../harness/ledger.ts';

const redisUrl = process.env.REDIS_URL || undefined;
const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

/** An app whose database reports every statement; `keyLookups()` counts those reading api_keys. */
async function observedApp(env: Record<string, string> = {}, shareWith?: ObservedApp): Promise<ObservedApp> {
  const statements: string[] = [];
  const onQuery = (query: string) => void statements.push(query);
  const base = shareWith?.base ?? (await freshDatabase());
  const observed = base.url
    ? await openDatabase({ kind: 'postgres', url: base.url, poolSize: 4, onQuery })
    : await openDatabase({ kind: 'pglite', client: (base.db as unknown as { $client: never }).$client, onQuery });
  // Exact counts need every Redis call answered: a deadline far above the default 50 ms keeps a busy
  // machine from failing a call open (tests/platform/redis-outage.test.ts covers the deadline itself).
  const rateLimiter = env.REDIS_URL ? new RedisRateLimiter(env.REDIS_URL, { timeoutMs: 1_000 }) : undefined;
  const app = await createTestApp(env, { database: observed, rateLimiter });
  closers.push(async () => {
    await app.close();
    // PGlite: `observed` is another view of the same client, closed once with `base`.
    if (base.url) await observed.close();
    if (!shareWith) await base.close();
  });
  return { app, base, keyLookups: () => statements.filter((q) => q.includes('api_keys')).length };
}
interface ObservedApp {
  app: TestApp;
  base: Awaited<ReturnType<typeof freshDatabase>>;
  keyLookups: () => number;
}

/** A well-formed key nobody was ever issued (a fresh one per call, as a key-guessing client sends). */
const randomKey = () => 'pipo_' + Array.from({ length: 44 }, () => '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'[Math.floor(Math.random() * 58)]).join('');
/** A client address of our own per test, so runs sharing one Redis never meet each other's buckets. */
const randomIp = () => `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;

function batchOf(procedure: string, calls: number): string {
  const input = Object.fromEntries(Array.from({ length: calls }, (_, i) => [i, {}]));
  return `/trpc/${Array(calls).fill(procedure).join(',')}?batch=1&input=${encodeURIComponent(JSON.stringify(input))}`;
}

describe('one key lookup per HTTP request', () => {
  test(`a tRPC batch of ${MAX_BATCH_CALLS} calls with an unknown key costs one lookup, and every call is 401`, async () => {
    const { app, keyLookups } = await observedApp();
    const before = keyLookups();
    const res = await app.request(batchOf('billing.get', MAX_BATCH_CALLS), { headers: { 'x-api-key': randomKey() } });
    const results = (await json(res)) as any[];
    expect(results).toHaveLength(MAX_BATCH_CALLS);
    for (const result of results) expect(result.error.data.api).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    expect(keyLookups() - before).toBe(1);
    // The same for a revoked key, and on a user route whose x-user-id is missing (the 400 looks the key up first).
    const acct = await fundedAccount(app);
    await app.request(`/api/keys/${acct.apiKeyId}`, { method: 'DELETE', headers: dashboardHeaders(DASHBOARD_KEY, acct.accountId) });
    const revokedBefore = keyLookups();
    const revoked = (await json(await app.request(batchOf('billing.get', MAX_BATCH_CALLS), { headers: acct.headers }))) as any[];
    expect(revoked.every((r) => r.error.data.api.message.includes('revoked'))).toBe(true);
    expect(keyLookups() - revokedBefore).toBe(1);
    const userBefore = keyLookups();
    const user = (await json(await app.request(batchOf('positions.list', MAX_BATCH_CALLS), { headers: { 'x-api-key': randomKey() } }))) as any[];
    expect(user.every((r) => r.error.data.api.code === 'UNAUTHORIZED')).toBe(true);
    expect(keyLookups() - userBefore).toBe(1);
  });

  test('a batch with a valid key still runs and bills every call', async () => {
    const { app } = await observedApp();
    const acct = await fundedAccount(app);
    const res = await app.request(batchOf('billing.get', MAX_BATCH_CALLS), { headers: acct.headers });
    const results = (await json(res)) as any[];
    expect(results.filter((r) => r.result)).toHaveLength(MAX_BATCH_CALLS);
    expect(res.headers.get('x-request-cost-usd')).toBe(String((2 * MAX_BATCH_CALLS) / 1000));
    expect(await ledger(app, acct.accountId)).toMatchObject({ usageRows: MAX_BATCH_CALLS });
  });
});

const limiters = [['memory', undefined], ['redis', redisUrl]] as const;

describe.each(limiters)('failed authentications per client IP, %s limiter', (kind, url) => {
  const run = kind === 'memory' || url !== undefined;
  const env: Record<string, string> = {
    RATE_LIMIT_AUTH_FAILURE_RPS: '0.01',
    RATE_LIMIT_AUTH_FAILURE_BURST: '3',
    ...(url ? { REDIS_URL: url } : {}),
  };
  let observed: ObservedApp;
  const app = () => observed.app;
  const from = (clientIp: string, headers: Record<string, string> = {}, path = '/api/billing') => app().request(path, { headers, clientIp });

  test.if(run)('after the burst of bad keys an address gets 429 with Retry-After, without a lookup', async () => {
    observed = await observedApp(env);
    const ip = randomIp();
    for (let i = 0; i < 3; i++) expect((await from(ip, { 'x-api-key': randomKey() })).status).toBe(401);
    const lookups = observed.keyLookups();
    const refused = await from(ip, { 'x-api-key': randomKey() });
    expect(refused.status).toBe(429);
    expect(await json(refused)).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    expect(refused.headers.get('retry-after')).toBe('100'); // one token at 0.01 per second
    expect(refused.headers.get('x-request-cost-usd')).toBe('0');
    // Another 50 random keys: not one lookup.
    for (let i = 0; i < 50; i++) expect((await from(ip, { 'x-api-key': randomKey() })).status).toBe(429);
    expect(observed.keyLookups()).toBe(lookups);
    // Over tRPC too.
    const trpc = await app().request('/trpc/billing.get', { headers: { 'x-api-key': randomKey() }, clientIp: ip });
    expect(trpc.status).toBe(429);
    expect((await json(trpc)).error.data.api.code).toBe('RATE_LIMITED');
  });

  test.if(run)('a valid key not seen recently is refused from a blocked address (only a lookup could tell); a key admitted recently is not, nor are other addresses', async () => {
    const acct = await fundedAccount(app());
    const ip = randomIp();
    for (let i = 0; i < 3; i++) await from(ip, { 'x-api-key': randomKey() });
    expect((await from(ip, acct.headers)).status).toBe(429);
    expect((await from(randomIp(), acct.headers)).status).toBe(200);
    // Admitted now, the key keeps working from the blocked address (a bad client on a shared address
    // must not lock out the keys in use there), while bad keys from it are still refused unlooked.
    expect((await from(ip, acct.headers)).status).toBe(200);
    expect((await from(ip, { 'x-api-key': randomKey() })).status).toBe(429);
    // Revoked, it is forgotten: the gate applies to it again.
    await app().request(`/api/keys/${acct.apiKeyId}`, { method: 'DELETE', headers: dashboardHeaders(DASHBOARD_KEY, acct.accountId) });
    expect((await from(randomIp(), acct.headers)).status).toBe(401);
    expect((await from(ip, acct.headers)).status).toBe(429);
    // Public routes present no key and are not affected.
    expect((await from(ip, {}, '/api/pricing')).status).toBe(200);
  });

  test.if(run)('malformed keys, dashboard keys on key routes and API keys on dashboard routes count; a missing key does not', async () => {
    const acct = await fundedAccount(app());
    const cases: Array<[Record<string, string>, string]> = [
      [{ 'x-api-key': 'not-a-key' }, '/api/billing'],
      [{ 'x-api-key': DASHBOARD_KEY }, '/api/billing'],
      [{ 'x-api-key': acct.apiKey, 'x-account-id': acct.accountId }, '/api/keys'],
      [{ 'x-api-key': 'dash_wrong_0123456789abcdef0123456789abcdef', 'x-account-id': acct.accountId }, '/api/keys'],
    ];
    for (const [headers, path] of cases) {
      const ip = randomIp();
      for (let i = 0; i < 5; i++) expect((await from(ip, {}, '/api/billing')).status).toBe(401); // no key: not counted
      for (let i = 0; i < 3; i++) expect(`${path} ${(await from(ip, headers, path)).status}`).toBe(`${path} 401`);
      expect(`${path} ${(await from(ip, headers, path)).status}`).toBe(`${path} 429`);
      // The right dashboard key is checked in memory, so it still passes from this address.
      expect((await from(ip, dashboardHeaders(DASHBOARD_KEY, acct.accountId), '/api/keys')).status).toBe(200);
    }
  });

  test.if(run)('a batch with a bad key is one failed authentication, not one per call', async () => {
    const ip = randomIp();
    const batch = await app().request(batchOf('billing.get', MAX_BATCH_CALLS), { headers: { 'x-api-key': randomKey() }, clientIp: ip });
    expect(((await json(batch)) as any[]).every((r) => r.error.data.api.code === 'UNAUTHORIZED')).toBe(true);
    expect((await from(ip, { 'x-api-key': randomKey() })).status).toBe(401);
    expect((await from(ip, { 'x-api-key': randomKey() })).status).toBe(401);
    expect((await from(ip, { 'x-api-key': randomKey() })).status).toBe(429);
  });

  test.if(url !== undefined)('instances sharing Redis share the count', async () => {
    const second = await observedApp(env, observed);
    const ip = randomIp();
    for (let i = 0; i < 3; i++) await from(ip, { 'x-api-key': randomKey() });
    const lookups = second.keyLookups();
    expect((await second.app.request('/api/billing', { headers: { 'x-api-key': randomKey() }, clientIp: ip })).status).toBe(429);
    expect(second.keyLookups()).toBe(lookups);
  });
});
