/**
 * Every route answers the same on both transports and through tRPC's own caller: /api (the REST
 * bridge), /trpc (the project's RPC path, http/trpc-rpc.ts), tRPC's fetch adapter (http/trpc-endpoint.ts,
 * which answers what the RPC path leaves to it) and `createCaller` (tRPC running the tRPC procedure
 * built from the same definition). The table comes from the router, so a new route is covered here
 * without touching this file. Answers that depend on the moment or on what the other calls changed
 * (a balance after a charge, a new key's id) are compared by shape; market data and every refusal
 * are compared exactly, and the RPC path's bytes are tRPC's adapter's bytes.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createTRPCClient, httpBatchStreamLink } from '@trpc/client';
import type { AppRouter } from '../../routers/index.ts';
import { appRouter } from '../../routers/index.ts';
import { publicErrorOf } from '../../server/platform/procedures/trpc-errors.ts';
import type { Route } from '../../server/platform/http/route-table.ts';
import { createTrpcEndpoint } from '../../server/platform/http/trpc-endpoint.ts';
import { createRequestContext, type RequestContext } from '../../server/platform/procedures/context.ts';
import { createCallerFactory } from '../../server/platform/procedures/trpc.ts';
import { BASE, createTestApp, DASHBOARD_KEY, type TestApp } from '../harness/app.ts';
import { fundedAccount, newUserId, type FundedAccount } from '../harness/factories.ts';
import { concretePath } from '../harness/routes.ts';
import { signIn } from '../harness/sign-in.ts';

let t: TestApp;
let account: FundedAccount;
const userId = newUserId();
const adapter = createTrpcEndpoint(appRouter);
const callerFactory = createCallerFactory(appRouter);

beforeAll(async () => {
  t = await createTestApp();
  account = await fundedAccount(t, { usd: 100 });
});
afterAll(() => t.close());

/** Inputs that reach the handler (and its happy path) for the routes that take required ones. */
const VALID: Record<string, Record<string, string>> = {
  'tradingMarket.valuation': { eventSlug: 'openai-ipo', floorL: '0.25' },
  'tradingMarket.quote': { eventId: 'openai-ipo', side: 'LONG', amount: '100' },
  'marketHistory.valuation': { eventId: 'openai-ipo', interval: '1h' },
  'privateCompanies.list': { limit: '3', sort: '-valuationUsd' },
  'privateCompanies.search': { q: 'a', limit: '2' },
};

async function headersFor(route: Route, n: number): Promise<Record<string, string>> {
  const id = { 'x-request-id': `req_parity_${route.procedurePath.replace(/\W/g, '_')}_${n}` };
  switch (route.meta.access) {
    case 'public':
      return id;
    case 'key':
      return { ...id, ...account.headers };
    case 'user':
      return { ...id, ...account.headers, 'x-user-id': userId };
    case 'dashboard':
      return { ...id, 'x-api-key': DASHBOARD_KEY, 'x-account-id': account.accountId };
    default:
      // Each call signs in anew: one of them (logout) ends its session.
      return { ...id, ...(await signIn(t)).headers };
  }
}

/** The route's input as REST text (query or path parameters), and as tRPC's typed input. */
function inputsOf(route: Route) {
  const text: Record<string, string> = { ...VALID[route.procedurePath] };
  for (const s of route.segments) if ('param' in s) text[s.param] = '1';
  return { text, typed: route.convert({ ...text }) as Record<string, unknown> };
}

function restRequest(route: Route, text: Record<string, string>, headers: Record<string, string>): Request {
  const path = concretePath(route);
  if (route.method === 'GET' || route.method === 'DELETE') {
    const query = new URLSearchParams(Object.entries(text).filter(([name]) => !route.template.includes(`{${name}}`)));
    return new Request(`${BASE}${path}${query.size ? `?${query}` : ''}`, { method: route.method, headers });
  }
  return new Request(BASE + path, { method: route.method, headers: { ...headers, 'content-type': 'application/json' }, body: '{}' });
}

