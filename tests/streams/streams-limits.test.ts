/**
 * Account streams cannot be multiplied by minting credentials, and cost the same whoever holds them
 * (docs/streams.md "Billing and limits", docs/decisions.md §11), over a real socket on this run's database:
 *  - one wallet signing in 40 times and opening 5 streams per session from one address holds at most
 *    STREAM_MAX_PER_ACCOUNT / STREAM_MAX_PER_IP streams; the rest are 429 with Retry-After; the limit
 *    follows the account to other addresses, and the address's budget covers public streams and other
 *    accounts too;
 *  - an account's keys and sessions share its limit;
 *  - a session's held stream is charged one standard request per period to the session's account, and
 *    ends with an `error` event once the session is signed out (401) or the balance runs dry (402);
 *    the same over the tRPC subscription streams.account.
 * The client address comes from x-test-ip (the test server stands in for a trusted proxy).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { resultRows } from '../../db/prepared.ts';
import { billingSummary } from '../../server/accounts/billing.ts';
import { configureStreams, liftStreamIdleTimeout, stopStreams, streamsOf } from '../../server/streams/registry.ts';
import { FetchEventSource } from '../../server/streams/sse-client.ts';
import { readSse } from '../harness/sse-reading.ts';
import { createTRPCClient, httpLink, httpSubscriptionLink, splitLink } from '@trpc/client';
import type { AppRouter } from '../../routers/index.ts';
import { createTestApp, type TestApp } from '../harness/app.ts';
import { fundedAccount, newUserId } from '../harness/factories.ts';
import { signIn, type SignedIn } from '../harness/sign-in.ts';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';

setDefaultTimeout(120_000);

const PATH = '/api/trading/stream/account';
const PER_KEY = 5;
const PER_ACCOUNT = 20; // the defaults, so the test also pins them
const PER_IP = 20;

let t: TestApp;
let server: ReturnType<typeof Bun.serve>;
let base: string;

beforeAll(async () => {
  t = await createTestApp({
    // The defaults of the stream limits are what is tested; sign-in limits are another test's subject.
    SESSION_MAX_PER_ACCOUNT: '100',
    RATE_LIMIT_SIGN_IN_RPS: '100000',
    RATE_LIMIT_SIGN_IN_BURST: '100000',
  });
  expect(t.config.streams).toMatchObject({ maxPerKey: PER_KEY, maxPerAccount: PER_ACCOUNT, maxPerIp: PER_IP });
  // Billing periods are driven by hand (chargeHeldStreams): the clock's would come only after an hour.
  configureStreams(t.services, { billingPeriodMs: 3_600_000, pollMs: 50 });
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (request, srv) => {
      liftStreamIdleTimeout(request, srv);
      return t.app.handle(request, { clientIp: request.headers.get('x-test-ip') ?? srv.requestIP(request)?.address });
    },
  });
  base = `http://127.0.0.1:${server.port}`;
}, 60_000);
afterAll(async () => {
  await stopStreams(t.services);
  server.stop(true);
  await t.close();
}, 60_000);

// --- helpers -------------------------------------------------------------------------------------

interface Held {
  response: Response;
  errors: any[];
  readies: number;
  done: boolean;
  ended: Promise<void>;
  close(): Promise<void>;
}

/** Asks for an account stream; a 200 is read in the background until `ready`, anything else is answered as is. */
async function attempt(headers: Record<string, string>, url = `${base}${PATH}`): Promise<Held | Response> {
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers } });
  if (response.status !== 200) return response;
  const reader = response.body!.getReader();
  const held: Held = {
    response,
    errors: [],
    readies: 0,
    done: false,
    ended: Promise.resolve(),
    async close() {
      await reader.cancel().catch(() => undefined);
      await held.ended;
    },
  };
  held.ended = readSse(reader, (item) => {
    if (item.kind !== 'event') return;
    if (item.event.type === 'ready') held.readies++;
    if (item.event.type === 'error') held.errors.push(JSON.parse(item.event.data));
  }).then(() => {
    held.done = true;
  });
  await until(() => held.readies > 0 || held.done, 'the ready event');
  return held;
}

async function open(headers: Record<string, string>, url?: string): Promise<Held> {
  const result = await attempt(headers, url);
  if (result instanceof Response) throw new Error(`stream refused: ${result.status} ${await result.text()}`);
  return result;
}

