/**
 * The service keeps its recent history whole by itself (server/history/fill.ts): a fresh database gets
 * 30 days of 1h and 1d candles and a day of 1m candles on the paper venue, a whole window costs no
 * backfill, a hole (downtime) is filled and recorded candles stay. The operator route backfills on the
 * running server, and `history:backfill` goes through it while the server holds the embedded database.
 * In process on PGlite or PostgreSQL (TEST_DATABASE_URL); the real server on a PGlite directory.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { and, eq, gte, lt, sql } from 'drizzle-orm';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { valuationCandles } from '../../db/schema.ts';
import { listEvents } from '../../server/events/queries.ts';
import { alignStart } from '../../server/history/candles.ts';
import { fillRecentHistory } from '../../server/history/fill.ts';
import { startCandleRecording, type CandleRecording } from '../../server/history/recording.ts';
import { pieces } from '../../server/commands/backfill-remote.ts';
import { createTestApp, DASHBOARD_KEY, json, type TestApp } from '../harness/app.ts';
import { runToExit, startServer, type RunningServer } from '../harness/server-process.ts';

const HOUR = 3_600_000;
const DAY = 86_400_000;
const at = (iso: string) => Date.parse(iso);

describe('the history fill, in process', () => {
  let t: TestApp;
  let recording: CandleRecording;
  let clock = at('2026-11-22T09:30:00Z');
  beforeAll(async () => {
    t = await createTestApp({ PAPER_DRIFT: '0.05' }, { now: () => clock });
    recording = startCandleRecording(t.services, { now: () => clock });
  });
  afterAll(async () => {
    await recording.stop();
    await t.close();
  });

  const history = async (eventSlug: string, interval: string, limit: number) =>
    json(await t.app.handle(new Request(`http://localhost/api/trading/valuation/history?eventSlug=${eventSlug}&interval=${interval}&limit=${limit}`)));
  const count = async (eventId: string, interval: '1m' | '1h' | '1d') =>
    Number((await t.database.db.select({ n: sql<number>`count(*)::int` }).from(valuationCandles).where(and(eq(valuationCandles.eventId, eventId), sql`${valuationCandles.interval} = ${interval}`)))[0]!.n);

  test('a fresh database: every listed event gets 30 days of 1h and 1d candles and a day of 1m, moving with the drift', async () => {
    await t.services.recorder.record(); // the current hour's candle: recorded, never replaced by the fill
    const lines = await fillRecentHistory(t.services);
    expect(lines.every((l) => l.problems.length === 0 && l.venue === 'paper')).toBe(true);
    const { candles } = await history('openai-ipo', '1h', 1000);
    const finished = candles.filter((c: { final: boolean }) => c.final);
    expect(finished.length).toBe(720);
    expect(finished[0].start).toBe(new Date(alignStart(clock - 30 * DAY, '1h')).toISOString());
    expect(finished.every((c: { start: string }, i: number) => i === 0 || Date.parse(c.start) - Date.parse(finished[i - 1].start) === HOUR)).toBe(true);
    expect(finished.every((c: { source: string }) => c.source === 'backfill')).toBe(true);
    expect(new Set(finished.map((c: { longCost: { close: number } }) => c.longCost.close)).size).toBeGreaterThan(10);
    expect((await history('openai-ipo', '1d', 100)).candles.filter((c: { final: boolean }) => c.final).length).toBe(30);
    expect((await history('openai-ipo', '1m', 5000)).candles.filter((c: { final: boolean }) => c.final).length).toBe(1440);
    for (const event of await listEvents(t.database.db)) {
      expect([event.id, await count(event.id, '1h'), await count(event.id, '1d'), await count(event.id, '1m')]).toEqual([event.id, 720, 30, 1440]);
    }
  }, 120_000); // a month of candles for every event: ~13 s alone, several times that on a busy machine

  test('a whole window costs no backfill; a hole left by downtime is filled, for that event only; recorded candles stay', async () => {
    expect(await fillRecentHistory(t.services)).toEqual([]);
    clock += 2 * HOUR; // two hours later: the recorder's 09:00 candle has ended; 10:00 is missing everywhere
    await t.services.recorder.record();
    await recording.closeCandles();
    const recorded = await t.database.db.select().from(valuationCandles).where(eq(valuationCandles.source, 'snapshots'));
    expect(recorded.length).toBeGreaterThan(0);
    await t.database.db.delete(valuationCandles).where(and(eq(valuationCandles.eventId, 'stripe-ipo'), sql`${valuationCandles.interval} = '1h'`, lt(valuationCandles.start, new Date(clock - 10 * DAY)), gte(valuationCandles.start, new Date(clock - 12 * DAY))));
    const lines = await fillRecentHistory(t.services);
    const hourly = lines.filter((l) => l.interval === '1h');
    expect(hourly.length).toBeGreaterThan(0);
    const stripe = hourly.filter((l) => l.event === 'stripe-ipo').reduce((sum, l) => sum + l.written!, 0);
    const other = hourly.filter((l) => l.event === 'openai-ipo').reduce((sum, l) => sum + l.written!, 0);
    expect(stripe - other).toBe(48); // the hole; both got the hour nobody recorded
    expect(await count('stripe-ipo', '1h')).toBeGreaterThanOrEqual(720);
    for (const row of recorded) {
      const [now] = await t.database.db.select().from(valuationCandles).where(and(eq(valuationCandles.eventId, row.eventId), sql`${valuationCandles.interval} = ${row.interval}`, eq(valuationCandles.start, row.start)));
      expect(now!.source).toBe('snapshots');
    }
  });
});

describe('the operator route', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ PAPER_DRIFT: '0.05' });
    await t.app.handle(new Request('http://localhost/api/keys', { method: 'POST', headers: { 'x-api-key': DASHBOARD_KEY, 'x-account-id': 'ops', 'content-type': 'application/json' }, body: '{"name":"ops"}' }));
  });
  afterAll(() => t.close());

  const backfill = (body: unknown, headers: Record<string, string> = { 'x-api-key': DASHBOARD_KEY, 'x-account-id': 'ops' }) =>
    t.app.handle(new Request('http://localhost/api/trading/valuation/history/backfill', { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) }));
  const from = new Date(Date.now() - 3 * DAY).toISOString();

  test('writes the missing candles once, one line per event; unknown events are a line, not a failure', async () => {
    const first = await backfill({ interval: '1h', from, events: ['openai-ipo', 'no-such-event'] });
    expect(first.status).toBe(200);
    const { lines } = await json(first);
    expect(lines[0]).toEqual({ event: 'no-such-event', interval: '1h', venue: 'paper', problems: ['no event no-such-event'] });
    expect(lines[1]).toMatchObject({ event: 'openai-ipo', venue: 'paper', problems: [] });
    expect(lines[1].written).toBe(lines[1].candles);
    expect(lines[1].candles).toBeGreaterThanOrEqual(71);
    const again = await json(await backfill({ interval: '1h', from, events: ['openai-ipo'] }));
    expect(again.lines[0]).toMatchObject({ candles: lines[1].candles, written: 0 });
  });

  test('bad input is a 400 naming the parameter; a range over one call\'s points too; a customer key is refused', async () => {
    const cases: Array<[unknown, string]> = [
      [{ interval: '5m', from }, 'interval'],
      [{ interval: '1h' }, 'from'],
      [{ interval: '1h', from: 'yesterday' }, 'from'],
      [{ interval: '1h', from, to: '2020-01-01' }, 'from'],
      [{ interval: '1h', from, stepSeconds: 7 }, 'stepSeconds'],
      [{ interval: '1m', from: '2020-01-01' }, 'from: the range needs'],
      [{ interval: '1h', from, events: [] }, 'events'],
      [{ interval: '1h', from, venue: 'paper' }, 'venue'],
    ];
    for (const [body, named] of cases) {
      const response = await backfill(body);
      expect([body, response.status]).toEqual([body, 400]);
      expect((await json(response)).message).toContain(named);
    }
    expect((await backfill({ interval: '1h', from }, {})).status).toBe(401);
    expect((await backfill({ interval: '1h', from }, { 'x-api-key': DASHBOARD_KEY, 'x-account-id': 'nobody' })).status).toBe(404);
  });

  test('the command\'s pieces cover a range once, at candle boundaries, each within one call', () => {
    const start = at('2026-01-01T00:10:00Z');
    const end = at('2026-11-01T00:00:00Z');
    const parts = pieces('1m', start, end);
    expect(parts[0]![0]).toBe(start);
    expect(parts.at(-1)![1]).toBe(end);
    for (let i = 1; i < parts.length; i++) expect(parts[i]![0]).toBe(parts[i - 1]![1]);
    expect(parts.every(([a, b]) => (b - a) / 60_000 <= 100_000)).toBe(true);
    expect(pieces('1h', start, start + HOUR)).toEqual([[start, start + HOUR]]);
  });
});

describe('a real server fills its own history, and history:backfill goes through it', () => {
  let server: RunningServer;
  let dir: string;
  const DASH = 'dash_test_fill_0123456789abcdef0123456789';
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fill-'));
    // The defaults a user gets: the paper books drift and the fill runs (the harness turns both off).
    server = await startServer({ DATA_DIR: join(dir, 'data'), DASHBOARD_KEYS: DASH, PAPER_DRIFT: '0.03', HISTORY_FILL_INTERVAL_MS: '3600000' });
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a month of hourly candles on the Markets chart\'s event, soon after start', async () => {
    const deadline = Date.now() + 90_000;
    let finished = 0;
    while (Date.now() < deadline) {
      const { candles } = await (await fetch(`${server.url}/api/trading/valuation/history?eventSlug=openai-ipo&interval=1h&limit=1000`)).json();
      finished = candles.filter((c: { final: boolean }) => c.final).length;
      if (finished >= 720) break;
      await Bun.sleep(500);
    }
    expect(finished).toBeGreaterThanOrEqual(720);
  }, 120_000);

  test('history:backfill while the server holds the data directory: through the server, the same lines', async () => {
    const env = { DATA_DIR: join(dir, 'data'), DASHBOARD_KEYS: DASH, BASE: server.url, LOG_LEVEL: 'warn' };
    const refused = await runToExit(['server/commands/backfill-history.ts', '--interval', '1d', '--from', '2026-01-01'], env, 60_000);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('--account');
    await fetch(`${server.url}/api/keys`, { method: 'POST', headers: { 'x-api-key': DASH, 'x-account-id': 'ops', 'content-type': 'application/json' }, body: '{"name":"ops"}' });
    // 60 days back at a point a second: 172,800 points per day, so the command splits it into calls of at most 100,000.
    const from = new Date(Date.now() - 60 * DAY).toISOString().slice(0, 10);
    const to = new Date(Date.now() - 58 * DAY).toISOString().slice(0, 10);
    const args = ['server/commands/backfill-history.ts', '--interval', '1h', '--from', from, '--to', to, '--step-seconds', '1', '--account', 'ops', '--event', 'stripe-ipo'];
    const run = await runToExit(args, env, 90_000);
    expect([run.exitCode, run.stderr]).toEqual([0, '']);
    const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toEqual([{ event: 'stripe-ipo', interval: '1h', venue: 'paper', candles: 72, written: 72, points: 72 * 3600, problems: [] }]);
    const again = await runToExit(args, env, 90_000);
    expect(JSON.parse(again.stdout)).toMatchObject({ candles: 72, written: 0 });
    const { candles } = await (await fetch(`${server.url}/api/trading/valuation/history?eventSlug=stripe-ipo&interval=1h&from=${from}&to=${to}&limit=100`)).json();
    expect(candles.length).toBe(72);
    expect(candles.every((c: { samples: number }) => c.samples === 3600)).toBe(true);
  }, 120_000);
});
