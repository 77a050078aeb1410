/**
 * /mcp through the official SDK's own client (Streamable HTTP, in process): the tools are the
 * procedures an API key can call (derived here from the route table, independently of the server's
 * list), offered by the key's scopes; a tool call is the procedure's call with its price, scope and
 * refusals (402 and 403 as tool errors, nothing charged for a refusal); a buy with an idempotency key
 * trades once; resources read their operations; a request without a valid key is 401 in our shape.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { and, count, eq } from 'drizzle-orm';
import { positions, usageRecords } from '../../db/schema.ts';
import { appRouter } from '../../routers/index.ts';
import { createApiKey } from '../../server/accounts/api-keys.ts';
import { RouteTable } from '../../server/platform/http/route-table.ts';
import { parameterExample } from '../../server/platform/http/openapi-examples.ts';
import { BASE, createTestApp, json, type TestApp } from '../harness/app.ts';
import { fundedAccount } from '../harness/factories.ts';
import { api, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp } from '../harness/trading-venue.ts';

let t: TestApp;
let who: Trader;

beforeAll(async () => {
  t = await createTradingApp();
  who = await trader(t);
});
afterAll(() => t.close());

/** An SDK client connected to this app's /mcp with `headers`. */
async function connect(headers: Record<string, string>) {
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
    requestInit: { headers },
    fetch: (url, init) => t.app.handle(new Request(url, init)) as Promise<Response>,
  });
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

const usageOf = async (accountId: string) => (await t.database.db.select({ n: count() }).from(usageRecords).where(eq(usageRecords.accountId, accountId)))[0]!.n;

/** What the tools should be, from the route table: every /api operation an API key can call, but files and sign-in. */
const expectedTools = new RouteTable(appRouter).routes
  .filter((r) => ['public', 'key', 'user'].includes(r.meta.access ?? 'public') && !r.meta.files && !r.procedurePath.startsWith('auth.'))
  .map((r) => r.procedurePath.replaceAll('.', '_'))
  .sort();