/** A 429 in our shape with Retry-After; answers its message. */
async function expectLimited(result: Held | Response): Promise<string> {
  if (!(result instanceof Response)) throw new Error('expected a refusal, the stream opened');
  expect(result.status).toBe(429);
  expect(Number(result.headers.get('retry-after'))).toBeGreaterThan(0);
  const body = await result.json();
  expect(body).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
  return body.message;
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000) {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

const count = async (query: ReturnType<typeof sql>) => Number(resultRows<{ n: string }>(await t.database.db.execute(query))[0]!.n);
const accountLeases = (accountId: string) => count(sql`select count(*) as n from stream_leases where account_id = ${accountId} and expires_at > now()`);
const addressLeases = (ip: string) => count(sql`select count(*) as n from stream_leases where client_ip = ${ip} and expires_at > now()`);
const usageRows = (requestId: string) => count(sql`select count(*) as n from usage_records where request_id = ${requestId}`);
const balanceOf = async (accountId: string) => (await billingSummary(t.database.db, accountId)).balanceMicros;
const sessionHeaders = (session: SignedIn, ip: string, userId: string) => ({ cookie: session.cookie, 'x-user-id': userId, 'x-test-ip': ip });

async function closeAll(streams: Held[], accountId: string) {
  for (const s of streams) await s.close();
  await until(async () => (await accountLeases(accountId)) === 0, 'every lease to be freed');
}

// --- the tests -----------------------------------------------------------------------------------

describe('account streams are limited per account and per client address, whatever the credential', () => {
  test(`40 sign-ins of one wallet × 5 streams each from one address: ${PER_ACCOUNT} open, the rest 429; the limit follows the account, and the address's budget covers every stream`, async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const ip = '198.51.100.40';
    const sessions: SignedIn[] = [];
    for (let i = 0; i < 40; i++) sessions.push(await signIn(t, wallet));
    const accountId = sessions[0]!.accountId;
    expect(new Set(sessions.map((s) => s.accountId))).toEqual(new Set([accountId]));
    await fundedAccount(t, { accountId, usd: 10 }); // opens are billed: a funded account, as an attacker's would be
    const user = newUserId();

    const opened: Held[] = [];
    const refused: string[] = [];
    for (const session of sessions) {
      // Each session's five at once: the count is exact under concurrent opens too.
      const results = await Promise.all(Array.from({ length: 5 }, () => attempt(sessionHeaders(session, ip, user))));
      for (const result of results) {
        if (result instanceof Response) refused.push(await expectLimited(result));
        else opened.push(result);
      }
    }
    expect(opened).toHaveLength(PER_ACCOUNT);
    expect(refused).toHaveLength(200 - PER_ACCOUNT);
    expect(await accountLeases(accountId)).toBe(PER_ACCOUNT);
    expect(await addressLeases(ip)).toBe(PER_IP);

    // From another address the account is still full (its limit is the account's, not the address's)...
    const elsewhere = await attempt(sessionHeaders(sessions[39]!, '198.51.100.41', user));
    expect(await expectLimited(elsewhere)).toContain(`${PER_ACCOUNT} account streams may be open per account`);
    // ...and from this address, another wallet's account stream and a public stream find no room either.
    const neighbour = await signIn(t);
    await fundedAccount(t, { accountId: neighbour.accountId, usd: 1 });
    expect(await expectLimited(await attempt(sessionHeaders(neighbour, ip, user)))).toContain(`${PER_IP} streams may be open from one client address`);
    const publicStream = await fetch(`${base}/api/trading/stream?eventSlug=stripe-ipo`, { headers: { accept: 'text/event-stream', 'x-test-ip': ip } });
    expect(await expectLimited(publicStream)).toContain('account streams included');

    // A closed stream frees its slot for any credential of the account.
    await opened.pop()!.close();
    await until(async () => (await accountLeases(accountId)) < PER_ACCOUNT, 'the closed stream to free its slot');
    opened.push(await open(sessionHeaders(sessions[39]!, ip, user)));
    await closeAll(opened, accountId);
  }, 180_000); // 40 sign-ins and 200 opens: slow on a loaded machine

  test(`an account's API keys and sessions share its ${PER_ACCOUNT} streams (each credential still at most ${PER_KEY})`, async () => {
    const sessions = [await signIn(t)];
    const { accountId } = sessions[0]!;
    const key = await fundedAccount(t, { accountId, usd: 10 });
    const wallet = sessions[0]!.wallet;
    for (let i = 0; i < 3; i++) sessions.push(await signIn(t, wallet));
    const user = newUserId();
    const keyHeaders = { 'x-api-key': key.apiKey, 'x-user-id': user, 'x-test-ip': '203.0.113.1' };
    const opened: Held[] = [];
    for (let i = 0; i < PER_KEY; i++) opened.push(await open(keyHeaders));
    expect(await expectLimited(await attempt(keyHeaders))).toContain('per API key (or session)');
    // Three sessions, each from its own address: 15 more, and the account is full.
    for (let s = 1; s <= 3; s++) for (let i = 0; i < PER_KEY; i++) opened.push(await open(sessionHeaders(sessions[s]!, `203.0.113.${1 + s}`, user)));
    expect(await accountLeases(accountId)).toBe(PER_ACCOUNT);
    const fifth = await attempt(sessionHeaders(sessions[0]!, '203.0.113.9', user));
    expect(await expectLimited(fifth)).toContain('per account, over all its API keys and sessions');
    // A second key of the account, fresh and from a fresh address: the account is full all the same.
    const second = await fundedAccount(t, { accountId, usd: 0 });
    expect(await expectLimited(await attempt({ ...keyHeaders, 'x-api-key': second.apiKey, 'x-test-ip': '203.0.113.10' }))).toContain('per account');
    // A key's stream closed: a session may take its slot.
    await opened.shift()!.close();
    await until(async () => (await accountLeases(accountId)) < PER_ACCOUNT, 'the closed stream to free its slot');
    opened.push(await open(sessionHeaders(sessions[0]!, '203.0.113.9', user)));
    await closeAll(opened, accountId);
  });
});

