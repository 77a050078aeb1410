/**
 * Hostile input on both transports ("denial of service before authentication" and
 * "wrong answers to bad input"): batch size, query parameter count, JSON nesting depth, body errors
 * answered after authentication, body size without Content-Length, date ranges, integer ranges,
 * docs asset names and request ids. Every refusal is a 4xx in our shape, never a 500.
 * The limits come from server/lib/input-limits.ts; a real-server check of the body limit is in
 * tests/platform/body-limit.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { z } from 'zod';
import { optionalParams } from '../../routers/params.ts';
import { DEFERRED_INPUT_MEMBER } from '../../server/platform/procedures/deferred-input.ts';
import { INPUT_LIMITS } from '../../server/lib/input-limits.ts';
import { createRestBridge } from '../../server/platform/http/rest-bridge.ts';
import { createRequestContext } from '../../server/platform/procedures/context.ts';
import { baseProcedure } from '../../server/platform/procedures/builder.ts';
import { router } from '../../server/platform/procedures/trpc.ts';
import { createTestApp, DASHBOARD_KEY, json, type TestApp } from '../harness/app.ts';
import { dashboardHeaders, fundedAccount, newUserId, type FundedAccount } from '../harness/factories.ts';

let t: TestApp;
let acct: FundedAccount;
let dashboard: Record<string, string>;
let trader: Record<string, string>;

beforeAll(async () => {
  t = await createTestApp({ MAX_BODY_BYTES: '65536' });
  acct = await fundedAccount(t, { usd: 100 });
  dashboard = dashboardHeaders(DASHBOARD_KEY, acct.accountId);
  trader = { ...acct.headers, 'x-user-id': newUserId() };
});
afterAll(() => t.close());

/** Our four public fields, from a REST body, a tRPC error envelope, or each element of a tRPC batch. */
function publicErrors(body: any): any[] {
  const items = Array.isArray(body) ? body : [body];
  return items.map((item) => (item?.error ? item.error.data?.api : item));
}

/** Sends the request and checks: this status, JSON, every error in our shape with the response's request id. */
async function expectRefused(request: Request, status: number, code: string, message?: RegExp) {
  const response = await t.app.handle(request);
  const text = await response.text();
  expect(`${request.method} ${request.url.slice(0, 120)} → ${response.status} ${text.slice(0, 300)}`).toContain(`→ ${status} `);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const errors = publicErrors(JSON.parse(text));
  expect(errors.length).toBeGreaterThan(0);
  for (const error of errors) {
    expect(Object.keys(error).sort()).toEqual(['code', 'message', 'requestId', 'status']);
    expect(error).toMatchObject({ code, status, requestId: response.headers.get('x-request-id') });
    if (message) expect(error.message).toMatch(message);
  }
  return errors;
}

const url = (path: string) => `http://localhost${path}`;
const get = (path: string, headers: Record<string, string> = {}) => new Request(url(path), { headers });
const post = (path: string, body: BodyInit, headers: Record<string, string> = {}, type = 'application/json') =>
  new Request(url(path), { method: 'POST', headers: { ...headers, 'content-type': type }, body, duplex: 'half' } as RequestInit);

