/**
 * Signed webhooks, over /api and /trpc: registration and its validation (event types,
 * https, URL length, at most 10 per account, SSRF refusals of every private form), another account's
 * webhook is 404, secrets appear only once (never in lists, deliveries or logs), deliveries verify
 * with the official `standardwebhooks` library, rotation signs with both secrets for 24 h and then
 * only the new one, and real flows — buy, sell, a rejected order, resolution and settlement, a
 * stablecoin deposit, a balance running low — announce exactly the expected events, exactly once;
 * event.resolved for many holders is one statement; the balance-low check looks only at funded
 * accounts under the threshold; `events` that is not a list gets one clear message.
 * Delivery faults (retries, backoff, the retry window, racing workers, SSRF at delivery, kill -9)
 * are in webhooks-delivery.test.ts and webhooks-crash.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { z } from 'zod';
import { parseAbi, type Address, type Hex } from 'viem';
import { WebhookVerificationError } from 'standardwebhooks';
import type { Db } from '../../db/client.ts';
import { accountEvents, orders, positions, webhookDeliveries, webhooks } from '../../db/schema.ts';
import { resultRows } from '../../db/prepared.ts';
import { creditAccount, ensureAccount, setAccountRate } from '../../server/accounts/accounts.ts';
import { createDepositChain } from '../../server/deposits/chain.ts';
import { toPublicError } from '../../server/errors.ts';
import { balanceLowCrossingsSql, checkBalanceLow } from '../../server/webhooks/balance-low.ts';
import { emitEventResolved } from '../../server/notifications/announce.ts';
import { createWebhook, deleteWebhook, MAX_WEBHOOKS_PER_ACCOUNT, WEBHOOK_EVENT_TYPES } from '../../server/webhooks/service.ts';
import { webhookEventsInput } from '../../server/webhooks/input.ts';
import { refusedAddressReason } from '../../server/webhooks/ssrf.ts';
import { deliverDue } from '../../server/webhooks/worker.ts';
import { createTestApp, DASHBOARD_KEY, trpcClient, type TestApp } from '../harness/app.ts';
import { dashboardHeaders, fundedAccount, type FundedAccount } from '../harness/factories.ts';
import { FaultyVenue } from '../harness/faulty-venue.ts';
import { startEvm, type InProcessEvm } from '../harness/in-process-evm.ts';
import { signIn } from '../harness/sign-in.ts';
import { api, buy, sell, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp, ledgerOf } from '../harness/trading-venue.ts';
import { startReceiver, verifyWith, type ReceivedRequest, type WebhookReceiver } from '../harness/webhook-receiver.ts';

const ALL_EVENTS = [...WEBHOOK_EVENT_TYPES];
/** Whether the router builds `events` with server/webhooks/input.ts (its HTTP message is checked then). */
const routerUsesEventsInput = readFileSync(new URL('../../routers/webhooks.ts', import.meta.url), 'utf8').includes('webhookEventsInput');
const logLines: string[] = [];
let t: TestApp;
let strict: TestApp; // the same database, WEBHOOK_ALLOW_PRIVATE_NETWORKS=false (the default)
let receiver: WebhookReceiver;
const secretsSeen: string[] = [];

beforeAll(async () => {
  t = await createTradingApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_TIMEOUT_MS: '5000', MARKET_DATA_TTL_MS: '0' }, { logLines });
  strict = await createTestApp({}, { database: t.database });
  receiver = startReceiver();
});
afterAll(async () => {
  receiver?.stop();
  await strict?.close();
  await t?.close();
});

const json = (headers: Record<string, string>) => ({ ...headers, 'content-type': 'application/json' });
const post = (app: TestApp, path: string, headers: Record<string, string>, body?: unknown) =>
  app.request(path, { method: 'POST', headers: json(headers), body: body === undefined ? undefined : JSON.stringify(body) });

async function register(headers: Record<string, string>, events: string[] = ALL_EVENTS, url = `${receiver.url}/hooks`, app = t) {
  const res = await post(app, '/api/webhooks', headers, { url, events });
  const body = await res.json();
  expect(`${res.status} ${JSON.stringify(body)}`).toStartWith('201 ');
  secretsSeen.push(body.secret);
  return body as { id: string; url: string; events: string[]; secret: string; createdAt: string };
}

/** Runs delivery passes until nothing is due, and answers the requests the receiver got meanwhile. */
async function deliverAll(app = t): Promise<ReceivedRequest[]> {
  const before = receiver.received.length;
  while ((await deliverDue(app.services)).claimed > 0);
  return receiver.received.slice(before);
}

const bodies = (requests: ReceivedRequest[]) => requests.map((r) => JSON.parse(r.body));

