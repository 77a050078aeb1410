/** The HTTP surface every route shares: error shapes, request ids, CORS, limits, health. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createTestApp, DASHBOARD_KEY, json, type TestApp } from '../harness/app.ts';
import { dashboardHeaders, fundedAccount, type FundedAccount } from '../harness/factories.ts';

let t: TestApp;
let acct: FundedAccount;
beforeAll(async () => {
  t = await createTestApp({ CORS_ORIGINS: 'https://app.example.com,http://localhost:5173', MAX_BODY_BYTES: '2048' });
  acct = await fundedAccount(t);
});
afterAll(() => t.close());

const expectErrorBody = (body: any, status: number, code: string) => {
  expect(Object.keys(body).sort()).toEqual(['code', 'message', 'requestId', 'status']);
  expect(body).toMatchObject({ status, code });
};

describe('errors outside any procedure', () => {
  test('unknown /api route → 404 in our shape', async () => {
    const res = await t.request('/api/nope/deeper');
    expect(res.status).toBe(404);
    expectErrorBody(await json(res), 404, 'NOT_FOUND');
  });

  test('unknown non-API path → 404 JSON too', async () => {
    const res = await t.request('/favicon.ico');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/json');
    expectErrorBody(await json(res), 404, 'NOT_FOUND');
  });

  test('wrong method → 405 with Allow', async () => {
    const res = await t.request('/api/pricing', { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    expectErrorBody(await json(res), 405, 'METHOD_NOT_ALLOWED');
    const keys = await t.request('/api/keys', { method: 'PUT' });
    expect(keys.headers.get('allow')).toBe('GET, POST');
  });

  test('malformed JSON → 400, non-JSON body → 415, oversized body → 413, non-object → 400', async () => {
    // With a valid key: body errors are answered after authentication (tests/platform/hostile-input.test.ts).
    const post = (body: string, type = 'application/json') =>
      t.request('/api/accounts/credits', { method: 'POST', headers: { ...dashboardHeaders(DASHBOARD_KEY, acct.accountId), 'content-type': type }, body });
    const malformed = await post('{"amountUsd": 1,');
    expect(malformed.status).toBe(400);
    expect((await json(malformed)).message).toContain('Malformed JSON');
    expectErrorBody(await json(await post('amountUsd=1', 'application/x-www-form-urlencoded')), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectErrorBody(await json(await post(JSON.stringify({ reference: 'x'.repeat(4000) }))), 413, 'PAYLOAD_TOO_LARGE');
    expectErrorBody(await json(await post('[1,2]')), 400, 'BAD_REQUEST');
  });

  test('tRPC: unknown procedure and malformed input use the same four fields inside error.data.api', async () => {
    const unknown = await t.request('/trpc/nope.nothing');
    expect(unknown.status).toBe(404);
    const envelope = await json(unknown);
    expectErrorBody(envelope.error.data.api, 404, 'NOT_FOUND');
    const bad = await t.request('/trpc/usage.list?input=%7Bbroken', { headers: acct.headers });
    expect(bad.status).toBe(400);
    expectErrorBody((await json(bad)).error.data.api, 400, 'BAD_REQUEST');
  });

  test('no stack traces or internals in any error', async () => {
    const res = await t.request('/trpc/usage.list?input=%7Bbroken', { headers: acct.headers });
    const text = await res.text();
    expect(text).not.toContain('stack');
    expect(text).not.toContain('node_modules');
  });
});

describe('request ids', () => {
  test('a valid x-request-id is echoed in the header and the error body', async () => {
    const res = await t.request('/api/billing', { headers: { 'x-request-id': 'my-trace-42' } });
    expect(res.headers.get('x-request-id')).toBe('my-trace-42');
    expect((await json(res)).requestId).toBe('my-trace-42');
  });

  test('an invalid one is replaced by a generated req_ id', async () => {
    for (const presented of ['has space', 'x'.repeat(129), 'tab\there']) {
      const res = await t.request('/api/pricing', { headers: { 'x-request-id': presented } });
      expect(res.headers.get('x-request-id')).toMatch(/^req_[1-9A-HJ-NP-Za-km-z]+$/);
    }
  });

  test('every response has one, successes included', async () => {
    const res = await t.request('/api/billing', { headers: acct.headers });
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
  });
});

describe('response headers', () => {
  // /api responses are built from one reused Headers object (http/response-headers.ts): each must
  // carry exactly its own headers, also when kept while later ones are built.
  test('each response carries only its own headers, before and after later responses', async () => {
    const crossOrigin = await t.request('/api/pricing', { headers: { origin: 'https://app.example.com' } });
    const notAllowed = await t.request('/api/pricing', { method: 'DELETE' });
    const billed = await t.request('/api/billing', { headers: acct.headers });
    const concurrent = await Promise.all([t.request('/api/pricing'), t.request('/api/billing', { headers: acct.headers }), t.request('/api/pricing', { method: 'PUT' })]);
    const plain = await t.request('/api/pricing');
    const named = (res: Response) => Object.fromEntries([...res.headers].map(([name, value]) => [name, name === 'x-request-id' ? 'id' : value]));
    const rateLimit = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];

    expect(Object.keys(named(crossOrigin)).sort()).toEqual(['access-control-allow-origin', 'access-control-expose-headers', 'content-type', ...rateLimit, 'vary', 'x-request-id'].sort());
    expect(named(notAllowed)).toEqual({ allow: 'GET', 'content-type': 'application/json', 'x-request-id': 'id' });
    expect(Object.keys(named(billed)).sort()).toEqual(['content-type', ...rateLimit, 'x-request-cost-usd', 'x-request-id'].sort());
    expect(Object.keys(named(concurrent[0])).sort()).toEqual(['content-type', ...rateLimit, 'x-request-id'].sort());
    expect(named(concurrent[1])['x-request-cost-usd']).toBe('0.002');
    expect(named(concurrent[2])).toEqual({ allow: 'GET', 'content-type': 'application/json', 'x-request-id': 'id' });
    expect(Object.keys(named(plain)).sort()).toEqual(['content-type', ...rateLimit, 'x-request-id'].sort());
    // Kept responses were not changed by the ones built after them.
    expect(crossOrigin.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(billed.headers.get('x-request-cost-usd')).toBe('0.002');
    const ids = [crossOrigin, notAllowed, billed, ...concurrent, plain].map((r) => r.headers.get('x-request-id'));
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('hosts and paths', () => {
  test('a Host containing "api" (api.example.com) still routes', async () => {
    const res = await t.app.handle(new Request('http://api.example.com/api/pricing'));
    expect(res.status).toBe(200);
    const billed = await t.app.handle(new Request('https://api.example.com/api/billing', { headers: acct.headers }));
    expect(billed.status).toBe(200);
  });

  test('paths are case-sensitive and a trailing slash is the same route', async () => {
    expect((await t.request('/api/PRICING')).status).toBe(404);
    expect((await t.request('/api/pricing/')).status).toBe(200);
  });
});

describe('CORS', () => {
  test('a listed origin gets CORS headers exposing ours', async () => {
    const res = await t.request('/api/pricing', { headers: { origin: 'https://app.example.com' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(res.headers.get('vary')).toContain('Origin');
    for (const h of ['X-Request-Cost-USD', 'X-Request-Id', 'Retry-After', 'RateLimit-Remaining']) {
      expect(res.headers.get('access-control-expose-headers')).toContain(h);
    }
  });

  test('a preflight from a listed origin is 204 with the allowed methods and headers', async () => {
    const res = await t.request('/api/keys', {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')).toContain('x-api-key');
    expect(res.headers.get('access-control-allow-headers')).toContain('x-user-id');
  });

  test('a foreign origin is 403 FORBIDDEN_ORIGIN, for requests and preflights, and nothing is billed', async () => {
    const attempts: RequestInit[] = [
      { headers: { origin: 'https://evil.example', ...acct.headers } },
      { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' } },
      { headers: { origin: 'https://app.example.com/', ...acct.headers } },
    ];
    for (const init of attempts) {
      const res = await t.request('/api/billing', init);
      expect(res.status).toBe(403);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expectErrorBody(await json(res), 403, 'FORBIDDEN_ORIGIN');
    }
    const usage = await json(await t.request('/api/usage', { headers: acct.headers }));
    expect(usage.records.every((r: any) => r.path !== '/api/billing' || r.method !== 'OPTIONS')).toBe(true);
  });

  test('requests without Origin are unaffected', async () => {
    const res = await t.request('/api/pricing');
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('health', () => {
  test('/healthz and /readyz answer while the database is up', async () => {
    expect(await json(await t.request('/healthz'))).toEqual({ status: 'ok' });
    const ready = await t.request('/readyz');
    expect(ready.status).toBe(200);
    expect(await json(ready)).toEqual({ status: 'ready', database: 'ok' });
  });

  test('/readyz is 503 and billed routes fail fast with 503 in our shape when the database is gone', async () => {
    const broken = await createTestApp();
    const key = (await fundedAccount(broken)).headers;
    await broken.database.close();
    const ready = await broken.request('/readyz');
    expect(ready.status).toBe(503);
    const res = await broken.request('/api/billing', { headers: key });
    expect(res.status).toBeGreaterThanOrEqual(500);
    expectErrorBody(await json(res), res.status, res.status === 503 ? 'SERVICE_UNAVAILABLE' : 'INTERNAL_ERROR');
  });
});

describe('error logging', () => {
  test('logged errors never carry query parameters', async () => {
    const { describeError } = await import('../../server/platform/app.ts');
    const cause = Object.assign(new Error('duplicate key value'), { name: 'PostgresError' });
    const error = Object.assign(new Error('Failed query: select * from api_keys where key_hash = $1\nparams: 9f86d081884c7d65'), { cause });
    const text = describeError(error);
    expect(text).toContain('Failed query');
    expect(text).toContain('duplicate key value');
    expect(text).not.toContain('9f86d081884c7d65');
  });

  test('nor an RPC endpoint (its key sits in the URL) or a request body', async () => {
    const { describeError } = await import('../../server/platform/app.ts');
    const viem = new Error('HTTP request failed.\n\nStatus: 500\nURL: https://polygon-mainnet.g.alchemy.com/v2/secretKey123\nRequest body: {"method":"eth_call","params":[{"to":"0xabc"}]}\n\nVersion: viem@2');
    const text = describeError(Object.assign(new Error('Polygon RPC failed: HTTP request failed.'), { cause: viem }));
    expect(text).toContain('Polygon RPC failed');
    expect(text).toContain('URL: <url>');
    expect(text).not.toContain('secretKey123');
    expect(text).not.toContain('eth_call');
  });
});
