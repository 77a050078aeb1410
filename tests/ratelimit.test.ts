/**
 * Token-bucket rate limits (decisions §4): per key on key routes, per IP on public routes, headers on
 * every limited response, 429 with Retry-After, and nothing billed for a refused request. With
 * REDIS_URL set, the buckets live in Redis and are shared by app instances.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { decide, MemoryRateLimiter } from '../server/ratelimit/rate-limiter.ts';
import { RedisRateLimiter } from '../server/ratelimit/redis-rate-limiter.ts';
import { createTestApp, json, type TestApp } from './harness/app.ts';
import { fundedAccount } from './harness/factories.ts';
import { ledger } from './harness/ledger.ts';

const redisUrl = process.env.REDIS_URL || undefined;
const apps: TestApp[] = [];
afterAll(async () => {
  for (const app of apps.reverse()) await app.close();
});

async function limitedApp(env: Record<string, string>, shareWith?: TestApp) {
  const app = await createTestApp({ RATE_LIMIT_KEY_RPS: '1', RATE_LIMIT_KEY_BURST: '3', RATE_LIMIT_IP_RPS: '1', RATE_LIMIT_IP_BURST: '2', TRUST_PROXY: 'true', ...env }, shareWith ? { database: shareWith.database } : {});
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
    const limiter = new RedisRateLimiter(redisUrl!, `pipo:test:${Date.now()}:`);
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
    const broken = { take: async () => Promise.reject(new Error('ECONNREFUSED 127.0.0.1:6390')), close: async () => {} };
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