describe('registration', () => {
  test('POST /api/webhooks answers the secret once; the list and the deliveries never show it; billed like any key route', async () => {
    const account = await fundedAccount(t);
    const res = await post(t, '/api/webhooks', account.headers, { url: `${receiver.url}/a?x=1#frag`, events: ['position.settled', 'order.filled', 'order.filled'] });
    expect(res.status).toBe(201);
    expect(Number(res.headers.get('x-request-cost-usd'))).toBeGreaterThan(0);
    const created = await res.json();
    secretsSeen.push(created.secret);
    expect(created).toEqual({ id: expect.stringMatching(/^wh_/), url: `${receiver.url}/a?x=1`, events: ['order.filled', 'position.settled'], secret: expect.stringMatching(/^whsec_/), createdAt: expect.any(String) });
    expect(Buffer.from(created.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);

    const listed = await t.request('/api/webhooks', { headers: account.headers });
    const text = await listed.text();
    expect(text).not.toContain(created.secret.slice(6));
    expect(JSON.parse(text)).toEqual({ webhooks: [{ id: created.id, url: created.url, events: created.events, createdAt: created.createdAt, previousSecretExpiresAt: null }] });

    const queued = await post(t, `/api/webhooks/${created.id}/test`, account.headers);
    expect(queued.status).toBe(202);
    expect(await queued.json()).toMatchObject({ id: expect.stringMatching(/^msg_/), type: 'webhook.test', status: 'pending', attempts: 0 });
    const deliveries = await (await t.request(`/api/webhooks/${created.id}/deliveries`, { headers: account.headers })).text();
    expect(deliveries).not.toContain(created.secret.slice(6));
    // The stored row is sealed, not the secret.
    const [row] = await t.database.db.select().from(webhooks).where(eq(webhooks.id, created.id));
    expect(row!.secretSealed).not.toContain(created.secret.slice(6));
    expect(JSON.parse(row!.secretSealed)).toEqual({ keyId: expect.any(String), iv: expect.any(String), ciphertext: expect.any(String) });
  });

  test('the typed tRPC client: create, list, test, rotate, deliveries, delete', async () => {
    const account = await fundedAccount(t);
    const client = trpcClient(t, account.headers);
    const created = await client.webhooks.create.mutate({ url: `${receiver.url}/trpc`, events: ['balance.low'] });
    secretsSeen.push(created.secret);
    expect(created.secret).toStartWith('whsec_');
    expect((await client.webhooks.list.query()).webhooks.map((w) => w.id)).toEqual([created.id]);
    const queued = await client.webhooks.test.mutate({ id: created.id });
    expect(queued.type).toBe('webhook.test');
    const rotated = await client.webhooks.rotateSecret.mutate({ id: created.id });
    secretsSeen.push(rotated.secret);
    expect(rotated.secret).not.toBe(created.secret);
    const page = await client.webhooks.deliveries.query({ id: created.id, limit: 10 });
    expect(page).toMatchObject({ total: 1, limit: 10, offset: 0, deliveries: [{ id: queued.id, status: 'pending' }] });
    expect(await client.webhooks.delete.mutate({ id: created.id })).toMatchObject({ id: created.id, status: 'deleted' });
    expect((await client.webhooks.list.query()).webhooks).toEqual([]);
    const gone = await client.webhooks.test.mutate({ id: created.id }).catch((e) => e);
    expect(gone.data.api).toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  test('bad input is a 400 in our error shape naming the field, never a 500', async () => {
    const account = await fundedAccount(t);
    const cases: [unknown, string][] = [
      [{ url: `${receiver.url}/x`, events: ['order.exploded'] }, 'events'],
      [{ url: `${receiver.url}/x`, events: [] }, 'events'],
      [{ url: `${receiver.url}/x`, events: ['balance.changed'] }, 'events'],
      [{ url: `${receiver.url}/x` }, 'events'],
      [{ events: ['order.filled'] }, 'url'],
      [{ url: 'not a url', events: ['order.filled'] }, 'url'],
      [{ url: 'ftp://example.com/x', events: ['order.filled'] }, 'url'],
      [{ url: `https://example.com/${'a'.repeat(2100)}`, events: ['order.filled'] }, 'url'],
      [{ url: 'https://user:pass@example.com/x', events: ['order.filled'] }, 'url'],
      [{ url: `${receiver.url}/x`, events: ['order.filled'], extra: 1 }, 'extra'],
      [{ url: 42, events: ['order.filled'] }, 'url'],
    ];
    for (const [body, field] of cases) {
      const res = await post(t, '/api/webhooks', account.headers, body);
      const error = await res.json();
      expect(`${JSON.stringify(body).slice(0, 80)} → ${res.status}`).toBe(`${JSON.stringify(body).slice(0, 80)} → 400`);
      expect(Object.keys(error).sort()).toEqual(['code', 'message', 'requestId', 'status']);
      expect(error.message).toContain(field);
      expect(res.headers.get('x-request-cost-usd')).toBe('0');
    }
    // http is for private networks only (tests); the default server refuses it.
    const http = await post(strict, '/api/webhooks', account.headers, { url: 'http://example.com/hook', events: ['order.filled'] });
    expect(http.status).toBe(400);
    expect((await http.json()).message).toContain('must use https');
    for (const query of ['limit=0', 'limit=abc', 'status=nope', 'offset=-1', 'other=1']) {
      const res = await t.request(`/api/webhooks/wh_x/deliveries?${query}`, { headers: account.headers });
      expect(`${query} → ${res.status}`).toBe(`${query} → 400`);
    }
  });

  test('events must be a list: one clear message, not a string length', async () => {
    // The router's input shape, with the schema server/webhooks/input.ts gives it, through the service's error formatter.
    const input = z.strictObject({ url: z.string(), events: webhookEventsInput() });
    const message = (events: unknown) => {
      const parsed = input.safeParse(events === undefined ? { url: 'https://example.com/x' } : { url: 'https://example.com/x', events });
      return parsed.success ? 'ok' : toPublicError(parsed.error, 'req_test').message;
    };
    expect(message('order.filled')).toBe('events: must be a list of event types');
    expect(message('order.filled,position.settled')).toBe('events: must be a list of event types');
    expect(message('x')).toBe('events: must be a list of event types');
    for (const value of [42, null, { 0: 'order.filled' }, true]) expect(message(value)).toBe('events: must be a list of event types');
    expect(message(undefined)).toBe('events: required');
    expect(message([])).toBe('events: must list at least one event type');
    expect(message([...ALL_EVENTS, 'order.filled'])).toBe(`events: Too big: expected array to have <=${ALL_EVENTS.length} items`);
    expect(message(['order.exploded'])).toStartWith('events.0: Invalid option');
    expect(message(['order.filled', 'balance.low'])).toBe('ok');
    // Over HTTP and tRPC once routers/webhooks.ts builds `events` with webhookEventsInput().
    if (!routerUsesEventsInput) return;
    const account = await fundedAccount(t);
    const res = await post(t, '/api/webhooks', account.headers, { url: `${receiver.url}/x`, events: 'order.filled' });
    expect([res.status, (await res.json()).message]).toEqual([400, 'events: must be a list of event types']);
    const error = await trpcClient(t, account.headers).webhooks.create.mutate({ url: `${receiver.url}/x`, events: 'order.filled' as never }).catch((e) => e);
    expect(error.data.api).toMatchObject({ status: 400, message: 'events: must be a list of event types' });
  });

  test(`at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks per account, even when created at once; a deleted one frees its place`, async () => {
    const account = await fundedAccount(t);
    const attempts = await Promise.all(
      Array.from({ length: MAX_WEBHOOKS_PER_ACCOUNT + 3 }, (_, i) => post(t, '/api/webhooks', account.headers, { url: `${receiver.url}/n${i}`, events: ['order.filled'] })),
    );
    const statuses = attempts.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(MAX_WEBHOOKS_PER_ACCOUNT);
    expect(statuses.filter((s) => s === 400)).toHaveLength(3);
    const refused = attempts.find((r) => r.status === 400)!;
    expect((await refused.json()).message).toContain(`at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks`);
    for (const r of attempts.filter((x) => x.status === 201)) secretsSeen.push((await r.json()).secret);
    const [first] = (await (await t.request('/api/webhooks', { headers: account.headers })).json()).webhooks;
    expect((await t.request(`/api/webhooks/${first.id}`, { method: 'DELETE', headers: account.headers })).status).toBe(200);
    await register(account.headers, ['order.filled']);
  });

  test("another account's webhook is 404 on every route; deleting stops its pending deliveries and is answered the same twice", async () => {
    const owner = await fundedAccount(t);
    const other = await fundedAccount(t);
    const hook = await register(owner.headers, ['order.filled']);
    const routes: [string, string][] = [
      ['DELETE', `/api/webhooks/${hook.id}`],
      ['POST', `/api/webhooks/${hook.id}/test`],
      ['POST', `/api/webhooks/${hook.id}/rotate-secret`],
      ['GET', `/api/webhooks/${hook.id}/deliveries`],
      ['GET', `/api/webhooks/wh_doesnotexist/deliveries`],
    ];
    for (const [method, path] of routes) {
      const res = await t.request(path, { method, headers: method === 'POST' ? json(other.headers) : other.headers });
      expect(`${method} ${path} → ${res.status}`).toBe(`${method} ${path} → 404`);
      expect(await res.json()).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    }
    expect((await (await t.request('/api/webhooks', { headers: other.headers })).json()).webhooks).toEqual([]);

    const queued = await (await post(t, `/api/webhooks/${hook.id}/test`, owner.headers)).json();
    const deleted = await t.request(`/api/webhooks/${hook.id}`, { method: 'DELETE', headers: owner.headers });
    expect(deleted.status).toBe(200);
    const first = await deleted.json();
    expect([first.id, first.status, typeof first.deletedAt]).toEqual([hook.id, 'deleted', 'string']);
    expect(await (await t.request(`/api/webhooks/${hook.id}`, { method: 'DELETE', headers: owner.headers })).json()).toEqual(first);
    const [row] = await t.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, queued.id));
    expect([row!.status, row!.lastError]).toEqual(['failed', 'webhook deleted']);
    await deliverAll();
    expect(receiver.withId(queued.id)).toEqual([]);
    expect((await t.request(`/api/webhooks/${hook.id}/deliveries`, { headers: owner.headers })).status).toBe(404);
  });
});

describe('SSRF: private destinations are refused at registration', () => {
  const refused = [
    'https://127.0.0.1/hook',
    'https://127.8.9.10/hook',
    'https://2130706433/hook', // 127.0.0.1 as one number
    'https://0x7f.0.0.1/hook',
    'https://0.0.0.0/hook',
    'https://10.1.2.3/hook',
    'https://172.16.0.1/hook',
    'https://172.31.255.254/hook',
    'https://192.168.1.20/hook',
    'https://169.254.169.254/latest/meta-data/',
    'https://100.64.0.1/hook',
    'https://224.0.0.1/hook',
    'https://[::1]/hook',
    'https://[::]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::ffff:a9fe:a9fe]/hook', // 169.254.169.254, IPv4-mapped
    'https://[::ffff:10.0.0.1]/hook',
    'https://[64:ff9b::a00:1]/hook', // NAT64 of 10.0.0.1
    'https://[2002:7f00:1::]/hook', // 6to4 of 127.0.0.1
    'https://[fc00::1]/hook',
    'https://[fd12:3456:789a::1]/hook',
    'https://[fe80::1]/hook',
    'https://localhost/hook',
    'https://LOCALHOST./hook',
    'https://api.localhost/hook',
    'https://metadata.google.internal/computeMetadata/v1/',
    'https://db.internal/hook',
    'https://printer.local/hook',
    'https://metadata/hook',
  ];

  test('every private form, literal or named, is a 400 saying why', async () => {
    const account = await fundedAccount(t);
    for (const url of refused) {
      const res = await post(strict, '/api/webhooks', account.headers, { url, events: ['order.filled'] });
      const body = await res.json();
      expect(`${url} → ${res.status}`).toBe(`${url} → 400`);
      expect(body.code).toBe('BAD_REQUEST');
      expect(body.message).toContain('url: refused');
    }
    expect((await (await strict.request('/api/webhooks', { headers: account.headers })).json()).webhooks).toEqual([]);
  });

  test('a name is refused when ANY address it resolves to is private (IPv4 or IPv6); a public one is accepted', async () => {
    const { accountId } = await fundedAccount(t);
    const lookupOf = (addresses: string[]) => ({ lookup: async () => addresses });
    for (const addresses of [['127.0.0.1'], ['93.184.216.34', '10.0.0.8'], ['2606:4700::1111', '::1'], ['::ffff:192.168.0.1'], ['169.254.169.254']]) {
      const error = await createWebhook(strict.services, accountId, { url: 'https://hooks.example.com/in', events: ['order.filled'] }, lookupOf(addresses)).catch((e) => e);
      expect(`${addresses} → ${error?.message}`).toContain('url: refused: hooks.example.com resolves to');
    }
    const ok = await createWebhook(strict.services, accountId, { url: 'https://hooks.example.com/in', events: ['order.filled'] }, lookupOf(['93.184.216.34', '2606:2800:220:1::1']));
    expect(ok.url).toBe('https://hooks.example.com/in');
    // A name that does not resolve cannot be checked: refused too.
    const unknown = await post(strict, '/api/webhooks', (await fundedAccount(t)).headers, { url: 'https://no-such-host.invalid/x', events: ['order.filled'] });
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).message).toContain('does not resolve');
  });

  test('IPv6 special-purpose ranges (the IANA registry) and IPv4-translated forms are refused at registration', async () => {
    const account = await fundedAccount(t);
    for (const url of [
      'https://[::ffff:0:127.0.0.1]/hook', // IPv4-translated 127.0.0.1
      'https://[::ffff:0:a9fe:a9fe]/hook', // IPv4-translated 169.254.169.254
      'https://[2001:10::1]/hook', // ORCHID
      'https://[2001:20::1]/hook', // ORCHIDv2
      'https://[3fff::1]/hook', // documentation (RFC 9637)
      'https://[2001:2::1]/hook', // benchmarking
      'https://[5f00::1]/hook', // SRv6 SIDs
      'https://[4000::1]/hook', // not global unicast
    ]) {
      const res = await post(strict, '/api/webhooks', account.headers, { url, events: ['order.filled'] });
      const body = await res.json();
      expect(`${url} → ${res.status} ${body.message}`).toStartWith(`${url} → 400 url: refused`);
    }
  });

  test('the address rules, one by one', () => {
    // The IANA IPv6 special-purpose registry, entry by entry (and the IPv4 forms IPv6 carries).
    const ipv6: [string, string | null][] = [
      ['::', 'unspecified'],
      ['::1', 'loopback'],
      ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
      ['::ffff:0:127.0.0.1', 'IPv4-translated loopback'],
      ['::ffff:0:a00:1', 'IPv4-translated private'],
      ['::ffff:0:8.8.8.8', null],
      ['::127.0.0.1', 'IPv4-compatible loopback'],
      ['64:ff9b::7f00:1', 'NAT64 loopback'],
      ['64:ff9b::808:808', null],
      ['64:ff9b:1::1', 'local-use NAT64'],
      ['100::1', 'discard-only'],
      ['100:0:0:1::1', 'dummy prefix'],
      ['2001::1', 'Teredo'],
      ['2001:0:ffff::1', 'Teredo'],
      ['2001:1::1', 'IETF protocol assignments'],
      ['2001:2::1', 'benchmarking'],
      ['2001:3::1', 'IETF protocol assignments'],
      ['2001:4:112::1', 'IETF protocol assignments'],
      ['2001:10::1', 'ORCHID (deprecated)'],
      ['2001:1f:ffff::1', 'ORCHID (deprecated)'],
      ['2001:20::1', 'ORCHIDv2'],
      ['2001:2f:ffff::1', 'ORCHIDv2'],
      ['2001:30::1', 'IETF protocol assignments'],
      ['2001:1ff:ffff::1', 'IETF protocol assignments'],
      ['2001:200::1', null], // the first block after 2001::/23 (APNIC)
      ['2001:db8::1', 'documentation'],
      ['2001:db9::1', null],
      ['3fff::1', 'documentation'],
      ['3fff:fff:ffff::1', 'documentation'],
      ['3fff:1000::1', null],
      ['2002:7f00:1::', '6to4 loopback'],
      ['2002:808:808::1', null],
      ['5f00::1', 'segment routing (SRv6) SIDs'],
      ['fc00::1', 'unique local (private)'],
      ['fdff::1', 'unique local (private)'],
      ['fe80::1', 'link-local'],
      ['febf::1', 'link-local'],
      ['fec0::1', 'site-local'],
      ['ff02::1', 'multicast'],
      ['4000::1', 'reserved (not global unicast)'],
      ['1::1', 'reserved (not global unicast)'],
      ['2606:4700::1111', null],
      ['2a00:1450:4001::1', null],
    ];
    for (const [ip, reason] of ipv6) expect(`${ip} ${refusedAddressReason(ip)}`).toBe(`${ip} ${reason}`);

    for (const ip of ['8.8.8.8', '93.184.216.34', '2606:4700::1111', '::ffff:8.8.8.8', '2002:808:808::1', '172.32.0.1', '100.128.0.1', '11.0.0.1']) expect(`${ip} ${refusedAddressReason(ip)}`).toBe(`${ip} null`);
    for (const ip of ['127.0.0.1', '10.0.0.1', '172.16.0.1', '192.168.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '255.255.255.255', '::1', '::', '::ffff:127.0.0.1', 'fc00::1', 'fdff::1', 'fe80::1', 'febf::1', 'ff02::1', '2001:db8::1', '2001::1', '64:ff9b::7f00:1'])
      expect(`${ip} ${refusedAddressReason(ip)}`).not.toBe(`${ip} null`);
  });
});

describe('deliveries verify with the official library', () => {
  test('a test event: Standard Webhooks headers, the body as registered, verified; delivered once', async () => {
    const account = await fundedAccount(t);
    const hook = await register(account.headers, ['order.filled']);
    const queued = await (await post(t, `/api/webhooks/${hook.id}/test`, account.headers)).json();
    const got = await deliverAll();
    expect(got).toHaveLength(1);
    const [request] = got;
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/hooks');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.id).toBe(queued.id);
    expect(Number(request!.timestamp)).toBeCloseTo(Date.now() / 1000, -2);
    expect(request!.signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const verified = verifyWith(hook.secret, request!) as any;
    expect(verified).toEqual({ id: queued.eventId, type: 'webhook.test', timestamp: expect.any(String), data: { webhookId: hook.id, message: expect.any(String) } });
    // Tampering with any signed part fails verification.
    expect(() => verifyWith(hook.secret, { ...request!, body: request!.body.replace('webhook.test', 'webhook.tesT') })).toThrow(WebhookVerificationError);
    expect(() => verifyWith(hook.secret, { ...request!, headers: { ...request!.headers, 'webhook-id': 'msg_other' } })).toThrow(WebhookVerificationError);
    const other = await register(account.headers, ['order.filled']);
    expect(() => verifyWith(other.secret, request!)).toThrow(WebhookVerificationError);

    const page = await (await t.request(`/api/webhooks/${hook.id}/deliveries`, { headers: account.headers })).json();
    expect(page).toMatchObject({ total: 1, deliveries: [{ id: queued.id, status: 'succeeded', attempts: 1, lastStatusCode: 200, lastError: null, nextAttemptAt: null, completedAt: expect.any(String) }] });
    expect(await deliverAll()).toEqual([]);
  });

  test('a name is connected to at the address checked, with its own Host header', async () => {
    const { accountId } = await fundedAccount(t);
    const lookup = async (host: string) => (host === 'hooks.pre-ipo.test' ? ['127.0.0.1'] : []);
    const hook = await createWebhook(t.services, accountId, { url: `http://hooks.pre-ipo.test:${receiver.port}/named`, events: ['order.filled'] }, { lookup });
    await t.database.db.insert(webhookDeliveries).values({ id: 'msg_named', webhookId: hook.id, accountId, eventId: 'evt_named', type: 'order.filled', payload: '{}' });
    expect((await deliverDue(t.services, { lookup })).succeeded).toBe(1);
    const [request] = receiver.withId('msg_named');
    expect(request).toMatchObject({ id: 'msg_named', path: '/named', host: `hooks.pre-ipo.test:${receiver.port}` });
    verifyWith(hook.secret, request!);
  });

  test('rotation: both signatures verify for 24 hours, then only the new one', async () => {
    const account = await fundedAccount(t);
    const hook = await register(account.headers, ['order.filled']);
    const rotated = await post(t, `/api/webhooks/${hook.id}/rotate-secret`, account.headers);
    expect(rotated.status).toBe(200);
    const { secret, previousSecretExpiresAt } = await rotated.json();
    secretsSeen.push(secret);
    expect(Date.parse(previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
    expect((await (await t.request('/api/webhooks', { headers: account.headers })).json()).webhooks[0].previousSecretExpiresAt).toBe(previousSecretExpiresAt);

    await post(t, `/api/webhooks/${hook.id}/test`, account.headers);
    const [during] = await deliverAll();
    expect(during!.signature.split(' ')).toHaveLength(2);
    verifyWith(hook.secret, during!);
    verifyWith(secret, during!);

    // 24 hours and a minute later (the scheduling clock; signatures carry the real time).
    await post(t, `/api/webhooks/${hook.id}/test`, account.headers);
    const later = new Date(Date.parse(previousSecretExpiresAt) + 60_000);
    const queued = (await (await t.request(`/api/webhooks/${hook.id}/deliveries?status=pending`, { headers: account.headers })).json()).deliveries;
    expect(queued).toHaveLength(1);
    expect((await deliverDue(t.services, { now: later })).succeeded).toBe(1);
    const after = receiver.withId(queued[0].id)[0]!;
    expect(after.signature.split(' ')).toHaveLength(1);
    verifyWith(secret, after);
    expect(() => verifyWith(hook.secret, after)).toThrow(WebhookVerificationError);
  });
});

describe('events from real flows, each delivered exactly once', () => {
  let alice: Trader;
  let openEvents: any[];

  beforeAll(async () => {
    alice = await trader(t);
    openEvents = (await (await t.request('/api/trading/events')).json()).events.filter((e: any) => e.status === 'open');
  });

  /** Every delivery of this run must verify; answers the bodies for this account's webhook. */
  function verified(requests: ReceivedRequest[], secret: string) {
    expect(new Set(requests.map((r) => r.id)).size).toBe(requests.length);
    return requests.map((r) => verifyWith(secret, r) as any);
  }

  test('buy → sell → buy → resolution: order.filled per order, position.opened/closed/settled, event.resolved', async () => {
    const hook = await register(alice.account.headers);
    const bob = await trader(t);
    const bobsHook = await register(bob.account.headers, ['position.settled']);
    const event = openEvents[0];
    const winner = event.bands[event.bands.length - 1];

    const first = await buy(t, alice, { eventId: event.id, side: 'LONG', amount: 40 });
    expect(first.res.status).toBe(200);
    const sold = await sell(t, alice, { positionId: first.body.positionId, percentage: 100 });
    expect(sold.res.status).toBe(200);
    expect(sold.body.status).toBe('closed');
    const second = await buy(t, alice, { eventId: event.id, side: 'SHORT', amount: 30 });
    expect(second.res.status).toBe(200);
    const bobs = await buy(t, bob, { eventId: event.id, side: 'LONG', amount: 40 });
    expect(bobs.res.status).toBe(200);
    const resolved = await post(t, `/api/events/${event.id}/resolution`, dashboardHeaders(DASHBOARD_KEY, alice.account.accountId), { winningBandId: winner.id });
    expect(resolved.status).toBe(200);

    const got = await deliverAll();
    const mine = verified(got.filter((r) => r.path === '/hooks' && bodies([r])[0].data?.userId === alice.userId), hook.secret);
    const count = (type: string) => mine.filter((b) => b.type === type).length;
    const buyOrders = first.body.orders.length + second.body.orders.length;
    expect({
      filled: count('order.filled'),
      rejected: count('order.rejected'),
      opened: count('position.opened'),
      closed: count('position.closed'),
      settled: count('position.settled'),
      resolved: count('event.resolved'),
    }).toEqual({ filled: buyOrders + sold.body.orders.length, rejected: 0, opened: 2, closed: 1, settled: 1, resolved: 1 });

    // The data carries the public shapes' numbers.
    for (const order of [...first.body.orders, ...sold.body.orders, ...second.body.orders]) {
      const announced = mine.filter((b) => b.type === 'order.filled' && b.data.orderId === order.orderId);
      expect(announced).toHaveLength(1);
      expect(announced[0].data).toMatchObject({ bandId: order.bandId, side: order.side, status: order.status, size: order.size, filled: order.filled, price: order.price, userId: alice.userId, eventId: event.id });
    }
    const opened = mine.find((b) => b.type === 'position.opened' && b.data.positionId === first.body.positionId);
    expect(opened.data).toMatchObject({ eventId: event.id, side: 'LONG', status: 'open', size: first.body.size, cost: first.body.totalCost });
    const closed = mine.find((b) => b.type === 'position.closed');
    expect(closed.data).toMatchObject({ positionId: first.body.positionId, status: 'closed', closeReason: 'sold', size: 0, realizedPnl: sold.body.realizedPnl });
    const [settlement] = (await api(t, alice, 'GET', `/api/trading/settlements?positionId=${second.body.positionId}`)).body.settlements;
    expect(mine.find((b) => b.type === 'position.settled').data).toMatchObject({
      settlementId: settlement.id,
      positionId: second.body.positionId,
      proceeds: settlement.proceeds,
      realizedPnl: settlement.realizedPnl,
      units: settlement.units,
      outcome: 'resolved',
      winningBandId: winner.id,
    });
    expect(mine.find((b) => b.type === 'event.resolved').data).toEqual({ eventId: event.id, status: 'resolved', winningBandId: winner.id, winningBandLabel: winner.label, userId: alice.userId, openPositions: 1 });

    // Bob's webhook got only what it subscribed to; nothing reached anyone twice.
    const bobsBodies = verified(got.filter((r) => bodies([r])[0].data?.userId === bob.userId), bobsHook.secret);
    expect(bobsBodies.map((b) => b.type)).toEqual(['position.settled']);
    // Every event of Alice's account was delivered exactly once, and each carries the outbox's id.
    const outbox = await t.database.db.select().from(accountEvents).where(eq(accountEvents.accountId, alice.account.accountId));
    expect(mine.map((b) => b.id).sort()).toEqual(outbox.filter((e) => ALL_EVENTS.includes(e.type as never)).map((e) => e.id).sort());
    expect(await deliverAll()).toEqual([]);
  });

  test('a buy the venue refuses in part: order.rejected once, the fills and their sell-back announced, the position closed as buy-failed', async () => {
    let faulty!: FaultyVenue;
    const app = await createTradingApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', MARKET_DATA_TTL_MS: '0' }, { database: t.database, wrap: (venue) => (faulty = new FaultyVenue(venue)) });
    try {
      const carol = await trader(app);
      const hook = await register(carol.account.headers, ['order.filled', 'order.rejected', 'position.opened', 'position.closed'], undefined, app);
      faulty.faultFor = (n) => (n === 2 ? 'rejected' : undefined);
      const refused = await buy(app, carol, { eventId: openEvents[1].id, side: 'LONG', amount: 30 });
      expect(refused.res.status).toBe(422);
      const positionId = String(refused.body.message.match(/pos_\w+/)![0]);
      const got = verified((await deliverAll(app)).filter((r) => JSON.parse(r.body).data?.positionId === positionId), hook.secret);
      const orderRows = await t.database.db.select().from(orders).where(eq(orders.positionId, positionId));
      expect(orderRows.filter((o) => o.status === 'PENDING')).toEqual([]);
      for (const order of orderRows) {
        const announced = got.filter((b) => b.data.orderId === order.id);
        expect(announced.map((b) => b.type)).toEqual([order.filledMicros > 0 ? 'order.filled' : 'order.rejected']);
      }
      const rejected = got.filter((b) => b.type === 'order.rejected');
      expect(rejected).toHaveLength(1);
      expect(rejected[0].data).toMatchObject({ status: 'REJECTED', reason: 'rejected-by-venue', filled: 0, purpose: 'open' });
      expect(got.filter((b) => b.data.purpose === 'unwind').length).toBeGreaterThan(0);
      expect(got.filter((b) => b.type.startsWith('position.')).map((b) => [b.type, b.data.closeReason])).toEqual([['position.closed', 'buy-failed']]);
    } finally {
      await app.close();
    }
  });

  test('positions/sync closing a position whose tokens left the wallet: position.closed (tokens-gone), once', async () => {
    const dave = await trader(t);
    const hook = await register(dave.account.headers, ['position.closed', 'position.opened']);
    const bought = await buy(t, dave, { eventId: openEvents[2].id, side: 'LONG', amount: 30 });
    expect(bought.res.status).toBe(200);
    await ledgerOf(t).setHoldings(dave, new Map());
    await api(t, dave, 'PUT', '/api/trading/settings', { walletAddress: dave.userId });
    for (let i = 0; i < 2; i++) expect((await api(t, dave, 'POST', '/api/trading/positions/sync', {})).res.status).toBe(200);
    const got = verified((await deliverAll()).filter((r) => JSON.parse(r.body).data?.userId === dave.userId), hook.secret);
    // Deliveries are sent several at a time: order them by when the events happened.
    got.sort((x, y) => x.timestamp.localeCompare(y.timestamp));
    expect(got.map((b) => [b.type, b.data.positionId, b.data.closeReason ?? null])).toEqual([
      ['position.opened', bought.body.positionId, null],
      ['position.closed', bought.body.positionId, 'tokens-gone'],
    ]);
  });

  test('balance.low: once per crossing below BALANCE_LOW_USD, re-armed only by a credit that lifts the balance back above it', async () => {
    const account: FundedAccount = await fundedAccount(t, { usd: 2 });
    const hook = await register(account.headers, ['balance.low']);
    const db = t.database.db;
    const spend = async (usd: number, requests: number) => {
      await setAccountRate(db, { accountId: account.accountId, costPerRequestMicros: Math.round(usd * 1_000_000) });
      for (let i = 0; i < requests; i++) expect((await t.request('/api/billing', { headers: account.headers })).status).toBe(200);
    };
    const low = async () => (await checkBalanceLow(t.services)).includes(account.accountId);

    expect(await low()).toBe(false); // $2 less the registration: above $1
    await spend(0.6, 2); // → under $1
    expect(await low()).toBe(true);
    expect(await low()).toBe(false); // the same crossing
    await creditAccount(db, { accountId: account.accountId, amountMicros: 100_000, reference: 'small' }); // still under $1
    expect(await low()).toBe(false);
    await creditAccount(db, { accountId: account.accountId, amountMicros: 5_000_000, reference: 'refill' }); // above again
    expect(await low()).toBe(false);
    await spend(2.5, 2); // under again: a new crossing
    expect(await low()).toBe(true);
    expect(await low()).toBe(false);

    const events = await db.select().from(accountEvents).where(and(eq(accountEvents.accountId, account.accountId), eq(accountEvents.type, 'balance.low')));
    expect(events).toHaveLength(2);
    const ids = new Set(events.map((e) => e.id));
    const got = verified((await deliverAll()).filter((r) => ids.has(JSON.parse(r.body).id)), hook.secret);
    expect(got.map((b) => b.id).sort()).toEqual([...ids].sort());
    for (const b of got) {
      expect([b.type, b.data.threshold, typeof b.data.balance]).toEqual(['balance.low', 1, 'number']);
      expect(b.data.balance).toBeLessThan(1);
    }
  });

  test('balance.low looks only at funded prepaid accounts under the threshold: unfunded $0 accounts cost no event lookup', async () => {
    const db = t.database.db;
    const tag = `bl-${Date.now()}`;
    for (let i = 0; i < 40; i++) await ensureAccount(db, `${tag}-unfunded-${i}`); // $0, never funded
    const small = await fundedAccount(t, { usd: 0.5 }); // funded, but never to the threshold
    await fundedAccount(t, { usd: 5 }); // funded, above it
    const threshold = t.config.balanceLowMicros;
    expect((await checkBalanceLow(t.services)).filter((id) => id.startsWith(tag) || id === small.accountId)).toEqual([]);

    // The plan: the last-balance.low lookup runs once per funded account under the threshold, not once per account under it.
    const count = async (funded: boolean) =>
      Number(
        resultRows<{ n: number }>(
          await db.execute(sql`select count(*)::int as n from accounts a where a.billing_plan = 'prepaid' and a.balance_micros < ${threshold}
                                 and (${!funded} or exists (select 1 from credits c where c.account_id = a.id))`),
        )[0]!.n,
      );
    const [fundedLow, allLow] = [await count(true), await count(false)];
    expect(allLow - fundedLow).toBeGreaterThanOrEqual(40);
    const [row] = resultRows<Record<string, unknown>>(await db.execute(sql`explain (analyze, format json) ${balanceLowCrossingsSql(threshold)}`));
    const raw = Object.values(row!)[0];
    const plan = typeof raw === 'string' ? JSON.parse(raw) : raw;
    let loops = 0;
    const walk = (node: any) => {
      if (node['Relation Name'] === 'account_events') loops += node['Actual Loops'];
      for (const child of node.Plans ?? []) walk(child);
    };
    walk(plan[0].Plan);
    expect(loops).toBe(fundedLow);
  });

  test('secrets never appear in a log line', () => {
    expect(secretsSeen.length).toBeGreaterThan(5);
    const logs = logLines.join('\n');
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain('whsec_');
    for (const secret of secretsSeen) expect(logs).not.toContain(secret.slice(6, 30));
  });
});

describe('event.resolved with many holders', () => {
  /** The transaction, counting the statements sent through it. */
  function counting(tx: Db): { db: Db; statements: () => number } {
    let n = 0;
    const db = new Proxy(tx, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value === 'function' && ['execute', 'select', 'insert', 'update', 'delete', 'transaction', 'selectDistinct'].includes(String(key))) {
          return (...args: unknown[]) => (n++, value.apply(target, args));
        }
        return value;
      },
    });
    return { db, statements: () => n };
  }

  test('one statement writes every holder\'s event and only the subscribed active webhooks\' deliveries', async () => {
    const db = t.database.db;
    const eventId = `wh-many-holders-${Date.now()}`;
    const [a, b, c, d] = await Promise.all([fundedAccount(t), fundedAccount(t), fundedAccount(t), fundedAccount(t)]);
    const subscribed = await createWebhook(t.services, a!.accountId, { url: `${receiver.url}/resolved`, events: ['event.resolved'] });
    secretsSeen.push(subscribed.secret);
    secretsSeen.push((await createWebhook(t.services, a!.accountId, { url: `${receiver.url}/orders-only`, events: ['order.filled'] })).secret);
    const removed = await createWebhook(t.services, a!.accountId, { url: `${receiver.url}/deleted`, events: ['event.resolved'] });
    secretsSeen.push(removed.secret);
    await deleteWebhook(db, a!.accountId, removed.id);
    let n = 0;
    const position = (accountId: string, userId: string, status: 'open' | 'pending' | 'closed' | 'settled', event = eventId) => ({
      id: `pos_many_${eventId}_${++n}`,
      accountId,
      userId,
      eventId: event,
      side: 'LONG' as const,
      floorL: 0.1,
      floorS: 0.1,
      status,
      unitsMicros: 1_000_000,
    });
    const many = Array.from({ length: 40 }, (_, i) => `0xmany${String(i).padStart(2, '0')}`);
    await db.insert(positions).values([
      position(a!.accountId, 'u1', 'open'),
      position(a!.accountId, 'u1', 'open'),
      position(a!.accountId, 'u1', 'closed'),
      position(a!.accountId, 'u2', 'pending'),
      position(a!.accountId, 'u3', 'open', 'another-event'),
      position(b!.accountId, 'u1', 'open'),
      position(c!.accountId, 'gone', 'closed'),
      position(c!.accountId, 'paid', 'settled'),
      ...many.map((user) => position(d!.accountId, user, 'open')),
    ]);

    const outcome = { eventId, status: 'resolved' as const, winningBandId: 'band-1', winningBandLabel: '$1T+' };
    const run = async (o: Parameters<typeof emitEventResolved>[1]) =>
      db.transaction(async (tx) => {
        const counted = counting(tx as unknown as Db);
        const written = await emitEventResolved(counted.db, o);
        return { written, statements: counted.statements() };
      });
    expect(await run(outcome)).toEqual({ written: 3 + many.length, statements: 1 });

    const written = await db.select().from(accountEvents).where(and(eq(accountEvents.type, 'event.resolved'), sql`${accountEvents.data}->>'eventId' = ${eventId}`));
    expect(written).toHaveLength(3 + many.length);
    const holder = (accountId: string, userId: string) => written.filter((e) => e.accountId === accountId && e.userId === userId);
    expect(holder(a!.accountId, 'u1').map((e) => e.data)).toEqual([{ ...outcome, userId: 'u1', openPositions: 2 }]);
    expect(holder(a!.accountId, 'u2').map((e) => e.data)).toEqual([{ ...outcome, userId: 'u2', openPositions: 1 }]);
    expect(holder(b!.accountId, 'u1').map((e) => e.data)).toEqual([{ ...outcome, userId: 'u1', openPositions: 1 }]);
    expect(holder(a!.accountId, 'u3')).toEqual([]); // another event's position
    expect(written.filter((e) => e.accountId === c!.accountId)).toEqual([]); // closed and settled hold nothing
    for (const user of many) expect(holder(d!.accountId, user)).toHaveLength(1);
    const ids = written.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^evt_[1-9A-HJ-NP-Za-km-z]{22}$/);

    // Deliveries: the subscribed active webhook only, one per event of its account; signed bodies as emitAccountEvent writes them.
    const deliveries = await db.select().from(webhookDeliveries).where(inArray(webhookDeliveries.eventId, ids));
    expect(deliveries.map((x) => x.webhookId)).toEqual([subscribed.id, subscribed.id]);
    const got = (await deliverAll()).filter((r) => r.path === '/resolved');
    const bodiesSent = got.map((r) => verifyWith(subscribed.secret, r) as any);
    expect(bodiesSent.map((x) => x.data).sort((x, y) => x.userId.localeCompare(y.userId))).toEqual([
      { ...outcome, userId: 'u1', openPositions: 2 },
      { ...outcome, userId: 'u2', openPositions: 1 },
    ]);
    for (const x of bodiesSent) {
      expect(x).toEqual({ id: expect.stringMatching(/^evt_/), type: 'event.resolved', timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), data: expect.any(Object) });
      expect(ids).toContain(x.id);
    }

    // A correction announces itself: new events (new ids), the same holders.
    const voided = { eventId, status: 'voided' as const, winningBandId: null, winningBandLabel: null };
    expect(await run(voided)).toEqual({ written: 3 + many.length, statements: 1 });
    const again = await db.select().from(accountEvents).where(and(eq(accountEvents.type, 'event.resolved'), sql`${accountEvents.data}->>'eventId' = ${eventId}`));
    expect(new Set(again.map((e) => e.id)).size).toBe(2 * (3 + many.length));
    expect(again.filter((e) => e.data.status === 'voided').map((e) => e.data.winningBandId)).toEqual(Array(3 + many.length).fill(null));
    const corrections = (await deliverAll()).filter((r) => r.path === '/resolved').map((r) => verifyWith(subscribed.secret, r) as any);
    expect(corrections.map((x) => [x.data.userId, x.data.status]).sort()).toEqual([
      ['u1', 'voided'],
      ['u2', 'voided'],
    ]);
    // Nobody holding: nothing written.
    expect(await run({ ...outcome, eventId: `${eventId}-nobody` })).toEqual({ written: 0, statements: 1 });
  });
});

