/**
 * Token-bucket rate limits (docs/decisions.md §4): per key on key routes, per IP on public routes, headers on
 * every limited response, 429 with Retry-After, and nothing billed for a refused request. With
 * REDIS_URL set, the buckets live in Redis and are shared by app instances.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { decide, MemoryRateLimiter } from '../../server/platform/ratelimit/rate-limiter.ts';
import { RedisRateLimiter } from '../../server/platform/ratelimit/redis-rate-limiter.ts';
import { createTestApp, json, type TestApp } from '../harness/app.ts';
import { fundedAccount } from '../harness/factories.ts';
import { ledger } from '../harness/ledger.ts';

const redisUrl = process.env.REDIS_URL || undefined;
const apps: TestApp[] = [];
afterAll(async () => {
  for (const app of apps.reverse()) await app.close();
});

/**
 * Exact counts need every Redis call answered: a deadline far above REDIS_TIMEOUT_MS's 50 ms keeps a
 * busy test machine from failing a call open (tests/platform/redis-outage.test.ts covers the deadline itself).
 */
const patientRedis = (url: string | undefined) => (url ? new RedisRateLimiter(url, { timeoutMs: 1_000 }) : undefined);

async function limitedApp(env: Record<string, string>, shareWith?: TestApp) {
  const app = await createTestApp(
    { RATE_LIMIT_KEY_RPS: '1', RATE_LIMIT_KEY_BURST: '3', RATE_LIMIT_IP_RPS: '1', RATE_LIMIT_IP_BURST: '2', TRUST_PROXY: 'true', ...env },
    { database: shareWith?.database, rateLimiter: patientRedis(env.REDIS_URL) },
  );
  apps.push(app);
  return app;
}

describe('bucket arithmetic', () => {
  test('takes a token while one is left, then refuses with a whole-second Retry-After', () => {
    const rule = { rps: 2, burst: 3 };
    expect(decide(3, rule)).toEqual({ tokens: 2, decision: { allowed: true, limit: 3, remaining: 2, resetSeconds: 1, retryAfterSeconds: 0 } });
    expect(decide(0.5, rule).decision).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    expect(decide(0, { rps: 0.1, burst: 1 }).decision.retryAfterSeconds).toBe(10);
  });

  test('the in-process limiter refills over time', async () => {
    let now = 0;
    const limiter = new MemoryRateLimiter(() => now);
    const rule = { rps: 1, burst: 2 };
    expect((await limiter.take('b', rule)).allowed).toBe(true);
    expect((await limiter.take('b', rule)).allowed).toBe(true);
    expect((await limiter.take('b', rule)).allowed).toBe(false);
    now += 1000;
    expect((await limiter.take('b', rule)).allowed).toBe(true);
    expect((await limiter.take('other', rule)).remaining).toBe(1);
  });

  test('peek tells what a take would get, without taking or creating a bucket', () => {
    let now = 0;
    const limiter = new MemoryRateLimiter(() => now);
    const rule = { rps: 1, burst: 2 };
    expect(limiter.peek('b', rule)).toMatchObject({ allowed: true, remaining: 2 });
    limiter.take('b', rule);
    limiter.take('b', rule);
    expect(limiter.peek('b', rule)).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    expect(limiter.peek('b', rule)).toMatchObject({ allowed: false });
    now += 1000;
    expect(limiter.peek('b', rule)).toMatchObject({ allowed: true, remaining: 1 });
    expect(limiter.take('b', rule)).toMatchObject({ allowed: true, remaining: 0 });
  });

  test('the sweep drops each bucket by its own rule: a fast rule never resets a slow bucket early', () => {
    let now = 0;
    const limiter = new MemoryRateLimiter(() => now);
    const slow = { rps: 0.001, burst: 2 }; // full again 2,000 s after it was emptied
    const fast = { rps: 100, burst: 2 }; // full again within 20 ms
    limiter.take('slow', slow);
    limiter.take('slow', slow);
    expect(limiter.take('slow', slow).allowed).toBe(false);
    // A minute later a request under the fast rule triggers the sweep (it runs at most once a minute).
    now += 61_000;
    limiter.take('fast', fast);
    // The slow bucket has refilled 0.061 tokens: still empty, not reset to full.
    expect(limiter.take('slow', slow)).toMatchObject({ allowed: false, retryAfterSeconds: 939 });
    // Buckets that are full again by their own rule are dropped (same answers as a fresh bucket).
    now += 2_001_000;
    limiter.take('trigger', fast);
    expect(limiter.take('slow', slow)).toMatchObject({ allowed: true, remaining: 1 });
  });
});