/** JSON nested `depth` levels deep (the outer object counts), built without recursion. */
const deepJson = (depth: number) => `{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
const usageCount = async () => (await json(await t.request('/api/usage?limit=10000', { headers: acct.headers }))).records.length as number;

describe('tRPC batches', () => {
  const max = INPUT_LIMITS.maxBatchCalls;
  const batchOf = (n: number, separator = ',') => Array.from({ length: n }, () => 'billing.get').join(separator);
  const inputs = (n: number) => encodeURIComponent(JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [i, {}]))));

  test(`${max} calls run; ${max + 1} are refused with 400 before any call runs (nothing billed)`, async () => {
    const before = await usageCount();
    const allowed = await t.app.handle(get(`/trpc/${batchOf(max)}?batch=1&input=${inputs(max)}`, acct.headers));
    expect(allowed.status).toBe(200);
    expect((await json(allowed)).length).toBe(max);
    expect(await usageCount()).toBe(before + max + 1); // and the usage listing itself

    const afterAllowed = await usageCount();
    await expectRefused(get(`/trpc/${batchOf(max + 1)}?batch=1&input=${inputs(max + 1)}`, acct.headers), 400, 'BAD_REQUEST', new RegExp(`at most ${max}`));
    await expectRefused(get(`/trpc/${batchOf(1000)}?batch=1`, acct.headers), 400, 'BAD_REQUEST', new RegExp(`at most ${max}`));
    expect(await usageCount()).toBe(afterAllowed + 1);
  });

  test('the limit counts calls in the path however they are written: %2C, without batch=1, mutations', async () => {
    await expectRefused(get(`/trpc/${batchOf(max + 1, '%2C')}?batch=1`, acct.headers), 400, 'BAD_REQUEST');
    await expectRefused(get(`/trpc/${batchOf(max + 1)}`, acct.headers), 400, 'BAD_REQUEST');
    const mutations = Array.from({ length: max + 1 }, () => 'keys.create').join(',');
    await expectRefused(post(`/trpc/${mutations}?batch=1`, '{}', dashboard), 400, 'BAD_REQUEST');
    // Refused before authentication too: the count costs nothing to check.
    await expectRefused(get(`/trpc/${batchOf(max + 1)}?batch=1`), 400, 'BAD_REQUEST');
  });
});

describe('query parameters', () => {
  const max = INPUT_LIMITS.maxQueryParameters;

  test(`at most ${max}, repeats counted, on /api and /trpc, before authentication`, async () => {
    // apiKey is the transport's own parameter, so a repeat is harmless: exactly the limit passes.
    const repeated = (n: number) => Array.from({ length: n }, () => 'apiKey=x').join('&');
    expect((await t.request(`/api/pricing?${repeated(max)}`)).status).toBe(200);
    for (const path of ['/api/pricing', '/api/usage', '/trpc/pricing.get', '/trpc/usage.list', '/docs', '/nowhere']) {
      await expectRefused(get(`${path}?${repeated(max + 1)}`), 400, 'BAD_REQUEST', new RegExp(`at most ${max}`));
      await expectRefused(get(`${path}?${'a=&'.repeat(5_200)}`), 400, 'BAD_REQUEST', new RegExp(`at most ${max}`));
      await expectRefused(get(`${path}?${Array.from({ length: 3_300 }, (_, i) => `p${i}=1`).join('&')}`), 400, 'BAD_REQUEST');
    }
    // Empty segments are not parameters (as URLSearchParams reads them).
    expect((await t.request(`/api/pricing?${'&'.repeat(5_000)}`)).status).toBe(200);
  });

  test('a repeated name within the limit is a list, refused by a scalar parameter by name', async () => {
    const res = await t.request(`/api/usage?${'limit=1&'.repeat(50)}`, { headers: acct.headers });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toMatch(/^limit: /);
  });
});

describe('JSON nesting depth', () => {
  const max = INPUT_LIMITS.maxJsonDepth;
  const tooDeep = new RegExp(`deeper than ${max}`);

  test(`REST bodies: ${max} levels are read, ${max + 1} and 20,000 are a 400 (after authentication)`, async () => {
    // At the limit the body is read, and the procedure refuses the unknown member by name.
    await expectRefused(post('/api/keys', deepJson(max), dashboard), 400, 'BAD_REQUEST', /Unknown parameter: a$/);
    await expectRefused(post('/api/keys', deepJson(max + 1), dashboard), 400, 'BAD_REQUEST', tooDeep);
    await expectRefused(post('/api/keys', deepJson(20_000), dashboard), 400, 'BAD_REQUEST', tooDeep);
    await expectRefused(post('/api/trading/buy', deepJson(20_000), trader), 400, 'BAD_REQUEST', tooDeep);
    // Brackets inside strings are text, not nesting.
    await expectRefused(post('/api/keys', JSON.stringify({ name: '['.repeat(1000) + '{'.repeat(1000) }), dashboard), 400, 'BAD_REQUEST', /^name: /);
  });

  test('tRPC bodies, ?input= and batch inputs: a 400 per call', async () => {
    await expectRefused(post('/trpc/keys.create', deepJson(20_000), dashboard), 400, 'BAD_REQUEST', tooDeep);
    await expectRefused(get(`/trpc/usage.list?input=${encodeURIComponent(deepJson(5_000))}`, acct.headers), 400, 'BAD_REQUEST', tooDeep);
    await expectRefused(get(`/trpc/usage.list?input=${encodeURIComponent(deepJson(max + 1))}`, acct.headers), 400, 'BAD_REQUEST', tooDeep);
    const batch = `{"0":${deepJson(5_000)}}`;
    const errors = await expectRefused(get(`/trpc/usage.list,billing.get?batch=1&input=${encodeURIComponent(batch)}`, acct.headers), 400, 'BAD_REQUEST', tooDeep);
    expect(errors.length).toBe(2);
  });
});

describe('body errors are answered after authentication (docs/decisions.md §4)', () => {
  const cases = [
    { name: 'malformed JSON', body: '{"name": "x",', type: 'application/json', status: 400, code: 'BAD_REQUEST', message: /^Malformed JSON body$/ },
    { name: 'wrong Content-Type', body: 'name=x', type: 'application/x-www-form-urlencoded', status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: /application\/json/ },
    { name: 'too deep', body: deepJson(20_000), type: 'application/json', status: 400, code: 'BAD_REQUEST', message: /deeper than/ },
  ];
  for (const c of cases) {
    test(`${c.name}: 401 without a valid key, ${c.status} with one, on /api and /trpc`, async () => {
      for (const path of ['/api/keys', '/trpc/keys.create']) {
        await expectRefused(post(path, c.body, {}, c.type), 401, 'UNAUTHORIZED');
        await expectRefused(post(path, c.body, { 'x-api-key': 'pipo_' + 'f'.repeat(40), 'x-account-id': acct.accountId }, c.type), 401, 'UNAUTHORIZED');
        await expectRefused(post(path, c.body, dashboard, c.type), c.status, c.code, c.message);
      }
      await expectRefused(post('/api/trading/buy', c.body, { 'x-user-id': newUserId() }, c.type), 401, 'UNAUTHORIZED');
      await expectRefused(post('/api/trading/buy', c.body, trader, c.type), c.status, c.code, c.message);
    });
  }

  test('a REST body that is not an object, and a tRPC batch input that is not one: 401 first, then 400', async () => {
    await expectRefused(post('/api/keys', '[1,2]'), 401, 'UNAUTHORIZED');
    await expectRefused(post('/api/keys', '[1,2]', dashboard), 400, 'BAD_REQUEST', /must be an object/);
    await expectRefused(get(`/trpc/usage.list?batch=1&input=${encodeURIComponent('[1]')}`), 401, 'UNAUTHORIZED');
    await expectRefused(get(`/trpc/usage.list?batch=1&input=${encodeURIComponent('[1]')}`, acct.headers), 400, 'BAD_REQUEST', /object/);
  });

  test('a malformed ?input= on /trpc: 401 first, then 400', async () => {
    await expectRefused(get('/trpc/usage.list?input=%7Bbroken'), 401, 'UNAUTHORIZED');
    await expectRefused(get('/trpc/usage.list?input=%7Bbroken', acct.headers), 400, 'BAD_REQUEST', /^Malformed JSON body$/);
  });

  test('public routes answer the deferred error too (they have no key to check)', async () => {
    await expectRefused(get('/trpc/pricing.get?input=%7Bbroken'), 400, 'BAD_REQUEST', /^Malformed JSON body$/);
    await expectRefused(get(`/trpc/tradingMarket.valuation?input=${encodeURIComponent(deepJson(40))}`), 400, 'BAD_REQUEST', /deeper than/);
  });

  test('a client sending the reserved member gets a 400, never a 500 or its own message', async () => {
    const forged = (reason: unknown) => JSON.stringify({ [DEFERRED_INPUT_MEMBER]: reason });
    await expectRefused(post('/api/keys', forged('too-deep'), dashboard), 400, 'BAD_REQUEST', /deeper than/);
    await expectRefused(post('/api/keys', forged('anything I like'), dashboard), 400, 'BAD_REQUEST', /reserved/);
    await expectRefused(post('/trpc/keys.create', forged({ nested: true }), dashboard), 400, 'BAD_REQUEST', /reserved/);
    await expectRefused(get(`/trpc/pricing.get?input=${encodeURIComponent(forged('constructor'))}`), 400, 'BAD_REQUEST', /reserved/);
  });

  test('a procedure whose access rule checks nothing still refuses the marker with 400 (every input schema is strict)', async () => {
    const admitsAll = baseProcedure({ gate: () => ({}), meta: { access: 'public' } });
    const bare = router({
      echo: admitsAll
        .meta({ openapi: { method: 'POST', path: '/echo' } })
        .input(optionalParams({ name: z.string().optional() }))
        .output(z.unknown())
        .mutation(({ input }) => input),
    });
    const bridge = createRestBridge(bare);
    for (const body of ['{"name": "x",', deepJson(20_000), '[1]']) {
      const request = post('/api/echo', body);
      const ctx = createRequestContext(t.services, { transport: 'rest', request, path: '/api/echo', search: '', clientIp: () => '127.0.0.1', requestId: 'req-bare' }, {});
      const outcome = await bridge.handle(request, ctx, t.config.maxBodyBytes);
      expect(outcome.status).toBe(400);
      expect(JSON.parse(outcome.body)).toMatchObject({ code: 'BAD_REQUEST', requestId: 'req-bare' });
    }
  });

  test('a body over the limit stays a 413 before authentication (it is refused before it is read)', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(t.config.maxBodyBytes) });
    for (const path of ['/api/keys', '/trpc/keys.create']) await expectRefused(post(path, big), 413, 'PAYLOAD_TOO_LARGE');
  });
});

describe('body size without Content-Length (chunked)', () => {
  const chunked = (bytes: number) => {
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= bytes) return controller.close();
        sent += 1024;
        controller.enqueue(new TextEncoder().encode(' '.repeat(1024)));
      },
    });
    return { stream, sent: () => sent };
  };

  test('is refused with 413 in our shape once it passes the limit, without reading the rest', async () => {
    for (const path of ['/api/keys', '/api/trading/buy', '/trpc/keys.create', '/trpc/pricing.get']) {
      const body = chunked(10 * t.config.maxBodyBytes);
      const request = post(path, body.stream, path.includes('trading') ? trader : dashboard);
      expect(request.headers.get('content-length')).toBeNull();
      await expectRefused(request, 413, 'PAYLOAD_TOO_LARGE', new RegExp(`${t.config.maxBodyBytes} bytes`));
      expect(body.sent()).toBeLessThan(4 * t.config.maxBodyBytes);
    }
  });

  test('a chunked body within the limit is read whole', async () => {
    const res = await t.app.handle(post('/api/keys', new Blob([JSON.stringify({ name: 'chunked' })]).stream(), dashboard));
    expect(res.status).toBe(201);
  });

  test('a declared Content-Length over the limit is a 413 on every path, body unread', async () => {
    for (const path of ['/api/keys', '/trpc/keys.create', '/healthz', '/docs', '/nowhere']) {
      const request = new Request(url(path), { method: 'POST', headers: { 'content-length': String(t.config.maxBodyBytes + 1) }, body: 'x' });
      await expectRefused(request, 413, 'PAYLOAD_TOO_LARGE');
    }
  });
});

describe('dates: one ISO 8601 parser, real dates in range, 400 naming the parameter', () => {
  const endpoints = [
    { path: '/api/usage', trpc: 'usage.list', params: ['from', 'to'], headers: () => acct.headers },
    { path: '/api/trading/history', trpc: 'orders.history', params: ['startDate', 'endDate'], headers: () => trader },
    { path: '/api/private-companies', trpc: 'privateCompanies.list', params: ['updatedSince'], headers: () => acct.headers },
  ];
  const refused: Array<[string, RegExp]> = [
    ['0000-01-01', /must be from 1970-01-01 to 9999-12-31/],
    ['1969-12-31T23:59:59Z', /must be from 1970-01-01 to 9999-12-31/],
    ['9999-12-31T23:59-23:59', /offset/],
    ['9999-12-31T23:00:00-01:00', /must be from 1970-01-01 to 9999-12-31/],
    ['2026-02-31', /not a real calendar date/],
    ['2025-02-29', /not a real calendar date/],
    ['2026-13-01', /not a real calendar date/],
    ['2026-11-22T24:00:00Z', /not a real time/],
    ['2026-11-22T06:60:00Z', /not a real time/],
    ['2026-11-22T06:00:00+14:30', /offset/],
    ['+275760-09-13T00:00:00Z', /ISO 8601/],
    ['10000-01-01', /ISO 8601/],
    ['2026-11-22T06:00:00', /ISO 8601/],
  ];

  for (const e of endpoints) {
    test(`${e.path} (${e.params.join(', ')}) on /api and /trpc`, async () => {
      for (const param of e.params) {
        for (const [value, rule] of refused) {
          const [rest] = await expectRefused(get(`${e.path}?${param}=${encodeURIComponent(value)}`, e.headers()), 400, 'BAD_REQUEST', rule);
          expect(rest.message).toStartWith(`${param}: `);
          const input = encodeURIComponent(JSON.stringify({ [param]: value }));
          await expectRefused(get(`/trpc/${e.trpc}?input=${input}`, e.headers()), 400, 'BAD_REQUEST', new RegExp(`^${param}: `));
        }
        // The edges of the range reach the database and are answered (both databases).
        for (const value of ['1970-01-01', '9999-12-31', '1970-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z', '2024-02-29T23:59:59+14:00']) {
          const res = await t.request(`${e.path}?${param}=${encodeURIComponent(value)}`, { headers: e.headers() });
          expect(`${param}=${value} → ${res.status}`).toBe(`${param}=${value} → 200`);
        }
      }
    });
  }
});

describe('whole-number parameters state their rule', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['/api/private-companies', 'limit=0', /^limit: must be from 1 to 200$/],
    ['/api/private-companies', 'limit=201', /^limit: must be from 1 to 200$/],
    ['/api/private-companies', 'limit=20000', /^limit: must be from 1 to 200$/],
    ['/api/private-companies', 'limit=99999999999999999999', /^limit: must be from 1 to 200$/],
    ['/api/private-companies', 'offset=-1', /^offset: must be from 0 to /],
    ['/api/private-companies', 'limit=1.5', /^limit: must be a whole number in decimal digits$/],
    ['/api/private-companies', 'limit=ten', /^limit: must be a whole number in decimal digits$/],
    ['/api/private-companies/0', '', /^id: must be from 1 to 2147483647$/],
    ['/api/trading/orders', 'limit=501', /^limit: must be from 1 to 500$/],
    ['/api/usage', 'limit=10001', /^limit: must be from 1 to 10000$/],
  ];
  test.each(cases)('%s?%s', async (path, query, message) => {
    const headers = path.includes('trading') ? trader : acct.headers;
    await expectRefused(get(`${path}${query ? `?${query}` : ''}`, headers), 400, 'BAD_REQUEST', message);
  });

  test('digits too many for a number still name the range', async () => {
    await expectRefused(get(`/api/private-companies?limit=${'9'.repeat(400)}`, acct.headers), 400, 'BAD_REQUEST', /^limit: must be from 1 to 200$/);
  });

  test('the same rule over /trpc with a JSON number', async () => {
    const input = encodeURIComponent(JSON.stringify({ limit: 201 }));
    await expectRefused(get(`/trpc/privateCompanies.list?input=${input}`, acct.headers), 400, 'BAD_REQUEST', /^limit: must be from 1 to 200$/);
  });
});

describe('docs assets never reach Object.prototype', () => {
  test.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'])('/docs/%s → 404 in our shape', async (name) => {
    await expectRefused(get(`/docs/${name}`), 404, 'NOT_FOUND');
  });
  test('the real assets are still served', async () => {
    const res = await t.request('/docs/docs.js');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toStartWith('text/javascript');
  });
});

describe('every error carries the request\'s own id', () => {
  test('tRPC errors raised before the context exists (mixed types, bad path encoding)', async () => {
    const mixed = post('/trpc/pricing.get,keys.create?batch=1', '{}', { 'x-request-id': 'req-mixed-1' });
    const [error] = await expectRefused(mixed, 400, 'BAD_REQUEST');
    expect(error.requestId).toBe('req-mixed-1');
    const badPath = get('/trpc/pricing%E0%A4%A', { 'x-request-id': 'req-badpath-1' });
    const [pathError] = await expectRefused(badPath, 400, 'BAD_REQUEST');
    expect(pathError.requestId).toBe('req-badpath-1');
  });

  test('errors from the router outside /api and /trpc (Elysia)', async () => {
    const [error] = await expectRefused(get('/docs/nothing-here', { 'x-request-id': 'req-docs-1' }), 404, 'NOT_FOUND');
    expect(error.requestId).toBe('req-docs-1');
  });
});

describe('refusals before routing still carry CORS headers for an allowed origin', () => {
  test('413 and the parameter-count 400 are readable by the browser that sent them', async () => {
    const origin = 'https://app.example.com';
    const app = await createTestApp({ CORS_ORIGINS: origin, MAX_BODY_BYTES: '65536' });
    try {
      const tooLarge = await app.request('/api/keys', { method: 'POST', headers: { origin, 'content-length': '65537' }, body: 'x' });
      const tooMany = await app.request(`/api/pricing?${'a=1&'.repeat(101)}`, { headers: { origin } });
      for (const [res, status] of [[tooLarge, 413], [tooMany, 400]] as const) {
        expect(res.status).toBe(status);
        expect(res.headers.get('access-control-allow-origin')).toBe(origin);
        expect((await res.json()).status).toBe(status);
      }
    } finally {
      await app.close();
    }
  });
});