function trpcRequest(route: Route, typed: Record<string, unknown>, headers: Record<string, string>): Request {
  const input = encodeURIComponent(JSON.stringify(typed));
  if (route.type === 'query') return new Request(`${BASE}/trpc/${route.procedurePath}?input=${input}`, { headers });
  return new Request(`${BASE}/trpc/${route.procedurePath}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(typed) });
}

function contextOf(request: Request, requestId: string): RequestContext {
  const url = new URL(request.url);
  return createRequestContext(t.services, { transport: 'trpc', request, path: url.pathname, search: url.search.slice(1), clientIp: () => 'unknown', requestId }, {});
}

type Answer = { status: number; body: unknown };

/** The answer as REST shows it: the data, or the public error without its request id. */
const normal = ({ status, body }: Answer): Answer => {
  if (status >= 400 && typeof body === 'object' && body !== null && 'requestId' in body) {
    const { requestId: _, ...rest } = body as Record<string, unknown>;
    return { status, body: rest };
  }
  return { status, body };
};

function fromTrpc(status: number, envelope: any): Answer {
  return envelope.error ? { status, body: envelope.error.data.api } : { status, body: envelope.result.data };
}

async function viaCaller(route: Route, typed: Record<string, unknown>, headers: Record<string, string>): Promise<Answer> {
  const request = trpcRequest(route, typed, headers);
  const caller = callerFactory(contextOf(request, headers['x-request-id']!)) as any;
  const procedure = route.procedurePath.split('.').reduce((at, name) => at[name], caller);
  try {
    return { status: route.meta.successStatus ?? 200, body: JSON.parse(JSON.stringify(await procedure(typed))) };
  } catch (error) {
    const api = publicErrorOf(error, headers['x-request-id']!);
    return { status: api.status, body: api };
  }
}

/** Same leaves' types and same keys, recursively (for answers that depend on the moment). */
function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 0 ? [] : [shapeOf(value[0])];
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.keys(value).sort().map((k) => [k, shapeOf((value as any)[k])]));
  return value === null ? 'null' : typeof value;
}

/** Public answers are functions of the market and the input (auth's nonces are fresh each time). */
const stable = (route: Route) => route.meta.access === 'public' && !route.procedurePath.startsWith('auth.');

describe('every route on /api, /trpc, tRPC\'s adapter and tRPC\'s caller', () => {
  test('covers every route', () => {
    expect(t.app.routes.length).toBeGreaterThan(50);
  });


  test('each route answers alike', async () => {
    const mismatches: string[] = [];
    let n = 0;
    let answered = 0;
    for (const route of t.app.routes) {
      const { text, typed } = inputsOf(route);
      const headers = () => headersFor(route, ++n);
      const restResponse = await t.app.handle(restRequest(route, text, await headers()));
      if (route.meta.files) {
        // A file route (the bulk export) answers a file on REST and refuses tRPC, whose answers are JSON.
        const type = restResponse.headers.get('content-type') ?? '';
        await restResponse.body?.cancel();
        if (restResponse.status !== 200 || !Object.keys(route.meta.files).some((media) => type.startsWith(media))) mismatches.push(`${route.procedurePath}: REST ${restResponse.status} ${type}`);
        const rpc = await t.app.handle(trpcRequest(route, typed, await headers()));
        if (rpc.status !== 400) mismatches.push(`${route.procedurePath}: tRPC answered ${rpc.status}, not 400`);
        await rpc.body?.cancel();
        answered++;
        continue;
      }
      const rest = { status: restResponse.status, body: await restResponse.json() };

      const rpcHeaders = await headers();
      const rpcResponse = await t.app.handle(trpcRequest(route, typed, rpcHeaders));
      const rpcText = await rpcResponse.text();
      const rpc = fromTrpc(rpcResponse.status, JSON.parse(rpcText));
      const caller = await viaCaller(route, typed, await headers());

      const comparable = [normal(rest), normal(rpc), normal(caller)];
      if (rest.status < 300) answered++;
      // A successful REST answer may use another status (201); tRPC answers 200.
      const statuses = comparable.map((a) => (a.status < 300 ? 'ok' : a.status));
      if (new Set(statuses).size !== 1) mismatches.push(`${route.procedurePath}: statuses ${JSON.stringify(comparable.map((a) => a.status))} ${JSON.stringify(comparable.map((a) => a.body)).slice(0, 400)}`);
      else if (statuses[0] !== 'ok' || stable(route)) {
        for (const other of comparable.slice(1)) if (!Bun.deepEquals(other.body, comparable[0]!.body)) mismatches.push(`${route.procedurePath}: ${JSON.stringify(comparable[0]!.body).slice(0, 200)} vs ${JSON.stringify(other.body).slice(0, 200)}`);
      } else {
        for (const other of comparable.slice(1)) if (!Bun.deepEquals(shapeOf(other.body), shapeOf(comparable[0]!.body))) mismatches.push(`${route.procedurePath}: shapes differ`);
      }

      // The RPC path's bytes are tRPC's adapter's, for answers that do not change between two calls.
      if (route.type === 'query' && (stable(route) || rpcResponse.status >= 400)) {
        const again = trpcRequest(route, typed, rpcHeaders);
        const { response } = await adapter(again, contextOf(again, rpcHeaders['x-request-id']!), t.config.maxBodyBytes);
        const adapterText = await response.text();
        if (response.status !== rpcResponse.status || adapterText !== rpcText) mismatches.push(`${route.procedurePath}: adapter ${response.status} ${adapterText.slice(0, 200)} vs rpc ${rpcResponse.status} ${rpcText.slice(0, 200)}`);
      }
    }
    expect(mismatches).toEqual([]);
    // Not a table of refusals only: most routes reached their handler and answered.
    expect(answered).toBeGreaterThan(t.app.routes.length / 2);
  }, 120_000);

  test('a batch of successes and refusals: the same bytes and status (207) as tRPC\'s adapter, and each call\'s cost', async () => {
    const input = encodeURIComponent(JSON.stringify({ 0: {}, 1: { eventSlug: 'openai-ipo' }, 2: { limit: 'lots' }, 3: { id: 1 } }));
    const path = `/trpc/pricing.get,tradingMarket.valuation,privateCompanies.list,privateCompanies.byId?batch=1&input=${input}`;
    const headers = { ...account.headers, 'x-request-id': 'req_parity_batch' };
    const rpc = await t.app.handle(new Request(BASE + path, { headers }));
    const rpcText = await rpc.text();
    const again = new Request(BASE + path, { headers });
    const { response } = await adapter(again, contextOf(again, 'req_parity_batch'), t.config.maxBodyBytes);
    expect(rpc.status).toBe(207);
    expect(response.status).toBe(207);
    expect(rpcText).toBe(await response.text());
    const items = JSON.parse(rpcText);
    expect(items.map((item: any) => (item.error ? item.error.data.api.code : 'ok'))).toEqual(['ok', 'ok', 'BAD_REQUEST', 'ok']);
    // The refused call was refunded; the billed read costs the premium rate (private-company data).
    const costs = rpc.headers.get('x-call-costs-usd')!.split(',').map(Number);
    expect(costs).toHaveLength(4);
    expect(costs[0]).toBe(0);
    expect(costs[1]).toBe(0);
    expect(costs[2]).toBe(0);
    expect(costs[3]).toBeGreaterThan(0);
    expect(Number(rpc.headers.get('x-request-cost-usd'))).toBeCloseTo(costs[3]!, 9);
    expect(rpc.headers.get('vary')).toContain('trpc-accept');
  });

  test('a streamed batch (trpc-accept: application/jsonl) states what its calls cost, refunds included, and the typed client reads it', async () => {
    const input = encodeURIComponent(JSON.stringify({ 0: { id: 1 }, 1: { limit: 'lots' }, 2: { id: 2 } }));
    const path = `/trpc/privateCompanies.byId,privateCompanies.list,privateCompanies.byId?batch=1&input=${input}`;
    const billing = async () => (await (await t.app.handle(new Request(BASE + '/api/billing', { headers: account.headers }))).json()) as { usageCostUsd: number };
    const before = await billing();
    const res = await t.app.handle(new Request(BASE + path, { headers: { ...account.headers, 'trpc-accept': 'application/jsonl' } }));
    const text = await res.text();
    expect(text.split('\n').filter(Boolean).length).toBeGreaterThan(1); // jsonl framing, as tRPC streams it
    const charged = Number(res.headers.get('x-request-cost-usd'));
    expect(charged).toBeGreaterThan(0);
    const after = await billing();
    // Two premium reads were charged, the refused call refunded, and the /api/billing read itself.
    expect(Math.round((after.usageCostUsd - before.usageCostUsd) * 1e6)).toBe(Math.round(charged * 1e6) + 2000);

    // The typed client over httpBatchStreamLink gets both answers and the refusal.
    let streamedCost: string | null = null;
    const client = createTRPCClient<AppRouter>({
      links: [httpBatchStreamLink({
        url: `${BASE}/trpc`,
        headers: () => account.headers,
        fetch: async (url, init) => {
          const answer = await t.app.handle(new Request(String(url), init as RequestInit));
          streamedCost = answer.headers.get('x-request-cost-usd');
          return answer;
        },
      })],
    });
    const [one, bad, two] = await Promise.allSettled([client.privateCompanies.byId.query({ id: 1 }), client.privateCompanies.list.query({ limit: 'lots' } as never), client.privateCompanies.byId.query({ id: 2 })]);
    expect([one.status, bad.status, two.status]).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(Number(streamedCost)).toBe(charged);
  });
});
