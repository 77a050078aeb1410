/**
 * The private account stream (docs/streams.md) over a real socket, on this run's
 * database: refusals before the stream opens (400/401/402/429 in our shape), filtering by account and
 * trading user, resume by seq, the outbox ordering trap (two overlapping transactions committing out
 * of order; on PGlite, which has one connection, the same visibility order made by hand), billing
 * (one request to open, one per period held, the stream ended by a refused charge; a session's stream
 * billed the same way — more in streams-limits.test.ts),
 * the per-key limit across two instances, and the tRPC subscription streams.account. Holes in seq:
 * given up only when nothing can fill them any more (PostgreSQL: no transaction that could is open),
 * a transaction open past the grace still delivered, the last-resort give-up with its warning, and a
 * jump of 50,000 seqs held as one range. No test depends on this machine's speed: each waits for the
 * condition it needs, and "nothing else arrived" is checked against a later event that did arrive.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { createTRPCClient, httpLink, httpSubscriptionLink, splitLink } from '@trpc/client';
import { sql } from 'drizzle-orm';
import type { AppRouter } from '../../routers/index.ts';
import { resultRows } from '../../db/prepared.ts';
import type { AccountEventType } from '../../db/schema.ts';
import { billingSummary } from '../../server/accounts/billing.ts';
import { emitAccountEvent } from '../../server/notifications/emit.ts';
import { inRanges } from '../../server/streams/ids.ts';
import { configureStreams, liftStreamIdleTimeout, stopStreams, streamsOf } from '../../server/streams/registry.ts';
import { FetchEventSource, type SseEvent } from '../../server/streams/sse-client.ts';
import { readSse } from '../harness/sse-reading.ts';
import { createTestApp, type TestApp } from '../harness/app.ts';
import { engine } from '../harness/databases.ts';
import { fundedAccount, newUserId, type FundedAccount } from '../harness/factories.ts';
import { signIn } from '../harness/sign-in.ts';

// Generous: every wait below is for a condition, and a loaded machine only makes them slower.
setDefaultTimeout(60_000);

const PERIOD_MS = 400;
const MAX_PER_KEY = 2;
const PATH = '/api/trading/stream/account';

let t: TestApp;
let server: ReturnType<typeof Bun.serve>;
let base: string;

function serve(app: TestApp) {
  return Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (request, srv) => {
      liftStreamIdleTimeout(request, srv);
      return app.app.handle(request, { clientIp: srv.requestIP(request)?.address });
    },
  });
}

const TIMING = { billingPeriodMs: PERIOD_MS, pollMs: 30, gapGraceMs: 1_000, heartbeatMs: 5_000 };

let anchor: OpenStream;
beforeAll(async () => {
  t = await createTestApp({ STREAM_MAX_PER_KEY: String(MAX_PER_KEY) });
  configureStreams(t.services, TIMING);
  server = serve(t);
  base = `http://127.0.0.1:${server.port}`;
  // One stream held all along keeps this instance's tailer reading (caughtUp() watches it).
  const holder = await fundedAccount(t, { usd: 1_000 });
  anchor = await open(userHeaders(holder, newUserId()));
}, 60_000);
afterAll(async () => {
  await anchor.close();
  await stopStreams(t.services);
  server.stop(true);
  await t.close();
}, 60_000);

// --- helpers -------------------------------------------------------------------------------------

interface OpenStream {
  response: Response;
  /** Account events (the `message` events), parsed. */
  messages: Array<{ id: string; data: any }>;
  readies: Array<{ id: string; data: any }>;
  errors: any[];
  ended: Promise<void>;
  done: boolean;
  until(test: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** The events a test emitted itself (data.n set): credits made by the factories announce balance changes too. */
const mine = (stream: { messages: Array<{ id: string; data: any }> }) => stream.messages.filter((m) => m.data.data?.n !== undefined);
const ns = (stream: { messages: Array<{ id: string; data: any }> }) => mine(stream).map((m) => m.data.data.n);

function reading(response: Response): OpenStream {
  const stream: OpenStream = {
    response,
    messages: [],
    readies: [],
    errors: [],
    done: false,
    ended: Promise.resolve(),
    async until(check, what, timeoutMs = 20_000) {
      const deadline = performance.now() + timeoutMs;
      while (!check()) {
        if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(stream.messages.map((m) => [m.id, m.data.type, m.data.userId]))}`);
        await Bun.sleep(10);
      }
    },
    async close() {
      await reader.cancel().catch(() => undefined);
      await stream.ended;
    },
  };
  const reader = response.body!.getReader();
  stream.ended = readSse(reader, (item) => {
    if (item.kind !== 'event') return;
    const e: SseEvent = item.event;
    const entry = { id: e.lastEventId, data: JSON.parse(e.data) };
    if (e.type === 'message') stream.messages.push(entry);
    else if (e.type === 'ready') stream.readies.push(entry);
    else if (e.type === 'error') stream.errors.push(entry.data);
  }).then(() => {
    stream.done = true;
  });
  return stream;
}

async function open(headers: Record<string, string>, url = `${base}${PATH}`): Promise<OpenStream> {
  if (anchor) await caughtUp();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers } });
  if (response.status !== 200) throw new Error(`stream refused: ${response.status} ${await response.text()}`);
  expect(response.headers.get('content-type')).toStartWith('text/event-stream');
  const stream = reading(response);
  await stream.until(() => stream.readies.length > 0, 'the ready event');
  return stream;
}

const userHeaders = (account: FundedAccount, userId: string) => ({ 'x-api-key': account.apiKey, 'x-user-id': userId });

async function emit(accountId: string, userId: string | null, type: AccountEventType, data: Record<string, unknown> = {}) {
  return emitAccountEvent(t.database.db, { accountId, userId, type, data });
}

const balanceOf = async (accountId: string) => (await billingSummary(t.database.db, accountId)).balanceMicros;
const usageRows = async (requestId: string) =>
  Number(resultRows<{ n: string }>(await t.database.db.execute(sql`select count(*) as n from usage_records where request_id = ${requestId}`))[0]!.n);

const cost = () => t.config.costPerRequestMicros;

/** Live leases (stream slots) of an API key, across instances. */
const keyLeases = async (apiKey: string) => {
  const keyHash = new Bun.CryptoHasher('sha256').update(apiKey).digest('hex');
  return Number(resultRows<{ n: string }>(await t.database.db.execute(sql`select count(*) as n from stream_leases where key_hash = ${keyHash} and expires_at > now()`))[0]!.n);
};

/**
 * Waits until this instance's tailer has read every committed row. A new stream starts where the
 * tailer is (so it never misses a row committing as it opens); the factories' credits announce
 * balance changes, and the tests open their streams after those are read, so what they see is theirs.
 */
async function caughtUp() {
  const rows = resultRows<{ max: string | number | null }>(await t.database.db.execute(sql`select max(seq) as max from account_events`));
  const max = Number(rows[0]!.max ?? 0);
  const deadline = performance.now() + 20_000;
  while (streamsOf(t.services).accounts.state().cursor.hwm < max && performance.now() < deadline) await Bun.sleep(5);
  expect(streamsOf(t.services).accounts.state().cursor.hwm).toBeGreaterThanOrEqual(max);
}

/** Waits for `check` to hold, however long this machine takes (up to `timeoutMs`). */
async function eventually(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000) {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

const hub = () => streamsOf(t.services).accounts;
const pendingHere = () => hub().state().cursor.pending;

/** Makes the identity hand out `next` + 1 next (setval is not transactional: a jump, as a burst of rolled-back inserts leaves). */
async function jumpSeqTo(next: number) {
  await t.database.db.execute(sql`select setval(pg_get_serial_sequence('account_events', 'seq'), ${next})`);
}

/**
 * PostgreSQL: a transaction that emits an event (taking its seq now) and commits only when `commit()`
 * is called — a transaction still open while later ones commit.
 */
async function heldTransaction(event: { accountId: string; userId: string; n: number }) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let inserted!: () => void;
  const insertedP = new Promise<void>((resolve) => (inserted = resolve));
  const done = t.database.db.transaction(async (tx) => {
    await emitAccountEvent(tx, { accountId: event.accountId, userId: event.userId, type: 'order.filled', data: { n: event.n } });
    inserted();
    await gate;
  });
  await insertedP;
  return {
    async commit() {
      release();
      await done;
    },
  };
}

/** The next identity value, consumed: a hole in `seq`, as an uncommitted or rolled-back transaction leaves. */
async function takeSeq(): Promise<number> {
  const rows = resultRows<{ seq: string | number }>(await t.database.db.execute(sql`select nextval(pg_get_serial_sequence('account_events', 'seq')) as seq`));
  return Number(rows[0]!.seq);
}

// --- tests ---------------------------------------------------------------------------------------

describe('GET /api/trading/stream/account refuses before the stream opens, in our error shape', () => {
  test('401 without or with a bad key, 400 without x-user-id or with a foreign Last-Event-ID, 402 without balance', async () => {
    const funded = await fundedAccount(t);
    const broke = await fundedAccount(t, { usd: 0 });
    const user = newUserId();
    const cases: Array<[Record<string, string>, number, string]> = [
      [{ 'x-user-id': user }, 401, 'UNAUTHORIZED'],
      [{ 'x-api-key': 'pipo_' + '1'.repeat(44), 'x-user-id': user }, 401, 'UNAUTHORIZED'],
      [{ 'x-api-key': funded.apiKey }, 400, 'BAD_REQUEST'],
      [{ ...userHeaders(funded, user), 'last-event-id': '1795549065059-0-v2uxy1' }, 400, 'BAD_REQUEST'],
      [userHeaders(broke, user), 402, 'INSUFFICIENT_BALANCE'],
    ];
    const before = await balanceOf(funded.accountId);
    const openBefore = streamsOf(t.services).open;
    for (const [headers, status, code] of cases) {
      const res = await fetch(`${base}${PATH}`, { headers: { accept: 'text/event-stream', ...headers } });
      expect(`${JSON.stringify(headers).slice(0, 60)} → ${res.status}`).toBe(`${JSON.stringify(headers).slice(0, 60)} → ${status}`);
      expect(res.headers.get('content-type')).toStartWith('application/json');
      expect(res.headers.get('x-request-cost-usd')).toBe('0');
      const body = await res.json();
      expect(Object.keys(body).sort()).toEqual(['code', 'message', 'requestId', 'status']);
      expect(body).toMatchObject({ code, status });
    }
    expect(await balanceOf(funded.accountId)).toBe(before);
    expect(streamsOf(t.services).open).toBe(openBefore);
  });
});

describe('filtering', () => {
  test("a stream gets its user's events and the account-wide ones; never another user's, never another account's", async () => {
    const x = await fundedAccount(t);
    const y = await fundedAccount(t);
    const [u1, u2] = [newUserId(), newUserId()];
    const x1 = await open(userHeaders(x, u1));
    const x2 = await open(userHeaders(x, u2));
    const y1 = await open(userHeaders(y, u1)); // the same user id under another account
    await emit(x.accountId, u1, 'order.filled', { n: 1 });
    await emit(x.accountId, u2, 'order.filled', { n: 2 });
    await emit(x.accountId, null, 'balance.changed', { n: 3 });
    await emit(y.accountId, u1, 'position.opened', { n: 4 });
    await emit(x.accountId, u1, 'position.opened', { n: 5 });
    await emit(y.accountId, null, 'deposit.credited', { n: 6 });
    // Later events every stream gets: once each has its own, anything it should not get would have come before.
    await emit(x.accountId, null, 'balance.changed', { n: 7 });
    await emit(y.accountId, null, 'balance.changed', { n: 8 });
    await x1.until(() => ns(x1).includes(7), 'x1');
    await x2.until(() => ns(x2).includes(7), 'x2');
    await y1.until(() => ns(y1).includes(8), 'y1');
    expect(ns(x1)).toEqual([1, 3, 5, 7]);
    expect(ns(x2)).toEqual([2, 3, 7]);
    expect(ns(y1)).toEqual([4, 6, 8]);
    expect(mine(x1).map((m) => m.data.type)).toEqual(['order.filled', 'balance.changed', 'position.opened', 'balance.changed']);
    expect(mine(x1)[1]!.data.userId).toBeNull();
    // Whatever else arrives (the factories' credits announce balance changes) is the account's, account-wide.
    for (const s of [x1, x2]) for (const m of s.messages) expect(m.data.userId === null || m.data.userId === (s === x1 ? u1 : u2)).toBe(true);
    for (const m of x1.messages) expect(Object.keys(m.data).sort()).toEqual(['data', 'id', 'seq', 'timestamp', 'type', 'userId']);
    // Seqs increase and each id says "everything up to here".
    expect(x1.messages.map((m) => m.data.seq)).toEqual([...x1.messages.map((m) => m.data.seq)].sort((a, b) => a - b));
    for (const s of [x1, x2, y1]) await s.close();
  });
});

describe('resume by Last-Event-ID', () => {
  test('a reconnect gets every event it missed, once, then ready, then live events', async () => {
    const x = await fundedAccount(t);
    const user = newUserId();
    const first = await open(userHeaders(x, user));
    expect(first.readies[0]!.data).toEqual({ type: 'ready', lastEventId: first.readies[0]!.id });
    await emit(x.accountId, user, 'order.filled', { n: 1 });
    await first.until(() => mine(first).length === 1, 'the first event');
    const lastId = first.messages.at(-1)!.id;
    await first.close();

    await emit(x.accountId, user, 'order.rejected', { n: 2 });
    await emit(x.accountId, newUserId(), 'order.filled', { n: 0 }); // another user's: never sent
    await emit(x.accountId, null, 'balance.low', { n: 3 });
    await emit(x.accountId, user, 'position.closed', { n: 4 });
    const second = await open({ ...userHeaders(x, user), 'last-event-id': lastId });
    expect(second.messages.map((m) => m.data.data.n)).toEqual([2, 3, 4]); // exactly what it missed, before ready
    expect(second.readies[0]!.id).toBe(second.messages.at(-1)!.id);
    await emit(x.accountId, user, 'position.settled', { n: 5 });
    await second.until(() => second.messages.length === 4, 'a live event after the resume');
    expect(second.messages.at(-1)!.data.data.n).toBe(5);
    const lastSecond = second.messages.at(-1)!.id;
    await second.close();

    // Nothing missed: only ready, then the next live event and nothing before it. And the JSON form
    // answers the same catch-up, as a page.
    const third = await open({ ...userHeaders(x, user), 'last-event-id': lastSecond });
    expect(third.messages).toEqual([]);
    await emit(x.accountId, user, 'order.filled', { n: 6 });
    await third.until(() => third.messages.length > 0, 'a live event after the empty resume');
    expect(third.messages.map((m) => m.data.data.n)).toEqual([6]);
    const lastThird = third.messages.at(-1)!.id;
    await third.close();
    const page = await (await fetch(`${base}${PATH}?lastEventId=${lastId}`, { headers: userHeaders(x, user) })).json();
    expect(page.events.map((e: any) => e.data.n)).toEqual([2, 3, 4, 5, 6]);
    expect(page.lastEventId).toBe(lastThird);
    const empty = await (await fetch(`${base}${PATH}?lastEventId=${page.lastEventId}`, { headers: userHeaders(x, user) })).json();
    expect(empty).toEqual({ events: [], lastEventId: page.lastEventId });
  });
});

describe('a long catch-up', () => {
  test('1,200 missed events (three pages, more than a client queue holds) arrive whole, in order, then ready', async () => {
    const x = await fundedAccount(t);
    const user = newUserId();
    const first = await open(userHeaders(x, user));
    const lastId = first.readies[0]!.id;
    await first.close();
    await t.database.db.execute(sql`
      insert into account_events (id, account_id, user_id, type, data)
      select 'evt_bulk_' || ${x.accountId} || '_' || g, ${x.accountId}, ${user}, 'order.filled', jsonb_build_object('n', g, 'pad', repeat('x', 400))
        from generate_series(1, 1200) g`);
    const resumed = await open({ ...userHeaders(x, user), 'last-event-id': lastId });
    expect(ns(resumed)).toEqual(Array.from({ length: 1200 }, (_, i) => i + 1));
    expect(resumed.readies[0]!.id).toBe(resumed.messages.at(-1)!.id);
    await resumed.close();
  });
});

describe('the outbox ordering trap', () => {
  test('a row that commits after a later seq was read is still delivered, and a resume from before its commit gets it', async () => {
    const x = await fundedAccount(t);
    const user = newUserId();
    const stream = await open(userHeaders(x, user));
    let commitEarly: () => Promise<void>;
    if (engine === 'postgres') {
      // Two overlapping transactions: T1 takes its seq first and commits last.
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let inserted!: () => void;
      const insertedP = new Promise<void>((resolve) => (inserted = resolve));
      const t1 = t.database.db.transaction(async (tx) => {
        await emitAccountEvent(tx, { accountId: x.accountId, userId: user, type: 'order.filled', data: { n: 1 } });
        inserted();
        await gate;
      });
      await insertedP;
      commitEarly = async () => {
        release();
        await t1;
      };
    } else {
      // PGlite has one connection (transactions cannot overlap): the same visibility order by hand —
      // a seq taken first, its row appearing only after a later row was read.
      const early = await takeSeq();
      commitEarly = async () => {
        await t.database.db.execute(sql`
          insert into account_events (seq, id, account_id, user_id, type, data) overriding system value
          values (${early}, ${`evt_late_${early}`}, ${x.accountId}, ${user}, 'order.filled', ${JSON.stringify({ n: 1 })}::jsonb)`);
      };
    }
    await emit(x.accountId, user, 'order.rejected', { n: 2 }); // T2: a later seq, committed now
    await stream.until(() => stream.messages.length === 1, 'the later row');
    const afterLater = stream.messages[0]!;
    expect(afterLater.data.data.n).toBe(2);
    expect(afterLater.id).toBe(`${afterLater.data.seq}-1`); // "all up to here except the seq before"

    // A client that drops here and comes back after the early row committed must get it.
    await commitEarly();
    await stream.until(() => stream.messages.length === 2, 'the late row');
    expect(stream.messages[1]!.data.data.n).toBe(1);
    expect(stream.messages[1]!.data.seq).toBe(afterLater.data.seq - 1);
    expect(stream.messages[1]!.id).toBe(String(afterLater.data.seq)); // nothing pending any more
    await stream.close();
    const resumed = await open({ ...userHeaders(x, user), 'last-event-id': afterLater.id });
    expect(resumed.messages.map((m) => m.data.data.n)).toEqual([1]);
    expect(resumed.readies[0]!.id).toBe(String(afterLater.data.seq));
    await resumed.close();
  });

  test('a hole that never fills (a rolled-back transaction) is given up once nothing could fill it', async () => {
    const x = await fundedAccount(t);
    const user = newUserId();
    const stream = await open(userHeaders(x, user));
    const hole = await takeSeq();
    await emit(x.accountId, user, 'order.filled', { n: 1 });
    await stream.until(() => stream.messages.length === 1, 'the row after the hole');
    expect(stream.messages[0]!.data.seq).toBe(hole + 1);
    expect(stream.messages[0]!.id).toBe(`${hole + 1}-1`);
    expect(inRanges(pendingHere(), hole)).toBe(true);
    // After the grace: on PostgreSQL once a check finds no transaction that could still insert it, on
    // PGlite (where none can be open while the tailer reads) at once. However long that takes here.
    await eventually(() => pendingHere().length === 0, 'the tailer to give the hole up');
    await emit(x.accountId, user, 'order.filled', { n: 2 });
    await stream.until(() => stream.messages.length === 2, 'a row after the hole was given up');
    expect(stream.messages[1]!.id).toBe(String(stream.messages[1]!.data.seq));
    await stream.close();
  });

  test.skipIf(engine !== 'postgres')('PostgreSQL: a transaction open long past the grace period is waited for, and its row delivered when it commits', async () => {
    const x = await fundedAccount(t);
    const user = newUserId();
    const stream = await open(userHeaders(x, user));
    const early = await heldTransaction({ accountId: x.accountId, userId: user, n: 1 });
    await emit(x.accountId, user, 'order.rejected', { n: 2 });
    await stream.until(() => stream.messages.length === 1, 'the later row');
    const later = stream.messages[0]!;
    expect(later.id).toBe(`${later.data.seq}-1`);
    // Checks after the grace find the transaction open: the hole is kept, check after check.
    const kept = hub().holeStats.kept;
    await eventually(() => hub().holeStats.kept >= kept + 3, 'three checks that keep the hole');
    expect(inRanges(pendingHere(), later.data.seq - 1)).toBe(true);
    await early.commit();
    await stream.until(() => stream.messages.length === 2, 'the late row');
    expect(stream.messages[1]!.data).toMatchObject({ seq: later.data.seq - 1, data: { n: 1 } });
    await stream.close();
  });

  test.skipIf(engine !== 'postgres')('PostgreSQL: past GAP_MAX_WAIT_MS a hole is given up with a warning; an instance still waiting delivers its row, that one skips it', async () => {
    const logLines: string[] = [];
    const other = await createTestApp({ STREAM_MAX_PER_KEY: String(MAX_PER_KEY) }, { database: t.database, logLines });
    configureStreams(other.services, { ...TIMING, gapMaxWaitMs: 1_500 });
    const otherServer = serve(other);
    const otherHub = streamsOf(other.services).accounts;
    try {
      const x = await fundedAccount(t);
      const user = newUserId();
      const here = await open(userHeaders(x, user)); // waits the default 10 minutes
      const there = await open(userHeaders(x, user), `http://127.0.0.1:${otherServer.port}${PATH}`);
      const early = await heldTransaction({ accountId: x.accountId, userId: user, n: 1 });
      await emit(x.accountId, user, 'order.rejected', { n: 2 });
      await here.until(() => ns(here).includes(2), 'the later row here');
      await there.until(() => ns(there).includes(2), 'the later row there');
      const hole = mine(here)[0]!.data.seq - 1;
      await eventually(() => !inRanges(otherHub.state().cursor.pending, hole), 'the other instance to give the hole up');
      expect(otherHub.holeStats.givenUpUnsafely).toBeGreaterThanOrEqual(1);
      const warning = logLines.map((line) => JSON.parse(line)).find((l) => l.level === 'warn' && l.msg.includes('gave up missing outbox seqs') && l.fromSeq <= hole && hole <= l.toSeq);
      expect(warning).toBeDefined();
      expect(inRanges(pendingHere(), hole)).toBe(true);
      await early.commit();
      // A later event both get: by then the late row has reached whoever still waited for it.
      await emit(x.accountId, user, 'order.filled', { n: 3 });
      await here.until(() => ns(here).includes(3), 'the last row here');
      await there.until(() => ns(there).includes(3), 'the last row there');
      expect(ns(here)).toEqual([2, 1, 3]);
      expect(ns(there)).toEqual([2, 3]);
      for (const s of [here, there]) await s.close();
    } finally {
      await stopStreams(other.services);
      otherServer.stop(true);
      await other.close();
    }
  });

  test('a jump of 50,000 seqs is one pending range (a tailer starting then reads it as one too); a late row inside it is delivered, the rest given up', async () => {
    const x = await fundedAccount(t);
    const user = newUserId();
    const stream = await open(userHeaders(x, user));
    expect(pendingHere()).toEqual([]);
    const base = await takeSeq();
    let commitEarly: () => Promise<void>;
    if (engine === 'postgres') {
      await jumpSeqTo(base + 25_000);
      const early = await heldTransaction({ accountId: x.accountId, userId: user, n: 1 }); // seq base + 25,001
      commitEarly = () => early.commit();
    } else {
      // PGlite (one connection): the same visibility order by hand, as in the test above.
      commitEarly = async () => {
        await t.database.db.execute(sql`
          insert into account_events (seq, id, account_id, user_id, type, data) overriding system value
          values (${base + 25_001}, ${`evt_late_${base}`}, ${x.accountId}, ${user}, 'order.filled', ${JSON.stringify({ n: 1 })}::jsonb)`);
      };
    }
    await jumpSeqTo(base + 50_000);
    await emit(x.accountId, user, 'order.rejected', { n: 2 }); // seq base + 50,001
    await stream.until(() => stream.messages.length === 1, 'the row after the jump');
    expect(stream.messages[0]!.data.seq).toBe(base + 50_001);
    expect(pendingHere()).toEqual([[base, base + 50_000]]);
    expect(stream.messages[0]!.id).toBe(String(base - 1)); // more than an id lists: "everything up to before the range"

    // Another instance's tailer starting now finds the same range, as one entry.
    const other = await createTestApp({}, { database: t.database });
    configureStreams(other.services, { ...TIMING, gapGraceMs: 60_000 });
    try {
      await streamsOf(other.services).accounts.ensureStarted();
      const cursor = streamsOf(other.services).accounts.state().cursor;
      expect(cursor.hwm).toBe(base + 50_001);
      // (with any recent hole below it that this instance has given up already: that one knows no better)
      expect(cursor.pending.at(-1)).toEqual([base, base + 50_000]);
      expect(cursor.pending.length).toBeLessThanOrEqual(5);
    } finally {
      await stopStreams(other.services);
      await other.close();
    }

    await commitEarly();
    await stream.until(() => stream.messages.length === 2, 'the late row inside the range');
    expect(stream.messages[1]!.data).toMatchObject({ seq: base + 25_001, data: { n: 1 } });
    await eventually(() => pendingHere().length === 0, 'the rest of the range to be given up');
    await emit(x.accountId, user, 'order.filled', { n: 3 });
    await stream.until(() => stream.messages.length === 3, 'a row after the range');
    expect(stream.messages[2]!.id).toBe(String(stream.messages[2]!.data.seq));
    await stream.close();
  });
});