describe('tools', () => {
  test('a key holding every scope lists a tool per procedure it can call, each with schemas and annotations', async () => {
    const client = await connect(who.account.headers);
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual(expectedTools);
    expect(tools.length).toBeGreaterThanOrEqual(45);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.description!.length).toBeGreaterThan(20);
    }
    const byName = new Map(tools.map((x) => [x.name, x]));
    expect(byName.get('trading_buy')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: true });
    expect(byName.get('privateCompanies_byId')!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.get('trading_buy')!.inputSchema.properties).toHaveProperty('idempotencyKey');
    expect(byName.get('trading_buy')!.inputSchema.properties).toHaveProperty('userId');
    expect(byName.get('trading_buy')!.description).toContain('trading:write');
    for (const absent of ['keys_create', 'accounts_credit', 'events_resolve', 'auth_verify', 'companyExport_get', 'streams_valuation']) expect(byName.has(absent)).toBe(false);
    await client.close();
  });

  test('a scoped key sees only the tools of its scopes; calling another is 403 FORBIDDEN naming the scope, not charged', async () => {
    const scoped = await createApiKey(t.database.db, { accountId: who.account.accountId, name: 'data only', scopes: ['data:read'] });
    const client = await connect({ 'x-api-key': scoped.key });
    const names = (await client.listTools()).tools.map((x) => x.name);
    expect(names).toContain('privateCompanies_list');
    expect(names).toContain('tradingMarket_valuation');
    expect(names).not.toContain('trading_buy');
    expect(names).not.toContain('usage_list');
    const before = await usageOf(who.account.accountId);
    const refused = await client.callTool({ name: 'usage_list', arguments: {} });
    expect(refused.isError).toBe(true);
    expect((refused.content as Array<{ text: string }>)[0]!.text).toContain('FORBIDDEN');
    expect((refused.content as Array<{ text: string }>)[0]!.text).toContain('account:read');
    expect(refused._meta).toMatchObject({ 'pre-ipo/status': 403 });
    expect(await usageOf(who.account.accountId)).toBe(before);
    await client.close();
  });

  test('a read tool answers what the same call on /api answers, billed the same', async () => {
    const client = await connect(who.account.headers);
    const listed = await client.callTool({ name: 'privateCompanies_list', arguments: { limit: 2 } });
    expect(listed.isError).toBeFalsy();
    const companies = (listed.structuredContent as { companies: Array<{ id: string }> }).companies;
    expect(companies.length).toBe(2);
    const before = await usageOf(who.account.accountId);
    const detail = await client.callTool({ name: 'privateCompanies_byId', arguments: { id: companies[0]!.id } });
    const restResponse = await t.request(`/api/private-companies/${companies[0]!.id}`, { headers: who.account.headers });
    const rest = await json(restResponse);
    expect(detail.structuredContent).toEqual(rest);
    expect(JSON.parse((detail.content as Array<{ text: string }>)[0]!.text)).toEqual(rest);
    // The premium rate, as the same call on /api is charged.
    expect(detail._meta!['pre-ipo/costUsd']).toBe(restResponse.headers.get('x-request-cost-usd')!);
    expect(Number(detail._meta!['pre-ipo/costUsd'])).toBeGreaterThan(0);
    expect(await usageOf(who.account.accountId)).toBe(before + 2); // the tool call and the /api call
    const [row] = await t.database.db.select({ path: usageRecords.path }).from(usageRecords).where(and(eq(usageRecords.accountId, who.account.accountId), eq(usageRecords.path, '/trpc/privateCompanies.byId')));
    expect(row).toBeDefined();
    await client.close();
  });

  test('a bad input is the tool error 400, before billing; an unknown tool is a protocol error', async () => {
    const client = await connect(who.account.headers);
    const before = await usageOf(who.account.accountId);
    const bad = await client.callTool({ name: 'privateCompanies_list', arguments: { limit: 'many' } });
    expect(bad.isError).toBe(true);
    expect(bad._meta).toMatchObject({ 'pre-ipo/status': 400 });
    expect(await usageOf(who.account.accountId)).toBe(before);
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool/);
    await client.close();
  });

  test('a buy with an idempotency key trades once however often the agent retries it', async () => {
    const client = await connect(who.account.headers);
    const args = { userId: who.userId, eventId: 'openai-ipo', side: 'LONG', amount: 20, idempotencyKey: `mcp-buy-${Date.now()}` };
    const first = await client.callTool({ name: 'trading_buy', arguments: args });
    expect(first.isError).toBeFalsy();
    const positionId = (first.structuredContent as { positionId: string }).positionId;
    expect(positionId).toStartWith('pos_');
    const again = await client.callTool({ name: 'trading_buy', arguments: args });
    expect((again.structuredContent as { positionId: string }).positionId).toBe(positionId);
    const held = await t.database.db.select({ n: count() }).from(positions).where(and(eq(positions.accountId, who.account.accountId), eq(positions.userId, who.userId)));
    expect(held[0]!.n).toBe(1);
    const listed = await client.callTool({ name: 'positions_list', arguments: { userId: who.userId } });
    expect(JSON.stringify(listed.structuredContent)).toContain(positionId);
    const rest = await api(t, who, 'GET', `/api/trading/positions/${positionId}`);
    expect(rest.res.status).toBe(200);
    await client.close();
  });

  test('a test key buys on the paper venue, free; its tool list has no private-company data', async () => {
    const created = await createApiKey(t.database.db, { accountId: who.account.accountId, name: 'agent sandbox', mode: 'test', scopes: ['trading:read', 'trading:write'] });
    const client = await connect({ 'x-api-key': created.key });
    const names = (await client.listTools()).tools.map((x) => x.name);
    expect(names).toContain('trading_buy');
    expect(names).not.toContain('privateCompanies_byId');
    const userId = who.userId;
    expect((await client.callTool({ name: 'tradingSettings_storeCredentials', arguments: { userId, apiKey: 'sandbox', secret: 'c2FuZGJveA==', passphrase: 'sandbox' } })).isError).toBeFalsy();
    const bought = await client.callTool({ name: 'trading_buy', arguments: { userId, eventId: 'openai-ipo', side: 'LONG', amount: 20 } });
    expect(bought.isError).toBeFalsy();
    expect(bought._meta).toMatchObject({ 'pre-ipo/costUsd': '0' });
    // The live key's positions do not show the test buy.
    const liveIds = (await api(t, who, 'GET', '/api/trading/positions')).body.positions.map((p: { id: string }) => p.id);
    expect(liveIds).not.toContain((bought.structuredContent as { positionId: string }).positionId);
    await client.close();
  });

  test('an account without credit gets 402 as a tool error', async () => {
    const broke = await fundedAccount(t, { usd: 0 });
    const client = await connect(broke.headers);
    const refused = await client.callTool({ name: 'privateCompanies_stats', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(refused._meta).toMatchObject({ 'pre-ipo/status': 402 });
    expect((refused.content as Array<{ text: string }>)[0]!.text).toContain('INSUFFICIENT_BALANCE');
    await client.close();
  });
});

