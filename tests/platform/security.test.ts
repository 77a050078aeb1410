/**
 * Security rules, run on every route of the router (the table comes from the router itself, so a
 * new route is covered without touching this file), over both /api and /trpc.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { appRouter } from '../../routers/index.ts';
import { revokeApiKey } from '../../server/accounts/api-keys.ts';
import { RouteTable, type Route } from '../../server/platform/http/route-table.ts';
import { createRequestContext } from '../../server/platform/procedures/context.ts';
import { createCallerFactory } from '../../server/platform/procedures/trpc.ts';
import { createTestApp, DASHBOARD_KEY, type TestApp } from '../harness/app.ts';
import { fundedAccount, newUserId, type FundedAccount } from '../harness/factories.ts';
import { publicError, restRequest, trpcRequest } from '../harness/routes.ts';
import { signIn, type SignedIn } from '../harness/sign-in.ts';

let t: TestApp;
let live: FundedAccount;
let revoked: FundedAccount;
let customer: SignedIn;
let signedOut: SignedIn;

beforeAll(async () => {
  t = await createTestApp();
  live = await fundedAccount(t);
  revoked = await fundedAccount(t);
  await revokeApiKey(t.database.db, { accountId: revoked.accountId, keyId: revoked.apiKeyId });
  customer = await signIn(t);
  signedOut = await signIn(t);
  expect((await t.request('/api/auth/logout', { method: 'POST', headers: signedOut.headers })).status).toBe(200);
});
afterAll(() => t.close());

/** Known at load time, so a rule with no route to apply to shows as skipped, never as a silent pass. */
const routes = new RouteTable(appRouter).routes;
const hasAccess = (access: string) => routes.some((r) => r.meta.access === access);

const transports = [
  { name: 'rest', build: restRequest },
  { name: 'trpc', build: trpcRequest },
] as const;

/** The same request with one input member no route declares (every input schema is strict). */
function withUnknownMember(request: Request, transport: 'rest' | 'trpc'): Request {
  const url = new URL(request.url);
  if (transport === 'trpc' && request.method === 'GET') {
    url.searchParams.set('input', JSON.stringify({ ...JSON.parse(url.searchParams.get('input') ?? '{}'), zzzUnknown: 1 }));
    return new Request(url, { headers: request.headers });
  }
  if (request.method === 'GET' || request.method === 'DELETE') {
    url.searchParams.set('zzzUnknown', '1');
    return new Request(url, { method: request.method, headers: request.headers });
  }
  return new Request(url, { method: request.method, headers: request.headers, body: JSON.stringify({ zzzUnknown: 1 }) });
}

function expectShape(body: any, status: number, code: string) {
  expect(Object.keys(body).sort()).toEqual(['code', 'message', 'requestId', 'status']);
  expect(body).toMatchObject({ code, status });
  expect(body.message.length).toBeGreaterThan(0);
}