describe('deposit.credited', () => {
  const USDC: Address = '0x3c499c542cef5e3811e1192ce70d8cc03d5c3359';
  const DEPOSIT_ADDRESS: Address = '0x00000000000000000000000000000000deadbeef';
  const erc20 = parseAbi(['function mint(address to, uint256 value)', 'function transfer(address to, uint256 value) returns (bool)']);
  let evm: InProcessEvm;
  let d: TestApp;

  beforeAll(async () => {
    evm = await startEvm();
    await evm.deploy('MiniErc20', [], USDC);
    d = await createTestApp(
      { DEPOSIT_ADDRESS, DEPOSIT_SCAN_INTERVAL_MS: '0', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
      { database: t.database, depositChain: createDepositChain(evm.client, { finalityDepth: 2 }) },
    );
  }, 60_000);
  afterAll(async () => {
    await d?.close();
    await evm?.close();
  });

  test('a customer registers with their session, deposits, claims: deposit.credited once, balance.changed in the outbox', async () => {
    const customer = await signIn(d);
    // Registering a webhook is billed with a session as with a key: the account needs a balance first.
    expect((await post(d, '/api/webhooks', customer.headers, { url: 'https://hooks.example.com/x', events: ['deposit.credited'] })).status).toBe(402);
    await fundedAccount(d, { accountId: customer.accountId, usd: 1 });
    const hook = await register(customer.headers, ['deposit.credited'], undefined, d);
    await evm.write({ address: USDC, abi: erc20, functionName: 'mint', args: [customer.wallet.address, 25_500_001n] });
    const txHash: Hex = (await evm.write({ address: USDC, abi: erc20, functionName: 'transfer', args: [DEPOSIT_ADDRESS, 25_500_001n], from: customer.wallet.address })).transactionHash;
    const claim = () => post(d, '/api/accounts/deposits', customer.headers, { txHash });
    expect((await (await claim()).json()).deposits[0].status).toBe('pending');
    expect(await deliverAll(d)).toEqual([]);
    await evm.request('hardhat_mine', ['0x5']);
    const credited = (await (await claim()).json()).deposits[0];
    expect(credited.status).toBe('credited');
    expect((await claim()).status).toBe(200); // again: nothing more

    const got = (await deliverAll(d)).map((r) => verifyWith(hook.secret, r) as any);
    expect(got).toEqual([
      {
        id: expect.stringMatching(/^evt_/),
        type: 'deposit.credited',
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        data: { depositId: credited.id, chainId: credited.chainId, txHash: credited.txHash, logIndex: credited.logIndex, token: credited.token, from: credited.from, amount: 25.500001 },
      },
    ]);
    const outbox = (await d.database.db.select().from(accountEvents).where(and(eq(accountEvents.accountId, customer.accountId), inArray(accountEvents.type, ['deposit.credited', 'balance.changed']))))
      .filter((e) => e.type === 'deposit.credited' || (e.data as { reason?: string }).reason === 'deposit'); // not the $1 funding
    expect(outbox.map((e) => [e.type, e.data])).toEqual(
      expect.arrayContaining([
        ['deposit.credited', expect.objectContaining({ amount: 25.500001 })],
        ['balance.changed', { balance: 26.498001, change: 25.500001, reason: 'deposit', depositId: credited.id }], // $1 funding − $0.002 registration + the deposit
      ]),
    );
    expect(outbox).toHaveLength(2);
  });
});
