/**
 * The public valuation stream (docs/streams.md), over a real socket (Bun.serve around
 * app.handle, as main.ts serves it), on this run's database: refusals before the stream opens, every
 * change once and in order across a reconnect with Last-Event-ID (changes scripted by moving the
 * paper venue's reference prices and recording by hand), resume on another instance, heartbeats,
 * the per-address limit (an IPv6 client by its /64) and the instance's cap on public streams, a slow
 * subscriber dropped without holding up the others, shutdown (a stream opening while the streams
 * stop is refused with 503, never left open), and the tRPC subscription (httpSubscriptionLink through
 * splitLink) with the same messages and its resume. No test depends on this machine's speed: each
 * waits for what it needs, and "nothing else arrived" is checked against a later message that did.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { createTRPCClient, httpLink, httpSubscriptionLink, splitLink } from '@trpc/client';
import { sql } from 'drizzle-orm';
import type { AppRouter } from '../../routers/index.ts';
import { resultRows } from '../../db/prepared.ts';
import { roundAnswerNumbers } from '../../server/lib/answer-numbers.ts';
import { clientAddressKey } from '../../server/streams/leases.ts';
import { configureStreams, liftStreamIdleTimeout, stopStreams, streamsOf } from '../../server/streams/registry.ts';
import { FetchEventSource, type SseEvent, type SseItem } from '../../server/streams/sse-client.ts';
import { readSse } from '../harness/sse-reading.ts';
import { createTestApp, type TestApp } from '../harness/app.ts';
import { fundedAccount, newUserId } from '../harness/factories.ts';

// Generous: every wait below is for a condition, and a loaded machine only makes them slower.
setDefaultTimeout(60_000);

const A = 'spacex-ipo-higher'; // also answers to the alias `spacex-ipo`
const B = 'stripe-ipo';
const HEARTBEAT_MS = 300;
const MAX_PER_IP = 3;

let t: TestApp;
let server: ReturnType<typeof Bun.serve>;
let base: string;

/** The test server: the client address comes from x-test-ip (so tests can be several clients). */
function serve(app: TestApp) {
  return Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (request, srv) => {
      liftStreamIdleTimeout(request, srv);
      return app.app.handle(request, { clientIp: request.headers.get('x-test-ip') ?? srv.requestIP(request)?.address });
    },
  });
}

beforeAll(async () => {
  t = await createTestApp({ STREAM_MAX_PER_IP: String(MAX_PER_IP) });
  configureStreams(t.services, { heartbeatMs: HEARTBEAT_MS, maxQueuedBytes: 64 * 1024 });
  server = serve(t);
  base = `http://127.0.0.1:${server.port}`;
}, 60_000);
afterAll(async () => {
  await stopStreams(t.services);
  server.stop(true);
  await t.close();
}, 60_000);

// --- helpers -------------------------------------------------------------------------------------

interface OpenStream {
  response: Response;
  events: SseEvent[];
  comments: Array<{ text: string; at: number }>;
  ended: Promise<void>;
  waitFor(count: number, timeoutMs?: number): Promise<SseEvent[]>;
  close(): Promise<void>;
}

/** Reads a stream response in the background into `events` and `comments`. */
function reading(response: Response): OpenStream {
  const events: SseEvent[] = [];
  const comments: OpenStream['comments'] = [];
  const reader = response.body!.getReader();
  const ended = readSse(reader, (item) => {
    if (item.kind === 'event') events.push(item.event);
    if (item.kind === 'comment') comments.push({ text: item.text, at: performance.now() });
  });
  return {
    response,
    events,
    comments,
    ended,
    async waitFor(count, timeoutMs = 20_000) {
      const deadline = performance.now() + timeoutMs;
      while (events.length < count) {
        if (performance.now() > deadline) throw new Error(`expected ${count} messages, got ${events.length}: ${events.map((e) => e.lastEventId).join(', ')}`);
        await Bun.sleep(10);
      }
      return events.slice(0, count);
    },
    async close() {
      await reader.cancel().catch(() => undefined);
      await ended;
    },
  };
}