describe('every route', () => {
  test('the app serves exactly the router\'s routes', () => {
    expect(t.app.routes.map((r) => r.procedurePath)).toEqual(routes.map((r) => r.procedurePath));
    expect(routes.length).toBeGreaterThan(0);
  });

  for (const transport of transports) {
    describe(`over ${transport.name}`, () => {
      test('protected routes refuse a missing, malformed, unknown or revoked key with 401', async () => {
        const userId = newUserId();
        for (const route of t.app.routes.filter((r) => r.meta.access !== 'public')) {
          for (const key of [undefined, 'not-a-key', 'pipo_' + '1'.repeat(44), revoked.apiKey]) {
            const headers: Record<string, string> = { 'x-user-id': userId, 'x-account-id': 'acct-x' };
            if (key) headers['x-api-key'] = key;
            const res = await t.app.handle(transport.build(route, headers));
            const body = await publicError(res, transport.name);
            expect(`${route.procedurePath} ${key} → ${res.status}`).toBe(`${route.procedurePath} ${key} → 401`);
            expectShape(body, 401, 'UNAUTHORIZED');
            expect(res.headers.get('x-request-id')).toBe(body.requestId);
          }
        }
      });

      test('a dashboard key is refused on key routes and an API key on dashboard routes', async () => {
        for (const route of t.app.routes.filter((r) => r.meta.access !== 'public')) {
          const wrongKey = route.meta.access === 'dashboard' ? live.apiKey : DASHBOARD_KEY;
          const res = await t.app.handle(transport.build(route, { 'x-api-key': wrongKey, 'x-user-id': newUserId(), 'x-account-id': live.accountId }));
          expect(`${route.procedurePath} → ${res.status}`).toBe(`${route.procedurePath} → 401`);
          expectShape(await publicError(res, transport.name), 401, 'UNAUTHORIZED');
        }
      });

      test.skipIf(!hasAccess('user'))('user routes need a well-formed x-user-id (400)', async () => {
        for (const route of t.app.routes.filter((r) => r.meta.access === 'user')) {
          for (const userId of [undefined, '', 'has space', 'x'.repeat(129)]) {
            const headers: Record<string, string> = { 'x-api-key': live.apiKey };
            if (userId !== undefined) headers['x-user-id'] = userId;
            const res = await t.app.handle(transport.build(route, headers));
            expect(res.status).toBe(400);
            const body = await publicError(res, transport.name);
            expectShape(body, 400, 'BAD_REQUEST');
            expect(body.message).toContain('x-user-id');
          }
        }
      });

      test.skipIf(!hasAccess('dashboard'))('dashboard routes need a well-formed x-account-id (400)', async () => {
        for (const route of t.app.routes.filter((r) => r.meta.access === 'dashboard')) {
          for (const accountId of [undefined, 'bad id!', 'a'.repeat(129)]) {
            const headers: Record<string, string> = { 'x-api-key': DASHBOARD_KEY };
            if (accountId !== undefined) headers['x-account-id'] = accountId;
            const res = await t.app.handle(transport.build(route, headers));
            expect(res.status).toBe(400);
            expectShape(await publicError(res, transport.name), 400, 'BAD_REQUEST');
          }
        }
      });

      /** The route's request with a `note` parameter holding a NUL character (query or body, as the route takes input). */
      function withNulNote(route: Route, headers: Record<string, string>): Request {
        const clean = transport.build(route, headers);
        const url = new URL(clean.url);
        if (transport.name === 'rest' && ['GET', 'DELETE'].includes(route.method)) {
          url.searchParams.set('note', 'a\u0000b');
          return new Request(url, { method: clean.method, headers: clean.headers });
        }
        if (transport.name === 'rest') return new Request(url, { method: clean.method, headers: clean.headers, body: JSON.stringify({ note: 'a\u0000b' }) });
        if (route.type === 'query') {
          url.searchParams.set('input', JSON.stringify({ note: 'a\u0000b' }));
          return new Request(url, { headers: clean.headers });
        }
        return new Request(url, { method: 'POST', headers: clean.headers, body: JSON.stringify({ note: 'a\u0000b' }) });
      }

      test('a NUL character anywhere in the input is a 400 naming the parameter, never a 500', async () => {
        for (const route of t.app.routes) {
          const headers: Record<string, string> =
            route.meta.access === 'session' ? (await signIn(t)).headers : { 'x-api-key': route.meta.access === 'dashboard' ? DASHBOARD_KEY : live.apiKey, 'x-user-id': newUserId(), 'x-account-id': live.accountId };
          const res = await t.app.handle(withNulNote(route, headers));
          expect(`${route.procedurePath} → ${res.status}`).toBe(`${route.procedurePath} → 400`);
          const body = await publicError(res, transport.name);
          expectShape(body, 400, 'BAD_REQUEST');
          expect(body.message).toContain('note');
          if (route.meta.billing) expect(res.headers.get('x-request-cost-usd')).toBe('0');
        }
      });

      test('a bad key is answered 401 before the input is looked at (docs/decisions.md §4: authenticate first)', async () => {
        for (const route of t.app.routes.filter((r) => r.meta.access !== 'public')) {
          for (const key of ['pipo_' + '1'.repeat(44), revoked.apiKey, 'not-a-key']) {
            const res = await t.app.handle(withNulNote(route, { 'x-api-key': key, 'x-user-id': newUserId(), 'x-account-id': live.accountId }));
            expect(`${route.procedurePath} → ${res.status}`).toBe(`${route.procedurePath} → 401`);
            expectShape(await publicError(res, transport.name), 401, 'UNAUTHORIZED');
          }
        }
      });

      test.skipIf(!hasAccess('dashboard'))('a dashboard key is refused in ?apiKey= (URLs reach proxy logs): 401 saying to use x-api-key', async () => {
        for (const route of t.app.routes.filter((r) => r.meta.access === 'dashboard')) {
          const request = transport.build(route, { 'x-account-id': live.accountId });
          const url = new URL(request.url);
          url.searchParams.set('apiKey', DASHBOARD_KEY);
          const res = await t.app.handle(new Request(url, request));
          expect(`${route.procedurePath} → ${res.status}`).toBe(`${route.procedurePath} → 401`);
          const body = await publicError(res, transport.name);
          expectShape(body, 401, 'UNAUTHORIZED');
          expect(body.message).toContain('x-api-key header');
        }
      });

      const changes = (route: Route) => !['GET', 'DELETE'].includes(route.method) || route.method === 'DELETE';

      test('routes that take a session: the cookie alone authenticates; a signed-out one is 401; a change without a trusted Origin is 403', async () => {
        for (const route of t.app.routes.filter((r) => r.meta.session)) {
          const customer = await signIn(t); // a fresh session per route: one of them is logout
          if (route.meta.billing) await fundedAccount(t, { accountId: customer.accountId });
          const ok = await t.app.handle(transport.build(route, customer.headers));
          expect(`${route.procedurePath} → ${[401, 403].includes(ok.status) ? ok.status : 'admitted'}`).toBe(`${route.procedurePath} → admitted`);
          const out = await t.app.handle(transport.build(route, signedOut.headers));
          expect(`${route.procedurePath} → ${out.status}`).toBe(`${route.procedurePath} → 401`);
          expectShape(await publicError(out, transport.name), 401, 'UNAUTHORIZED');
          if (!changes(route)) continue;
          const other = await signIn(t);
          for (const origin of [undefined, 'https://evil.example']) {
            const headers: Record<string, string> = { cookie: other.cookie };
            if (origin) headers.origin = origin;
            const res = await t.app.handle(transport.build(route, headers));
            expect(`${route.procedurePath} ${origin} → ${res.status}`).toBe(`${route.procedurePath} ${origin} → 403`);
            // A foreign Origin is refused by the CORS layer before any transport (our REST shape on both).
            expectShape(origin ? await res.json() : await publicError(res, transport.name), 403, 'FORBIDDEN_ORIGIN');
          }
        }
      });

      test('a session pays what a key of its account pays: the same status and X-Request-Cost-USD on every route that takes both; 402 with no balance', async () => {
        const billedSessionRoutes = t.app.routes.filter((r) => r.meta.session && r.meta.billing);
        expect(billedSessionRoutes.length).toBeGreaterThan(0);
        for (const route of billedSessionRoutes) {
          const broke = await signIn(t);
          const refused = await t.app.handle(transport.build(route, { ...broke.headers, 'x-user-id': newUserId() }));
          // Input errors come first (400); anything the route would answer, it answers only when paid.
          expect(`${route.procedurePath} → ${refused.status}`).toMatch(new RegExp(`^${route.procedurePath.replace(/\./g, '\\.')} → (400|402)$`));
          expect(refused.headers.get('x-request-cost-usd')).toBe('0');

          const customer = await signIn(t);
          const { apiKey } = await fundedAccount(t, { accountId: customer.accountId });
          const userId = newUserId();
          const byKey = await t.app.handle(transport.build(route, { 'x-api-key': apiKey, 'x-user-id': userId }));
          const bySession = await t.app.handle(transport.build(route, { ...customer.headers, 'x-user-id': userId }));
          expect(`${route.procedurePath} → ${bySession.status} ${bySession.headers.get('x-request-cost-usd')}`).toBe(`${route.procedurePath} → ${byKey.status} ${byKey.headers.get('x-request-cost-usd')}`);
          if (byKey.status === 200) expect(Number(bySession.headers.get('x-request-cost-usd'))).toBeGreaterThan(0);
        }
      });

      test('a session opens nothing else: routes without it answer 401 to a cookie alone', async () => {
        for (const route of t.app.routes.filter((r) => r.meta.access !== 'public' && !r.meta.session)) {
          const res = await t.app.handle(transport.build(route, { ...customer.headers, 'x-user-id': newUserId(), 'x-account-id': customer.accountId }));
          expect(`${route.procedurePath} → ${res.status}`).toBe(`${route.procedurePath} → 401`);
        }
      });

      test('input errors come before billing: a bad input with a zero balance is 400, not 402, on every billed route', async () => {
        const broke = await fundedAccount(t, { usd: 0 });
        const billedRoutes = t.app.routes.filter((r) => r.meta.billing);
        expect(billedRoutes.length).toBeGreaterThan(0);
        for (const route of billedRoutes) {
          const request = transport.build(route, { ...broke.headers, 'x-user-id': newUserId() });
          const res = await t.app.handle(withUnknownMember(request, transport.name));
          expect(`${route.procedurePath} → ${res.status}`).toBe(`${route.procedurePath} → 400`);
          expect(res.headers.get('x-request-cost-usd')).toBe('0');
        }
        // The example that was answered 402: a quote naming a side that does not exist.
        const quote = await t.request('/api/trading/quote', { method: 'POST', headers: { ...broke.headers, 'x-user-id': newUserId(), 'content-type': 'application/json' }, body: JSON.stringify({ side: 'SIDEWAYS' }) });
        expect(quote.status).toBe(400);
      });

      test('failed auth on a billed route charges nothing and says so', async () => {
        for (const route of t.app.routes.filter((r) => r.meta.billing)) {
          const res = await t.app.handle(transport.build(route, { 'x-api-key': revoked.apiKey }));
          expect(res.status).toBe(401);
          expect(res.headers.get('x-request-cost-usd')).toBe('0');
        }
      });
    });
  }

  test('the key is also accepted as ?apiKey=, and the header wins over it', async () => {
    const billed = t.app.routes.find((r) => r.meta.access === 'key')!;
    const viaQuery = await t.request(`/api${billed.template}?apiKey=${live.apiKey}`);
    expect(viaQuery.status).toBe(200);
    const headerWins = await t.request(`/api${billed.template}?apiKey=${live.apiKey}`, { headers: { 'x-api-key': revoked.apiKey } });
    expect(headerWins.status).toBe(401);
  });
});

