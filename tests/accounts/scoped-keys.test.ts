/**
 * Scoped keys (server/accounts/scopes.ts), on every billed key route of the router: the operation's
 * documented example request (its /openapi.json parameters and body, as "Try it" sends them) with a
 * key that holds every scope but the one the route needs is 403 FORBIDDEN naming that scope, on /api
 * and /trpc, and costs nothing; the same request with a key holding only that scope is not refused
 * for scope. Keys show their scopes; a key made without scopes holds all of them (today's keys).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { count, eq } from 'drizzle-orm';
import { usageRecords } from '../../db/schema.ts';
import { appRouter } from '../../routers/index.ts';
import { createApiKey } from '../../server/accounts/api-keys.ts';
import { SCOPES, type Scope } from '../../server/accounts/scopes.ts';
import { RouteTable, type Route } from '../../server/platform/http/route-table.ts';
import { parameterExample } from '../../server/platform/http/openapi-examples.ts';
import { BASE, createTestApp, DASHBOARD_KEY, json, type TestApp } from '../harness/app.ts';
import { dashboardHeaders, fundedAccount, newUserId, type FundedAccount } from '../harness/factories.ts';
import { publicError } from '../harness/routes.ts';

let t: TestApp;
let account: FundedAccount;
let doc: any;
/** Per scope: a key holding every other scope, and a key holding only it. */
const without = new Map<Scope, string>();
const only = new Map<Scope, string>();

beforeAll(async () => {
  t = await createTestApp();
  account = await fundedAccount(t, { usd: 100 });
  for (const scope of SCOPES) {
    without.set(scope, (await createApiKey(t.database.db, { accountId: account.accountId, name: `without ${scope}`, scopes: SCOPES.filter((s) => s !== scope) })).key);
    only.set(scope, (await createApiKey(t.database.db, { accountId: account.accountId, name: `only ${scope}`, scopes: [scope] })).key);
  }
  doc = await json(await t.request('/openapi.json'));
});
afterAll(() => t.close());

/** Known at load time: every billed key route, each with the scope its definition ends with. */
const scoped = new RouteTable(appRouter).routes.filter((r) => r.meta.access === 'key' || r.meta.access === 'user');

const usageRows = async () => (await t.database.db.select({ n: count() }).from(usageRecords).where(eq(usageRecords.accountId, account.accountId)))[0]!.n;