describe.each([['memory', undefined], ['redis', redisUrl]] as const)('with the %s limiter', (kind, url) => {
  const run = kind === 'memory' || url !== undefined;
  const env: Record<string, string> = url ? { REDIS_URL: url } : {};

  test.if(run)('a key gets its burst, then 429 RATE_LIMITED with Retry-After, unbilled', async () => {
    const app = await limitedApp(env);
    const acct = await fundedAccount(app);
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 5; i++) {
      last = await app.request('/api/billing', { headers: acct.headers });
      statuses.push(last.status);
      expect(last.headers.get('ratelimit-limit')).toBe('3');
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect(last!.headers.get('retry-after')).toBe('1');
    expect(last!.headers.get('ratelimit-remaining')).toBe('0');
    expect(last!.headers.get('x-request-cost-usd')).toBe('0');
    expect(await json(last!)).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    expect(await ledger(app, acct.accountId)).toMatchObject({ usageRows: 3 });
    // Another key of the same app has its own bucket.
    const other = await fundedAccount(app);
    expect((await app.request('/api/billing', { headers: other.headers })).status).toBe(200);
  });

  test.if(run)('public routes are limited per client IP', async () => {
    const app = await limitedApp(env);
    const from = (ip: string) => app.request('/api/pricing', { headers: { 'x-forwarded-for': ip } });
    const ip = `198.51.100.${Math.floor(Math.random() * 250)}`;
    expect([(await from(ip)).status, (await from(ip)).status, (await from(ip)).status]).toEqual([200, 200, 429]);
    expect((await from('203.0.113.7')).status).toBe(200);
  });

  test.if(run)('refused requests are answered without touching billing, over tRPC too', async () => {
    const app = await limitedApp(env);
    const acct = await fundedAccount(app);
    for (let i = 0; i < 3; i++) await app.request('/trpc/billing.get', { headers: acct.headers });
    const refused = await app.request('/trpc/billing.get', { headers: acct.headers });
    expect(refused.status).toBe(429);
    expect((await json(refused)).error.data.api.code).toBe('RATE_LIMITED');
    expect(refused.headers.get('retry-after')).toBe('1');
  });
});

describe('the client IP behind trusted proxies (TRUST_PROXY, TRUST_PROXY_HOPS)', () => {
  // Per-IP limit of burst 2: the third request from one client is 429, whatever it writes into X-Forwarded-For.
  const thirdStatus = async (app: TestApp, headers: (i: number) => Record<string, string>, clientIp = '192.0.2.10') => {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await app.request('/api/pricing', { headers: headers(i), clientIp })).status);
    return statuses;
  };

  test('one proxy: the entry it appended is the client; a forged entry to its left changes nothing', async () => {
    const app = await limitedApp({});
    // The client sends "X-Forwarded-For: forged-i"; our proxy appends the address it saw.
    expect(await thirdStatus(app, (i) => ({ 'x-forwarded-for': `198.18.0.${i}, 203.0.113.50` }))).toEqual([200, 200, 429]);
    expect((await app.request('/api/pricing', { headers: { 'x-forwarded-for': '203.0.113.51' } })).status).toBe(200);
  });

  test('two proxies: the client is the second entry from the right', async () => {
    const app = await limitedApp({ TRUST_PROXY_HOPS: '2' });
    expect(await thirdStatus(app, (i) => ({ 'x-forwarded-for': `198.18.1.${i}, 203.0.113.60, 10.0.0.1` }))).toEqual([200, 200, 429]);
    // Another client behind the same proxies has its own bucket.
    expect((await app.request('/api/pricing', { headers: { 'x-forwarded-for': '203.0.113.61, 10.0.0.1' } })).status).toBe(200);
    // Fewer entries than hops: the leftmost present.
    expect(await thirdStatus(app, () => ({ 'x-forwarded-for': '203.0.113.62' }))).toEqual([200, 200, 429]);
  });

  test('without TRUST_PROXY the header is ignored and the socket peer is the client', async () => {
    const app = await limitedApp({ TRUST_PROXY: 'false' });
    expect(await thirdStatus(app, (i) => ({ 'x-forwarded-for': `198.18.2.${i}` }), '192.0.2.77')).toEqual([200, 200, 429]);
  });
});

describe('across instances', () => {
  test.if(redisUrl !== undefined)('two app instances sharing Redis share one bucket per key', async () => {
    const first = await limitedApp({ REDIS_URL: redisUrl! });
    const second = await limitedApp({ REDIS_URL: redisUrl! }, first);
    const acct = await fundedAccount(first);
    const statuses = [];
    for (const app of [first, second, first, second]) statuses.push((await app.request('/api/billing', { headers: acct.headers })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  test.if(redisUrl !== undefined)('the Redis limiter recovers when its script cache is flushed', async () => {
    const limiter = new RedisRateLimiter(redisUrl!, { prefix: `pipo:test:${Date.now()}:`, timeoutMs: 1_000 });
    expect((await limiter.take('k', { rps: 1, burst: 1 })).allowed).toBe(true);
    const { RedisClient } = await import('bun');
    const admin = new RedisClient(redisUrl!);
    await admin.send('SCRIPT', ['FLUSH']);
    admin.close();
    expect((await limiter.take('k', { rps: 1, burst: 1 })).allowed).toBe(false);
    await limiter.close();
  });
});

describe('when the limiter store is down', () => {
  test('requests are served unlimited, billed as usual, and the log says why', async () => {
    const lines: string[] = [];
    const down = async () => Promise.reject(new Error('ECONNREFUSED 127.0.0.1:6390'));
    const broken = { take: down, peek: down, close: async () => {} };
    const app = await createTestApp({}, { rateLimiter: broken, logLines: lines });
    apps.push(app);
    const acct = await fundedAccount(app);
    const res = await app.request('/api/billing', { headers: acct.headers });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-cost-usd')).toBe('0.002');
    expect(res.headers.get('ratelimit-limit')).toBeNull();
    expect(lines.some((l) => l.includes('rate limiter unavailable'))).toBe(true);
  });
});