describe('every tool', () => {
  test('is called with its documented example and answers as its operation does: never a 5xx, the SDK checks each answer against the tool\'s output schema, and a query costs what the same call on /trpc costs', async () => {
    const doc = await json(await t.request('/openapi.json'));
    const caller = await trader(t);
    const client = await connect(caller.account.headers);
    const { tools } = await client.listTools();
    const routes = new Map(new RouteTable(appRouter).routes.map((r) => [r.procedurePath.replaceAll('.', '_'), r]));
    const statuses: Record<string, number> = {};
    for (const tool of tools) {
      const route = routes.get(tool.name)!;
      const operation = doc.paths[route.template][route.method.toLowerCase()];
      const args: Record<string, unknown> = {};
      for (const p of operation.parameters ?? []) {
        const value = parameterExample(p);
        if (p.in === 'path') args[p.name] = value ?? 1;
        if (p.in === 'query' && p.required && value !== undefined) args[p.name] = value;
      }
      Object.assign(args, operation.requestBody?.content?.['application/json']?.example ?? {});
      if (route.meta.access === 'user') args.userId = caller.userId;
      const result = await client.callTool({ name: tool.name, arguments: args });
      const status = result._meta!['pre-ipo/status'] as number;
      statuses[tool.name] = status;
      expect(status).toBeLessThan(500);
      if (!result.isError && tool.outputSchema) expect(result.structuredContent).toBeDefined();
      // A query's price through MCP is the price of the same call on /trpc (mutations are not repeated).
      if (route.type === 'query') {
        const direct = await t.request(`/trpc/${route.procedurePath}?input=${encodeURIComponent(JSON.stringify(args))}`, { headers: caller.account.headers });
        expect([tool.name, result._meta!['pre-ipo/costUsd']]).toEqual([tool.name, direct.headers.get('x-request-cost-usd') ?? '0']);
        expect([tool.name, status]).toEqual([tool.name, direct.status]);
      }
    }
    // Most examples succeed; the rest are refusals of the example's ids (404) or state (409, 422).
    const succeeded = Object.values(statuses).filter((s) => s < 300).length;
    expect(succeeded).toBeGreaterThan(tools.length / 2);
    await client.close();
  });
});

describe('resources', () => {
  test('the events and a company profile read their operations', async () => {
    const client = await connect(who.account.headers);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain('pre-ipo://trading/events');
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates[0]!.uriTemplate).toBe('pre-ipo://private-companies/{id}');
    const events = await client.readResource({ uri: 'pre-ipo://trading/events' });
    const listed = JSON.parse((events.contents[0] as { text: string }).text);
    expect(listed).toEqual(await json(await t.request('/api/trading/events')));
    const companies = await json(await t.request('/api/private-companies?limit=1', { headers: who.account.headers }));
    const profile = await client.readResource({ uri: `pre-ipo://private-companies/${companies.companies[0].id}` });
    expect(JSON.parse((profile.contents[0] as { text: string }).text).id).toBe(companies.companies[0].id);
    await expect(client.readResource({ uri: 'pre-ipo://nothing' })).rejects.toThrow(/not found/);
    await client.close();
  });
});

describe('HTTP', () => {
  test('without a key, or with a bad one, /mcp is 401 in our error shape', async () => {
    const init = { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) };
    const missing = await t.request('/mcp', init);
    expect(missing.status).toBe(401);
    expect((await json(missing)).code).toBe('UNAUTHORIZED');
    const bad = await t.request('/mcp', { ...init, headers: { ...init.headers, authorization: 'Bearer pipo_not_a_key' } });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toContain('Bearer');
    await expect(connect({ 'x-api-key': 'pipo_wrong' })).rejects.toThrow();
  });

  test('listing is free but takes a token of the key\'s rate limit, as every call of the key does', async () => {
    const limited = await createTestApp({ RATE_LIMIT_KEY_RPS: '0.01', RATE_LIMIT_KEY_BURST: '3' });
    try {
      const account = await fundedAccount(limited, { usd: 1 });
      const list = () =>
        limited.request('/mcp', {
          method: 'POST',
          headers: { ...account.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        });
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await list()).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      const refused = await list();
      expect((await json(refused)).code).toBe('RATE_LIMITED');
      expect(refused.headers.get('retry-after')).not.toBeNull();
    } finally {
      await limited.close();
    }
  });

  test('a Bearer key works like x-api-key; GET is 405; a body that is not JSON is a JSON-RPC parse error', async () => {
    const client = await connect({ authorization: `Bearer ${who.account.apiKey}` });
    expect((await client.listTools()).tools.length).toBe(expectedTools.length);
    await client.close();
    const get = await t.request('/mcp', { headers: who.account.headers });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const garbled = await t.request('/mcp', { method: 'POST', headers: { ...who.account.headers, 'content-type': 'application/json' }, body: '{nope' });
    expect(garbled.status).toBe(400);
    expect((await json(garbled)).error.code).toBe(-32700);
  });
});