/** The operation's example request, on REST: required parameters' examples, and the body's example. */
function exampleRest(route: Route, headers: Record<string, string>): Request {
  const operation = doc.paths[route.template][route.method.toLowerCase()];
  let path = route.template;
  const query = new URLSearchParams();
  for (const p of operation.parameters ?? []) {
    const value = parameterExample(p);
    if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(String(value ?? '1')));
    if (p.in === 'query' && p.required && value !== undefined) query.set(p.name, String(value));
  }
  const body = operation.requestBody?.content?.['application/json']?.example;
  const url = `${BASE}/api${path}${query.size ? `?${query}` : ''}`;
  return new Request(url, {
    method: route.method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** The same call over /trpc: the parameters' examples (typed, as JSON) and the body's, as the procedure's input. */
function exampleTrpc(route: Route, headers: Record<string, string>): Request {
  const operation = doc.paths[route.template][route.method.toLowerCase()];
  const input: Record<string, unknown> = {};
  for (const p of operation.parameters ?? []) {
    const value = parameterExample(p);
    if (p.in === 'path') input[p.name] = value ?? '1';
    if (p.in === 'query' && p.required && value !== undefined) input[p.name] = value;
  }
  Object.assign(input, operation.requestBody?.content?.['application/json']?.example ?? {});
  if (route.type === 'query') return new Request(`${BASE}/trpc/${route.procedurePath}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers });
  return new Request(`${BASE}/trpc/${route.procedurePath}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(input) });
}

const headersFor = (route: Route, key: string) => ({ 'x-api-key': key, ...(route.meta.access === 'user' ? { 'x-user-id': newUserId() } : {}) });

describe('every billed key route needs its scope', () => {
  test('each names one of the vocabulary, and /openapi.json says which', () => {
    expect(scoped.length).toBeGreaterThan(30);
    for (const route of scoped) {
      expect(SCOPES).toContain(route.meta.scope!);
      const operation = doc.paths[route.template][route.method.toLowerCase()];
      expect(`${route.procedurePath} ${operation['x-required-scope']}`).toBe(`${route.procedurePath} ${route.meta.scope}`);
      expect(operation.description).toContain(`\`${route.meta.scope}\``);
      expect(Object.keys(operation.responses['403'].content['application/json'].examples)).toContain('FORBIDDEN');
    }
    // The issue's vocabulary, by example: what each scope opens.
    const scopeOf = (path: string) => scoped.find((r) => r.procedurePath === path)?.meta.scope;
    expect([scopeOf('privateCompanies.byId'), scopeOf('positions.list'), scopeOf('trading.buy'), scopeOf('tradingSettings.storeCredentials'), scopeOf('usage.list'), scopeOf('webhooks.create')]).toEqual([
      'data:read',
      'trading:read',
      'trading:write',
      'trading:write',
      'account:read',
      'account:write',
    ]);
  });

  for (const transport of ['rest', 'trpc'] as const) {
    test(`a key without it is 403 FORBIDDEN naming the scope, and nothing is charged (${transport})`, async () => {
      const before = await usageRows();
      for (const route of scoped) {
        const scope = route.meta.scope!;
        const headers = headersFor(route, without.get(scope)!);
        const res = await t.app.handle(transport === 'rest' ? exampleRest(route, headers) : exampleTrpc(route, headers));
        const body = await publicError(res, transport);
        expect(`${route.procedurePath} → ${res.status} ${body?.code}`).toBe(`${route.procedurePath} → 403 FORBIDDEN`);
        expect(body.message).toContain(`lacks the scope ${scope}`);
        expect(res.headers.get('x-request-cost-usd') ?? '0').toBe('0');
      }
      expect(await usageRows()).toBe(before);
    });

    test(`a key holding only that scope is not refused for scope (${transport})`, async () => {
      for (const route of scoped) {
        const headers = headersFor(route, only.get(route.meta.scope!)!);
        const res = await t.app.handle(transport === 'rest' ? exampleRest(route, headers) : exampleTrpc(route, headers));
        const body = res.status >= 400 ? await publicError(res, transport) : undefined;
        // A scope refusal names the scope it lacks; a route's own 403 (a live key resetting test data) is not one.
        const refusal = body?.code === 'FORBIDDEN' && body.message.includes('lacks the scope') ? 'scope refusal' : (body?.code ?? res.status);
        expect(`${route.procedurePath} → ${refusal}`).not.toBe(`${route.procedurePath} → scope refusal`);
      }
    });
  }
});

describe('keys and their scopes', () => {
  test('POST /api/keys takes scopes; the listing shows them; no scopes means every scope', async () => {
    const headers = { ...dashboardHeaders(DASHBOARD_KEY, account.accountId), 'content-type': 'application/json' };
    const created = await t.request('/api/keys', { method: 'POST', headers, body: JSON.stringify({ name: 'research bot', scopes: ['trading:read', 'data:read'] }) });
    expect(created.status).toBe(201);
    const key = await json(created);
    expect(key).toMatchObject({ scopes: ['data:read', 'trading:read'], allScopes: false });
    const listed = (await json(await t.request('/api/keys', { headers }))).keys;
    expect(listed.find((k: any) => k.id === key.id)).toMatchObject({ scopes: ['data:read', 'trading:read'], allScopes: false });
    expect(listed.find((k: any) => k.id === account.apiKeyId)).toMatchObject({ scopes: [...SCOPES], allScopes: true });

    // The new key reads companies and positions, and cannot buy (nothing charged for the refusal).
    expect((await t.request('/api/private-companies/1', { headers: { 'x-api-key': key.key } })).status).toBe(200);
    const before = await usageRows();
    const buy = await t.request('/api/trading/buy', { method: 'POST', headers: { 'x-api-key': key.key, 'x-user-id': newUserId(), 'content-type': 'application/json' }, body: JSON.stringify({ eventId: 'openai-ipo', side: 'LONG', amount: 5 }) });
    expect(buy.status).toBe(403);
    expect(await json(buy)).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect(await usageRows()).toBe(before);
  });

  test('bad scopes are a 400 naming scopes', async () => {
    const headers = { ...dashboardHeaders(DASHBOARD_KEY, account.accountId), 'content-type': 'application/json' };
    for (const scopes of [[], ['trading:admin'], ['data:read', 'data:read'], 'data:read']) {
      const res = await t.request('/api/keys', { method: 'POST', headers, body: JSON.stringify({ name: 'x', scopes }) });
      const body = await json(res);
      expect(`${JSON.stringify(scopes)} → ${res.status}`).toBe(`${JSON.stringify(scopes)} → 400`);
      expect(body.message).toStartWith('scopes');
    }
  });
});