describe('billing and limits', () => {
  test('opening is one standard request; each full period held is one more; closing stops the charges', async () => {
    const streams = streamsOf(t.services);
    const x = await fundedAccount(t);
    const user = newUserId();
    const start = await balanceOf(x.accountId);
    const openedAt = performance.now();
    const stream = await open(userHeaders(x, user));
    expect(stream.response.headers.get('x-request-cost-usd')).toBe('0.002');
    const requestId = stream.response.headers.get('x-request-id')!;
    expect(await balanceOf(x.accountId)).toBe(start - cost());
    // Three full periods held: three more charges, whenever this machine gets there.
    await eventually(async () => (await usageRows(requestId)) >= 4, 'three periods charged');
    await stream.close();
    const leases = async () => Number(resultRows<{ n: string }>(await t.database.db.execute(sql`select count(*) as n from stream_leases where account_id = ${x.accountId}`))[0]!.n);
    await eventually(async () => (await leases()) === 0, 'the server to close the stream');
    const heldMs = performance.now() - openedAt;
    await streams.chargeHeldStreams(); // settles a charge that was under way as the stream closed
    const charged = await usageRows(requestId);
    expect(charged).toBeGreaterThanOrEqual(4);
    expect(charged - 1).toBeLessThanOrEqual(Math.floor(heldMs / PERIOD_MS) + 1); // one per full period, not more
    expect(await balanceOf(x.accountId)).toBe(start - charged * cost());
    // One more billing period, driven by hand: every held stream is charged once more; this one is closed.
    const anchorRequestId = anchor.response.headers.get('x-request-id')!;
    const anchorCharged = await usageRows(anchorRequestId);
    await streams.chargeHeldStreams();
    expect(await usageRows(anchorRequestId)).toBeGreaterThan(anchorCharged);
    expect(await usageRows(requestId)).toBe(charged);
    expect(await balanceOf(x.accountId)).toBe(start - charged * cost());
  });

  test('when a charge is refused the stream ends with an error event (402) and its lease is freed', async () => {
    const x = await fundedAccount(t, { usd: 0.004 }); // two requests
    const user = newUserId();
    const stream = await open(userHeaders(x, user));
    // Two periods, driven by hand (the clock may add its own): the first spends the balance, the second is refused.
    await streamsOf(t.services).chargeHeldStreams();
    await streamsOf(t.services).chargeHeldStreams();
    await stream.until(() => stream.done, 'the end of the stream', 10_000);
    expect(stream.errors).toHaveLength(1);
    expect(stream.errors[0]).toMatchObject({ code: 'INSUFFICIENT_BALANCE', status: 402, requestId: stream.response.headers.get('x-request-id') });
    expect(await balanceOf(x.accountId)).toBe(0);
    await eventually(async () => (await keyLeases(x.apiKey)) === 0, 'the lease to be freed');
    // Out of funds: the next open is refused before the stream opens.
    expect((await fetch(`${base}${PATH}`, { headers: { accept: 'text/event-stream', ...userHeaders(x, user) } })).status).toBe(402);
  });

  test("a signed-in session opens the stream; each period held is charged to the session's account", async () => {
    const customer = await signIn(t);
    await fundedAccount(t, { accountId: customer.accountId, usd: 1 });
    const user = newUserId();
    const stream = await open({ cookie: customer.cookie, 'x-user-id': user });
    await emit(customer.accountId, null, 'deposit.credited', { n: 1 });
    await stream.until(() => mine(stream).length === 1, 'the account-wide event');
    const requestId = stream.response.headers.get('x-request-id')!;
    // The balance and the stream's usage rows in one statement (the clock's periods may charge too).
    const ledger = async () => {
      const [row] = resultRows<{ balance: string; rows: string }>(await t.database.db.execute(sql`
        select (select balance_micros from accounts where id = ${customer.accountId}) as balance,
               (select count(*) from usage_records where request_id = ${requestId}) as rows`));
      return { balance: Number(row!.balance), rows: Number(row!.rows) };
    };
    const before = await ledger();
    await streamsOf(t.services).chargeHeldStreams(); // a billing period, by hand: one standard request
    const after = await ledger();
    expect(after.rows).toBeGreaterThan(before.rows);
    expect(after.balance).toBe(before.balance - (after.rows - before.rows) * cost());
    await stream.close();
    // Browsers' EventSource sends no headers: userId in the query stands for x-user-id.
    const viaQuery = await open({ cookie: customer.cookie }, `${base}${PATH}?userId=${user}`);
    await viaQuery.close();
  });

  test(`at most STREAM_MAX_PER_KEY (${MAX_PER_KEY}) open per key across instances: 429 before the stream opens; expired leases do not count`, async () => {
    const other = await createTestApp({ STREAM_MAX_PER_KEY: String(MAX_PER_KEY) }, { database: t.database });
    configureStreams(other.services, TIMING);
    const otherServer = serve(other);
    try {
      const x = await fundedAccount(t);
      const headers = userHeaders(x, newUserId());
      const here = await open(headers);
      const there = await open(headers, `http://127.0.0.1:${otherServer.port}${PATH}`);
      // The held streams' own periods (PERIOD_MS) may be charged meanwhile: counted by their usage rows,
      // read in one statement with the balance (a refused open's row is deleted by its refund).
      const heldIds = [here, there].map((s) => s.response.headers.get('x-request-id')!);
      const ledger = async () => {
        const [row] = resultRows<{ balance: string; periods: string }>(await t.database.db.execute(sql`
          select (select balance_micros from accounts where id = ${x.accountId}) as balance,
                 (select count(*) from usage_records where request_id in (${heldIds[0]!}, ${heldIds[1]!})) as periods`));
        return Number(row!.balance) + Number(row!.periods) * cost();
      };
      const before = await ledger();
      for (const url of [`${base}${PATH}`, `http://127.0.0.1:${otherServer.port}${PATH}`]) {
        const refused = await fetch(url, { headers: { accept: 'text/event-stream', ...headers } });
        expect(refused.status).toBe(429);
        expect(refused.headers.get('retry-after')).toBeTruthy();
        expect(refused.headers.get('x-request-cost-usd')).toBe('0');
        expect(await refused.json()).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
      }
      expect(await ledger()).toBe(before); // refused opens are refunded
      // Another key of the same account has its own slots; the JSON form holds none.
      const second = await fundedAccount(t, { accountId: x.accountId, usd: 0 });
      const third = await open({ ...headers, 'x-api-key': second.apiKey });
      expect((await fetch(`${base}${PATH}`, { headers })).status).toBe(200);
      await here.close();
      await eventually(async () => (await keyLeases(x.apiKey)) < MAX_PER_KEY, 'the closed stream to free its slot');
      const again = await open(headers);
      for (const s of [there, third, again]) await s.close();
      await eventually(async () => (await keyLeases(x.apiKey)) === 0, 'every slot to be freed');

      // A dead instance's leases (past expires_at) free their slots.
      const keyHash = new Bun.CryptoHasher('sha256').update(x.apiKey).digest('hex');
      for (let i = 0; i < MAX_PER_KEY; i++) {
        await t.database.db.execute(sql`insert into stream_leases (id, key_hash, account_id, client_ip, kind, expires_at)
          values (${`strm_dead_${x.accountId}_${i}`}, ${keyHash}, ${x.accountId}, '127.0.0.1', 'account', now() - interval '1 second')`);
      }
      const afterDeath = await open(headers);
      await afterDeath.close();
    } finally {
      await stopStreams(other.services);
      otherServer.stop(true);
      await other.close();
    }
  });
});