async function open(query: string, headers: Record<string, string> = {}, at = base): Promise<OpenStream> {
  const response = await fetch(`${at}/api/trading/stream?${query}`, { headers: { accept: 'text/event-stream', ...headers } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toStartWith('text/event-stream');
  return reading(response);
}

/** Sets one band's reference price (the paper venue's books centre on it). */
async function setPrice(eventId: string, bandIndex: number, price: number) {
  await t.database.db.execute(sql`update event_bands set seed_price = ${price} where event_id = ${eventId} and band_index = ${bandIndex}`);
}

let step = 0;
/** Moves one band of each given event to a new price and records a snapshot: each of them changes. */
async function change(...eventIds: string[]) {
  step++;
  for (const id of eventIds) await setPrice(id, 2, 0.2 + (step % 10) * 0.03);
  return record(eventIds);
}

/** A new recording: a snapshot taken after the prices moved (market data reuses a snapshot taken in the same millisecond). */
async function record(changed: string[] = []) {
  const before = t.services.recorder.latest()?.sequence ?? 0;
  await Bun.sleep(2);
  const recording = (await t.services.recorder.record())!;
  expect(recording.sequence).toBe(before + 1);
  for (const id of changed) expect(recording.changed.has(id)).toBe(true);
  return recording;
}

/** Waits for `check` to hold, however long this machine takes (up to `timeoutMs`). */
async function eventually(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000) {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

const leasesOf = async (clientIp: string) =>
  Number(resultRows<{ n: string }>(await t.database.db.execute(sql`select count(*) as n from stream_leases where client_ip = ${clientIp} and expires_at > now()`))[0]!.n);

/**
 * The first error of a streams.valuation subscription, as our error body. A 503 is retryable for
 * httpSubscriptionLink (it reconnects, with lastEventId, rather than failing): it shows as the
 * connection state's error; the subscription is then dropped.
 */
async function refusedSubscription(at: string) {
  const client = createTRPCClient<AppRouter>({ links: [httpSubscriptionLink({ url: `${at}/trpc`, EventSource: FetchEventSource as never })] });
  let subscription: { unsubscribe(): void } | undefined;
  const error = await new Promise<any>((resolve) => {
    subscription = client.streams.valuation.subscribe(
      { eventSlugs: [A] },
      {
        onError: resolve,
        onConnectionStateChange: (state) => state.error && resolve(state.error),
        onData: () => resolve(new Error('data')),
      },
    );
  });
  subscription?.unsubscribe();
  return error.data?.api;
}

/** Expects a refusal in our error shape. */
async function expectRefused(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toStartWith('application/json');
  expect(res.headers.get('retry-after')).toBeTruthy();
  const body = await res.json();
  expect(Object.keys(body).sort()).toEqual(['code', 'message', 'requestId', 'status']);
  expect(body).toMatchObject({ code, status });
  return body as { message: string };
}

/** An event's latest /valuation object, as answers carry it: numbers rounded to 6 decimals (docs/api.md, "Numbers"). */
const current = (eventId: string) => roundAnswerNumbers(t.services.recorder.latest()!.valuations.get(eventId)!);
/** A valuation without its timestamp (a message carries the snapshot it changed in; later recordings restamp an unchanged event). */
const priced = (v: any) => JSON.parse(JSON.stringify({ ...v, timestamp: undefined }));
const slugOf = (e: SseEvent) => JSON.parse(e.data).event.slug as string;
const position = (id: string) => id.split('-').slice(0, 2).map(Number) as [number, number];
const increasing = (ids: string[]) => ids.every((id, i) => i === 0 || position(ids[i - 1]!)[0] < position(id)[0] || (position(ids[i - 1]!)[0] === position(id)[0] && position(ids[i - 1]!)[1] < position(id)[1]));

// --- tests ---------------------------------------------------------------------------------------

describe('GET /api/trading/stream refuses before the stream opens, in our error shape', () => {
  test('400 without eventSlug, with too many, or with a Last-Event-ID it never sent; 404 for an unknown event', async () => {
    const cases: Array<[string, Record<string, string>, number, string]> = [
      ['', {}, 400, 'eventSlug'],
      [Array.from({ length: 51 }, () => `eventSlug=${A}`).join('&'), {}, 400, 'eventSlug'],
      [`eventSlug=${A}`, { 'last-event-id': 'not-an-id' }, 400, 'lastEventId'],
      [`eventSlug=${A}&eventSlug=no-such-event`, {}, 404, 'no-such-event'],
    ];
    for (const [query, headers, status, mentions] of cases) {
      const res = await fetch(`${base}/api/trading/stream?${query}`, { headers: { accept: 'text/event-stream', ...headers } });
      expect(`${query.slice(0, 40)} → ${res.status}`).toBe(`${query.slice(0, 40)} → ${status}`);
      expect(res.headers.get('content-type')).toStartWith('application/json');
      const body = await res.json();
      expect(Object.keys(body).sort()).toEqual(['code', 'message', 'requestId', 'status']);
      expect(body.status).toBe(status);
      expect(body.message).toContain(mentions);
      expect(res.headers.get('x-request-id')).toBe(body.requestId);
    }
    expect(streamsOf(t.services).open).toBe(0);
  });

  test('other methods are 405; without Accept: text/event-stream the route answers its opening messages as JSON', async () => {
    const post = await fetch(`${base}/api/trading/stream?eventSlug=${A}`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
    const res = await fetch(`${base}/api/trading/stream?eventSlug=${A}&eventSlug=${B}`);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = await res.json();
    expect(body.messages.map((m: any) => m.data.event.slug).sort()).toEqual([A, B].sort());
    for (const m of body.messages) expect(priced(m.data)).toEqual(priced(current(m.data.event.slug)));
    expect(body.lastEventId).toBe(body.messages.at(-1).id);
    const again = await (await fetch(`${base}/api/trading/stream?eventSlug=${A}&lastEventId=${body.lastEventId}`)).json();
    expect(again).toEqual({ messages: [], lastEventId: body.lastEventId });
  });
});

describe('a stream client sees every change once, in order, across a reconnect with Last-Event-ID', () => {
  test('opening messages, live changes, a disconnect with changes missed, a resume that sends each missed event once', async () => {
    const first = await open(`eventSlug=spacex-ipo&eventSlug=${B}`); // an alias and an id
    const opening = await first.waitFor(2);
    expect(opening.map(slugOf).sort()).toEqual([A, B].sort());
    for (const e of opening) expect(JSON.parse(e.data)).toEqual(JSON.parse(JSON.stringify(current(slugOf(e)))));

    // Live: one message per recording that changes an event, with that recording's valuation.
    const seen: SseEvent[] = [...opening];
    const expectNext = async (slugs: string[]) => {
      const got = (await first.waitFor(seen.length + slugs.length)).slice(seen.length);
      expect(got.map(slugOf).sort()).toEqual([...slugs].sort());
      for (const e of got) expect(JSON.parse(e.data)).toEqual(JSON.parse(JSON.stringify(current(slugOf(e)))));
      seen.push(...got);
    };
    await change(A);
    await expectNext([A]);
    await change(B);
    await expectNext([B]);
    await change(A, B);
    await expectNext([A, B]);
    // A recording that changes nothing sends nothing: the next message is the next change's.
    await record();
    await change(B);
    await expectNext([B]);
    const lastId = first.events.at(-1)!.lastEventId;
    await first.close();

    // Away: A changes twice, B once, then a recording of another event only.
    await change(A);
    await change(A);
    await change(B);
    await change('openai-ipo');
    const second = await open(`eventSlug=${A}&eventSlug=${B}`, { 'last-event-id': lastId });
    const resumed = await second.waitFor(2);
    expect(resumed.map(slugOf)).toEqual([A, B]); // in the order they last changed
    for (const e of resumed) expect(priced(JSON.parse(e.data))).toEqual(priced(current(slugOf(e))));
    seen.push(...resumed);
    // Each missed event once, at its latest value: the message after them is already the next live change.
    await change(B);
    await second.waitFor(3);
    expect(slugOf(second.events[2]!)).toBe(B);
    expect(JSON.parse(second.events[2]!.data)).toEqual(JSON.parse(JSON.stringify(current(B)))); // live: this recording's timestamp
    expect(second.events.length).toBe(3);
    seen.push(second.events[2]!);

    const ids = seen.map((e) => e.lastEventId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(increasing(ids)).toBe(true);
    // Nothing sent twice: every message is a distinct (event, valuation) step.
    const steps = seen.map((e) => `${slugOf(e)} ${JSON.stringify({ ...JSON.parse(e.data), timestamp: undefined })}`);
    for (let i = 1; i < steps.length; i++) expect(steps.slice(0, i).filter((s) => s.split(' ')[0] === steps[i]!.split(' ')[0]).at(-1)).not.toBe(steps[i]);
    await second.close();
  });

  test('a resume with an id from another instance (or before a restart) misses nothing: the current state of each event again', async () => {
    const other = await createTestApp({}, { database: t.database });
    const otherServer = serve(other);
    try {
      await change(A);
      const here = await open(`eventSlug=${A}&eventSlug=${B}`);
      await here.waitFor(2);
      const lastId = here.events.at(-1)!.lastEventId;
      await here.close();
      await change(A);
      const res = await fetch(`http://127.0.0.1:${otherServer.port}/api/trading/stream?eventSlug=${A}&eventSlug=${B}`, { headers: { accept: 'text/event-stream', 'last-event-id': lastId } });
      const there = reading(res);
      const got = await there.waitFor(2);
      expect(got.map(slugOf).sort()).toEqual([A, B].sort());
      expect(JSON.parse(got.find((e) => slugOf(e) === A)!.data).bands).toEqual(JSON.parse(JSON.stringify(current(A).bands)));
      expect(got.every((e) => !e.lastEventId.endsWith(lastId.split('-')[2]!))).toBe(true);
      await there.close();
    } finally {
      await stopStreams(other.services);
      otherServer.stop(true);
      await other.close();
    }
  });
});

describe('shutdown', () => {
  test('stopStreams ends every stream with a comment (clients reconnect elsewhere) and deletes the leases', async () => {
    const other = await createTestApp({}, { database: t.database });
    const otherServer = serve(other);
    try {
      const res = await fetch(`http://127.0.0.1:${otherServer.port}/api/trading/stream?eventSlug=${A}`, { headers: { accept: 'text/event-stream', 'x-test-ip': '198.51.100.77' } });
      const stream = reading(res);
      await stream.waitFor(1);
      await stopStreams(other.services);
      await stream.ended;
      expect(stream.comments.map((c) => c.text)).toContain('server shutting down; reconnect with Last-Event-ID');
      const rows = resultRows<{ n: string }>(await t.database.db.execute(sql`select count(*) as n from stream_leases where client_ip = '198.51.100.77'`));
      expect(Number(rows[0]!.n)).toBe(0);
    } finally {
      otherServer.stop(true);
      await other.close();
    }
  });
});

describe('shutdown: once stopStreams began, nothing opens', () => {
  test('every form answers 503 SERVICE_UNAVAILABLE with Retry-After; the stopped streams stay (never built again)', async () => {
    const other = await createTestApp({}, { database: t.database });
    const otherServer = serve(other);
    const otherBase = `http://127.0.0.1:${otherServer.port}`;
    try {
      const x = await fundedAccount(other);
      const stopped = streamsOf(other.services);
      await stopStreams(other.services);
      expect(stopped.closing).toBe(true);
      expect(streamsOf(other.services)).toBe(stopped);
      const account = { 'x-api-key': x.apiKey, 'x-user-id': newUserId() };
      for (const [path, headers] of [
        [`/api/trading/stream?eventSlug=${A}`, { accept: 'text/event-stream' }],
        [`/api/trading/stream?eventSlug=${A}`, {}],
        ['/api/trading/stream/account', { accept: 'text/event-stream', ...account }],
        ['/api/trading/stream/account', account],
      ] as const) {
        const res = await fetch(`${otherBase}${path}`, { headers });
        const body = await expectRefused(res, 503, 'SERVICE_UNAVAILABLE');
        expect(body.message).toContain('shutting down');
        if ('x-api-key' in headers) expect(res.headers.get('x-request-cost-usd')).toBe('0'); // refused: not billed
      }
      expect(await refusedSubscription(otherBase)).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
      expect(stopped.open).toBe(0);
      expect(stopped.leases.held).toBe(0);
    } finally {
      otherServer.stop(true);
      await other.close();
    }
  });

  test('a stream that was opening when stopStreams ran (its lease taken meanwhile) is refused with 503, and its lease deleted', async () => {
    const other = await createTestApp({}, { database: t.database });
    const otherServer = serve(other);
    const streams = streamsOf(other.services);
    try {
      // Hold the open right after its lease is taken; stop the streams then.
      let leased!: () => void;
      const atLease = new Promise<void>((resolve) => (leased = resolve));
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const acquire = streams.leases.acquire.bind(streams.leases);
      streams.leases.acquire = async (...args) => {
        const id = await acquire(...args);
        leased();
        await gate;
        return id;
      };
      const ip = '198.51.100.90';
      const opening = fetch(`http://127.0.0.1:${otherServer.port}/api/trading/stream?eventSlug=${A}`, { headers: { accept: 'text/event-stream', 'x-test-ip': ip } });
      await atLease;
      expect(await leasesOf(ip)).toBe(1);
      await stopStreams(other.services);
      release();
      const body = await expectRefused(await opening, 503, 'SERVICE_UNAVAILABLE');
      expect(body.message).toContain('shutting down');
      expect(await leasesOf(ip)).toBe(0);
      expect(streams.open).toBe(0);
      expect(streams.publicOpen).toBe(0);
      expect(streams.leases.held).toBe(0);
    } finally {
      otherServer.stop(true);
      await other.close();
    }
  });
});

describe('heartbeats', () => {
  test('a `: ping` comment every STREAM_HEARTBEAT_MS while nothing changes', async () => {
    const openedAt = performance.now();
    const stream = await open(`eventSlug=${B}`);
    await stream.waitFor(1);
    const pings = () => stream.comments.filter((c) => c.text === 'ping').length;
    await eventually(() => pings() >= 3, 'three pings');
    // Not more often than the period: counted, not timed (at most one per period since the open, and one due at once).
    expect(pings()).toBeLessThanOrEqual(Math.floor((performance.now() - openedAt) / HEARTBEAT_MS) + 2);
    expect(stream.events).toHaveLength(1); // pings only
    await stream.close();
  });
});

describe('a stream answers at once', () => {
  // Its own app with a heartbeat far away, so that whatever arrives first is not a heartbeat.
  let quiet: TestApp;
  let quietServer: ReturnType<typeof Bun.serve>;
  let at: string;
  beforeAll(async () => {
    quiet = await createTestApp();
    configureStreams(quiet.services, { heartbeatMs: 600_000, maxQueuedBytes: 64 * 1024 });
    quietServer = serve(quiet);
    at = `http://127.0.0.1:${quietServer.port}`;
  });
  afterAll(async () => {
    await stopStreams(quiet.services);
    quietServer.stop(true);
    await quiet.close();
  });

  /** The first SSE items of a response, read until `count` have come (or 10 s, a fiftieth of the heartbeat). */
  async function firstItems(response: Response, count: number): Promise<SseItem[]> {
    const items: SseItem[] = [];
    const reader = response.body!.getReader();
    const reading = readSse(reader, (item) => items.push(item));
    for (const deadline = performance.now() + 10_000; items.length < count && performance.now() < deadline; ) await Bun.sleep(5);
    await reader.cancel().catch(() => undefined);
    await reading;
    return items.slice(0, count);
  }

  test('a client resuming at the latest id (nothing to catch up) gets the headers and a first line on connect', async () => {
    const { lastEventId } = await (await fetch(`${at}/api/trading/stream?eventSlug=${B}`)).json();
    expect(lastEventId).toBeString();
    const started = performance.now();
    const response = await fetch(`${at}/api/trading/stream?eventSlug=${B}`, { headers: { accept: 'text/event-stream', 'last-event-id': lastEventId } });
    expect(response.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(1000); // the headers: the issue's bound, far under the 600 s heartbeat
    expect(await firstItems(response, 2)).toEqual([
      { kind: 'comment', text: 'connected' },
      { kind: 'retry', ms: 3000 },
    ]);
  });

  test('the tRPC subscription opens with its `connected` event at once, too', async () => {
    const input = encodeURIComponent(JSON.stringify({ eventSlugs: [B] }));
    const response = await fetch(`${at}/trpc/streams.valuation?input=${input}`, { headers: { accept: 'text/event-stream' } });
    expect(response.status).toBe(200);
    const [first] = await firstItems(response, 1);
    expect(first).toMatchObject({ kind: 'event', event: { type: 'connected' } });
  });
});

describe('limits', () => {
  test(`at most STREAM_MAX_PER_IP (${MAX_PER_IP}) open per client address: 429 in our shape before the stream opens; a closed stream frees its slot`, async () => {
    const ip = { 'x-test-ip': '198.51.100.7' };
    const held = [await open(`eventSlug=${A}`, ip), await open(`eventSlug=${B}`, ip), await open(`eventSlug=${A}`, ip)];
    const leases = async () => Number(resultRows<{ n: string }>(await t.database.db.execute(sql`select count(*) as n from stream_leases where client_ip = '198.51.100.7' and expires_at > now()`))[0]!.n);
    expect(await leases()).toBe(MAX_PER_IP);
    const refused = await fetch(`${base}/api/trading/stream?eventSlug=${A}`, { headers: { accept: 'text/event-stream', ...ip } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBeTruthy();
    const body = await refused.json();
    expect(body).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    expect(body.message).toContain(String(MAX_PER_IP));
    // Another address is not affected; the JSON form opens nothing and is not limited.
    const elsewhere = await open(`eventSlug=${A}`, { 'x-test-ip': '198.51.100.8' });
    expect((await fetch(`${base}/api/trading/stream?eventSlug=${A}`, { headers: ip })).status).toBe(200);
    await held[0]!.close();
    await eventually(async () => (await leases()) < MAX_PER_IP, 'the closed stream to free its slot');
    const again = await open(`eventSlug=${A}`, ip);
    for (const s of [...held.slice(1), again, elsewhere]) await s.close();
  });

  test('an IPv6 client is counted by its /64: rotating addresses inside it opens no more; an IPv4-mapped address counts as its IPv4 address', async () => {
    const held = [
      await open(`eventSlug=${A}`, { 'x-test-ip': '2001:db8:7:1::1' }),
      await open(`eventSlug=${A}`, { 'x-test-ip': '2001:db8:7:1:0:0:0:2' }),
      await open(`eventSlug=${B}`, { 'x-test-ip': '2001:0DB8:0007:0001:abcd:ef01:2345:6789' }),
    ];
    expect(await leasesOf('2001:db8:7:1::/64')).toBe(MAX_PER_IP);
    const refused = await fetch(`${base}/api/trading/stream?eventSlug=${A}`, { headers: { accept: 'text/event-stream', 'x-test-ip': '2001:db8:7:1:ffff:ffff:ffff:ffff' } });
    const body = await expectRefused(refused, 429, 'RATE_LIMITED');
    expect(body.message).toContain('/64');
    const neighbour = await open(`eventSlug=${A}`, { 'x-test-ip': '2001:db8:7:2::1' }); // another /64
    expect(await leasesOf('2001:db8:7:2::/64')).toBe(1);
    const mapped = await open(`eventSlug=${A}`, { 'x-test-ip': '::ffff:198.51.100.31' });
    expect(await leasesOf('198.51.100.31')).toBe(1);
    for (const s of [...held, neighbour, mapped]) await s.close();
  });

  test('clientAddressKey: IPv4 as it is, IPv6 as its /64 in one spelling, IPv4-mapped as IPv4', () => {
    const cases: Array<[string, string]> = [
      ['198.51.100.7', '198.51.100.7'],
      ['2001:db8::1', '2001:db8:0:0::/64'],
      ['2001:DB8:0:0:1:2:3:4', '2001:db8:0:0::/64'],
      ['2001:0db8:00aa:0bcd:ffff::', '2001:db8:aa:bcd::/64'],
      ['[2001:db8:1:2::3]', '2001:db8:1:2::/64'],
      ['fe80::1%eth0', 'fe80:0:0:0::/64'],
      ['::', '0:0:0:0::/64'],
      ['::1', '0:0:0:0::/64'],
      ['::ffff:203.0.113.9', '203.0.113.9'],
      ['::ffff:cb00:7109', '203.0.113.9'],
      ['64:ff9b::203.0.113.9', '64:ff9b:0:0::/64'],
      ['unknown', 'unknown'],
      ['2001:db8::1::2', '2001:db8::1::2'], // not an address: as it is
      ['1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7:8:9'],
    ];
    for (const [address, key] of cases) expect(`${address} → ${clientAddressKey(address)}`).toBe(`${address} → ${key}`);
  });

  test('at most maxPublicStreams (MAX_PUBLIC_STREAMS) per instance, whatever the addresses: 503 with Retry-After; a closed stream frees its place', async () => {
    const other = await createTestApp({}, { database: t.database });
    const streams = configureStreams(other.services, { maxPublicStreams: 2 });
    const otherServer = serve(other);
    const otherBase = `http://127.0.0.1:${otherServer.port}`;
    try {
      const held = [await open(`eventSlug=${A}`, { 'x-test-ip': '198.51.100.41' }, otherBase), await open(`eventSlug=${B}`, { 'x-test-ip': '2001:db8:41::1' }, otherBase)];
      expect(streams.publicOpen).toBe(2);
      const refused = await fetch(`${otherBase}/api/trading/stream?eventSlug=${A}`, { headers: { accept: 'text/event-stream', 'x-test-ip': '198.51.100.42' } });
      const body = await expectRefused(refused, 503, 'SERVICE_UNAVAILABLE');
      expect(body.message).toContain('2 public streams');
      expect(await leasesOf('198.51.100.42')).toBe(0);
      // The tRPC subscription shares the cap; the JSON form holds nothing and is not capped.
      expect(await refusedSubscription(otherBase)).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
      expect((await fetch(`${otherBase}/api/trading/stream?eventSlug=${A}`, { headers: { 'x-test-ip': '198.51.100.42' } })).status).toBe(200);
      await held[0]!.close();
      await eventually(() => streams.publicOpen < 2, 'the closed stream to free its place');
      const again = await open(`eventSlug=${A}`, { 'x-test-ip': '198.51.100.42' }, otherBase);
      for (const s of [held[1]!, again]) await s.close();
    } finally {
      await stopStreams(other.services);
      otherServer.stop(true);
      await other.close();
    }
  });

  test('expired leases (streams of a process that died) do not count', async () => {
    for (let i = 0; i < MAX_PER_IP; i++) {
      await t.database.db.execute(sql`insert into stream_leases (id, client_ip, kind, expires_at) values (${`strm_dead_${i}`}, '198.51.100.9', 'market', now() - interval '1 second')`);
    }
    const stream = await open(`eventSlug=${A}`, { 'x-test-ip': '198.51.100.9' });
    await stream.close();
  });
});

describe('fan-out', () => {
  test('a subscriber that stops reading is dropped with a final comment; the others get every message', async () => {
    // In-process, a body nobody reads holds every write (no socket buffer in between).
    const slowResponse = await t.app.handle(new Request(`http://localhost/api/trading/stream?eventSlug=${A}`, { headers: { accept: 'text/event-stream' } }), { clientIp: '203.0.113.5' });
    const slowReader = slowResponse.body!.getReader();
    await slowReader.read(); // the opening message; then it stops reading
    const fast = await open(`eventSlug=${A}`);
    await fast.waitFor(1);
    const hub = streamsOf(t.services).valuations;
    const subscribers = hub.subscriberCount;
    // A few KB each (numbers have at most 6 decimals): well past the 64 KiB the slow one may leave unread.
    for (let i = 0; i < 50; i++) await change(A);
    await fast.waitFor(51);
    expect(fast.events.slice(1).map(slugOf)).toEqual(Array(50).fill(A));
    expect(hub.subscriberCount).toBe(subscribers - 1);
    let rest = '';
    const decoder = new TextDecoder();
    for (;;) {
      const { value, done } = await slowReader.read();
      if (done) break;
      rest += decoder.decode(value);
    }
    expect(rest).toContain(': closed: this client read too slowly');
    await fast.close();
  });
});

describe('the tRPC subscription streams.valuation', () => {
  test('receives the same messages as the REST stream, and resumes with lastEventId after a dropped connection', async () => {
    const sources: TestEventSource[] = [];
    class TestEventSource extends FetchEventSource {
      constructor(url: string | URL, init?: ConstructorParameters<typeof FetchEventSource>[1]) {
        super(url, { ...init, retryMs: 400 });
        sources.push(this);
      }
    }
    const client = createTRPCClient<AppRouter>({
      links: [
        splitLink({
          condition: (op) => op.type === 'subscription',
          true: httpSubscriptionLink({ url: `${base}/trpc`, EventSource: TestEventSource as never }),
          false: httpLink({ url: `${base}/trpc` }),
        }),
      ],
    });
    const rest = await open(`eventSlug=${A}&eventSlug=${B}`);
    await rest.waitFor(2);
    const received: Array<{ id: string; data: any }> = [];
    const errors: unknown[] = [];
    const subscription = client.streams.valuation.subscribe(
      { eventSlugs: [A, B] },
      { onData: (message) => received.push(message as never), onError: (error) => errors.push(error) },
    );
    const until = async (count: number) => {
      const deadline = performance.now() + 10_000;
      while (received.length < count && performance.now() < deadline) await Bun.sleep(10);
      expect(received.length).toBe(count);
    };
    await until(2);
    expect(received.map((m) => m.id)).toEqual(rest.events.slice(0, 2).map((e) => e.lastEventId));
    expect(received.map((m) => m.data)).toEqual(rest.events.slice(0, 2).map((e) => JSON.parse(e.data)));

    await change(A);
    await until(3);
    await rest.waitFor(3);
    expect(received[2]!.id).toBe(rest.events[2]!.lastEventId);
    expect(received[2]!.data).toEqual(JSON.parse(rest.events[2]!.data));

    // The connection drops; while it is down B changes twice and A once; the link reconnects with lastEventId.
    sources.at(-1)!.dropConnection();
    await change(B);
    await change(B);
    await change(A);
    await until(5);
    expect(received.slice(3).map((m) => m.data.event.slug)).toEqual([B, A]);
    expect(received.slice(3).map((m) => priced(m.data))).toEqual([current(B), current(A)].map(priced));
    // Each missed event once: the next message is already the next live change.
    await change(B);
    await until(6);
    expect(received[5]!.data).toEqual(JSON.parse(JSON.stringify(current(B))));
    expect(sources.at(-1)!.connections).toBe(2);
    expect(increasing(received.map((m) => m.id))).toBe(true);
    expect(errors).toEqual([]);

    // The same procedures' JSON form through the other branch of the split link.
    const state = await client.streams.valuationCatchUp.query({ eventSlug: [A, B] });
    expect(state.lastEventId).toBe(received.at(-1)!.id);
    subscription.unsubscribe();
    await rest.close();
  });

  test('an unknown event is a NOT_FOUND error of the subscription, in our shape', async () => {
    const client = createTRPCClient<AppRouter>({ links: [httpSubscriptionLink({ url: `${base}/trpc`, EventSource: FetchEventSource as never })] });
    const error = await new Promise<any>((resolve) => {
      client.streams.valuation.subscribe({ eventSlugs: ['no-such-event'] }, { onError: resolve, onData: () => resolve(new Error('data')) });
    });
    expect(error.data.api).toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });
});