describe('walks over input are safe at any depth', () => {
  // The transports refuse deep JSON before any procedure runs; the procedures' own walk over the input
  // must not depend on that. A caller hands a procedure input nested 100,000 levels deep directly.
  const deep = (leaf: unknown) => {
    let value: unknown = leaf;
    for (let i = 0; i < 100_000; i++) value = { a: value };
    return value;
  };
  const callerFor = (headers: Record<string, string>) => {
    const request = new Request('http://localhost/trpc/x', { headers });
    const ctx = createRequestContext(t.services, { transport: 'trpc', request, path: '/trpc/x', search: '', clientIp: () => '192.0.2.1', requestId: 'req_deep' }, {});
    return createCallerFactory(appRouter)(ctx) as any;
  };

  test('public, billed and dashboard routes answer 400 for deep input, with or without a NUL at the bottom', async () => {
    const calls = [
      () => callerFor({}).pricing.get,
      () => callerFor({ 'x-api-key': live.apiKey }).billing.get,
      () => callerFor({ 'x-api-key': DASHBOARD_KEY, 'x-account-id': live.accountId }).accounts.me,
    ];
    for (const procedure of calls) {
      for (const input of [deep('a\u0000b'), deep('plain')]) {
        const error = await procedure()(input).catch((e: unknown) => e);
        expect(error?.code).toBe('BAD_REQUEST');
      }
    }
  });
});