describe('the tRPC subscription streams.account', () => {
  test('the same events as the REST stream, and a resume with lastEventId after a dropped connection', async () => {
    const x = await fundedAccount(t);
    const user = newUserId();
    const sources: FetchEventSource[] = [];
    class TestEventSource extends FetchEventSource {
      constructor(url: string | URL, init?: ConstructorParameters<typeof FetchEventSource>[1]) {
        super(url, { ...init, retryMs: 400 });
        sources.push(this);
      }
    }
    const headers = userHeaders(x, user);
    const client = createTRPCClient<AppRouter>({
      links: [
        splitLink({
          condition: (op) => op.type === 'subscription',
          true: httpSubscriptionLink({ url: `${base}/trpc`, EventSource: TestEventSource as never, eventSourceOptions: () => ({ headers }) as never }),
          false: httpLink({ url: `${base}/trpc`, headers }),
        }),
      ],
    });
    const rest = await open(headers);
    const received: Array<{ id: string; data: any }> = [];
    const errors: unknown[] = [];
    const subscription = client.streams.account.subscribe({}, { onData: (m) => received.push(m as never), onError: (e) => errors.push(e) });
    const until = async (count: number) => {
      const deadline = performance.now() + 10_000;
      while (received.length < count && performance.now() < deadline) await Bun.sleep(10);
      expect(received.length).toBe(count);
    };
    await until(1);
    expect(received[0]!.data).toEqual({ type: 'ready', lastEventId: received[0]!.id });
    await rest.until(() => true, '');
    await emit(x.accountId, user, 'order.filled', { n: 1 });
    await emit(x.accountId, null, 'balance.changed', { n: 2 });
    await until(3);
    await rest.until(() => rest.messages.length === 2, 'the REST stream');
    expect(received.slice(1)).toEqual(rest.messages);

    sources.at(-1)!.dropConnection();
    await emit(x.accountId, user, 'position.opened', { n: 3 });
    await emit(x.accountId, user, 'position.closed', { n: 4 });
    await until(6); // the two missed events, then ready
    await emit(x.accountId, user, 'order.filled', { n: 5 }); // then live: nothing else came in between
    await until(7);
    expect(received.slice(3).map((m) => m.data.data?.n ?? m.data.type)).toEqual([3, 4, 'ready', 5]);
    expect(sources.at(-1)!.connections).toBe(2);
    expect(errors).toEqual([]);
    const page = await client.streams.accountCatchUp.query({ lastEventId: received[2]!.id });
    expect(page.events.map((e) => e.data.n)).toEqual([3, 4, 5]);
    subscription.unsubscribe();
    await rest.close();
  });
});