describe("a session's stream is billed like a key's", () => {
  const cost = () => t.config.costPerRequestMicros;

  test('each period held is one standard request charged to the account (no key); signing out ends the stream with a 401 error event', async () => {
    const customer = await signIn(t);
    await fundedAccount(t, { accountId: customer.accountId, usd: 1 });
    const stream = await open(sessionHeaders(customer, '192.0.2.1', newUserId()));
    const requestId = stream.response.headers.get('x-request-id')!;
    const openRows = await usageRows(requestId); // the open's own admission (procedures/access.ts)
    const before = await balanceOf(customer.accountId);
    for (let period = 1; period <= 2; period++) {
      await streamsOf(t.services).chargeHeldStreams();
      expect(await usageRows(requestId)).toBe(openRows + period);
      expect(await balanceOf(customer.accountId)).toBe(before - period * cost());
    }
    const rows = resultRows<{ apiKeyId: string | null; path: string; accountId: string }>(
      await t.database.db.execute(sql`select api_key_id as "apiKeyId", path, account_id as "accountId" from usage_records where request_id = ${requestId}`),
    );
    expect(rows.filter((r) => r.path === PATH)).toHaveLength(openRows + 2);
    expect(rows.every((r) => r.apiKeyId === null && r.accountId === customer.accountId)).toBe(true);

    expect((await t.request('/api/auth/logout', { method: 'POST', headers: customer.headers })).status).toBe(200);
    await streamsOf(t.services).chargeHeldStreams();
    await until(() => stream.done, 'the end of the stream');
    expect(stream.errors).toHaveLength(1);
    expect(stream.errors[0]).toMatchObject({ code: 'UNAUTHORIZED', status: 401, requestId });
    expect(await balanceOf(customer.accountId)).toBe(before - 2 * cost()); // the refused period cost nothing
    await until(async () => (await accountLeases(customer.accountId)) === 0, 'the lease to be freed');
  });

  test('a balance run dry ends the stream with a 402 error event', async () => {
    const customer = await signIn(t);
    await fundedAccount(t, { accountId: customer.accountId, usd: 1 });
    const stream = await open(sessionHeaders(customer, '192.0.2.2', newUserId()));
    // Whatever the open cost, leave exactly one period's worth.
    await t.database.db.execute(sql`update accounts set balance_micros = ${cost()} where id = ${customer.accountId}`);
    await streamsOf(t.services).chargeHeldStreams();
    expect(await balanceOf(customer.accountId)).toBe(0);
    expect(stream.done).toBe(false);
    await streamsOf(t.services).chargeHeldStreams();
    await until(() => stream.done, 'the end of the stream');
    expect(stream.errors).toHaveLength(1);
    expect(stream.errors[0]).toMatchObject({ code: 'INSUFFICIENT_BALANCE', status: 402 });
    await until(async () => (await accountLeases(customer.accountId)) === 0, 'the lease to be freed');
  });

  test('over tRPC (streams.account) too: a period charged to the session, and after sign-out the subscription ends with a 401', async () => {
    const customer = await signIn(t);
    await fundedAccount(t, { accountId: customer.accountId, usd: 1 });
    const headers = sessionHeaders(customer, '192.0.2.3', newUserId());
    class SessionEventSource extends FetchEventSource {
      constructor(url: string | URL, init?: ConstructorParameters<typeof FetchEventSource>[1]) {
        super(url, { ...init, headers });
      }
    }
    const client = createTRPCClient<AppRouter>({
      links: [
        splitLink({
          condition: (op) => op.type === 'subscription',
          true: httpSubscriptionLink({ url: `${base}/trpc`, EventSource: SessionEventSource as never }),
          false: httpLink({ url: `${base}/trpc`, headers }),
        }),
      ],
    });
    const received: unknown[] = [];
    const errors: any[] = [];
    const subscription = client.streams.account.subscribe({}, { onData: (m) => received.push(m), onError: (e) => errors.push(e) });
    try {
      await until(() => received.length > 0, 'the ready message');
      const rows = () => count(sql`select count(*) as n from usage_records where account_id = ${customer.accountId} and path = '/trpc/streams.account' and api_key_id is null`);
      const opened = await rows(); // the open's own admission
      const before = await balanceOf(customer.accountId);
      await streamsOf(t.services).chargeHeldStreams();
      expect(await rows()).toBe(opened + 1);
      expect(await balanceOf(customer.accountId)).toBe(before - cost());
      expect((await t.request('/api/auth/logout', { method: 'POST', headers: customer.headers })).status).toBe(200);
      await streamsOf(t.services).chargeHeldStreams();
      await until(() => errors.length > 0, 'the error');
      expect(errors[0].data?.api).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
      await until(async () => (await accountLeases(customer.accountId)) === 0, 'the lease to be freed');
    } finally {
      subscription.unsubscribe();
    }
  });
});
