/**
 * One set of event ids: valuation, buy and the positions and history filters accept
 * our id, the venue's event slug and the seeded aliases (the docs' `spacex-ipo`), answer with our id,
 * and answer 404 NOT_FOUND naming an unknown id, over /api and /trpc.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { events } from '../../db/schema.ts';
import { loadEvents } from '../../seeds/events.ts';
import { findEvent } from '../../server/events/queries.ts';
import { idCollisions } from '../../server/events/event-schema.ts';
import { upsertEvents } from '../../server/events/store.ts';
import { createTestApp, trpcClient, type TestApp } from '../harness/app.ts';
import { api, buy, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp } from '../harness/trading-venue.ts';

let t: TestApp;
let who: Trader;
/** openai-ipo is open; its venue slug is openai-ipo-closing-market-cap. */
const OPEN = { id: 'openai-ipo', slug: 'openai-ipo-closing-market-cap' };

beforeAll(async () => {
  t = await createTradingApp();
  who = await trader(t);
});
afterAll(() => t.close());

const trpcError = (promise: Promise<unknown>) => promise.then(() => expect.unreachable(), (e: any) => e.data.api);

describe('every id an event answers to', () => {
  test('the events list names each event\'s aliases; spacex-ipo is the higher-strikes SpaceX event', async () => {
    const { body } = await api(t, { headers: {} }, 'GET', '/api/trading/events');
    const byId = new Map(body.events.map((e: any) => [e.id, e]));
    expect((byId.get('spacex-ipo-higher') as any).aliases).toEqual(['spacex-ipo']);
    expect((byId.get(OPEN.id) as any)).toMatchObject({ aliases: [], venue: { eventSlug: OPEN.slug } });
  });

  test.each([
    ['our id', 'spacex-ipo-higher'],
    ['the venue slug', 'spacex-ipo-closing-market-cap-higher-strikes'],
    ['the docs\' alias', 'spacex-ipo'],
  ])('valuation by %s answers our id, on /api and /trpc', async (_, ref) => {
    const { res, body } = await api(t, { headers: {} }, 'GET', `/api/trading/valuation?eventSlug=${ref}`);
    expect(res.status).toBe(200);
    expect(body.event.slug).toBe('spacex-ipo-higher');
    const viaTrpc = await trpcClient(t).tradingMarket.valuation.query({ eventSlug: ref });
    expect(viaTrpc.event.slug).toBe('spacex-ipo-higher');
  });

  test('buy by the venue slug opens a position on our event (it was 404), and the filters find it by any id', async () => {
    const bought = await buy(t, who, { eventId: OPEN.slug, side: 'LONG', amount: 40 });
    expect(bought.res.status).toBe(200);
    expect(bought.body.eventId).toBe(OPEN.id);
    const client = trpcClient(t, who.headers);
    for (const ref of [OPEN.id, OPEN.slug]) {
      const listed = (await api(t, who, 'GET', `/api/trading/positions?status=all&eventId=${ref}`)).body;
      expect(listed.positions.map((p: any) => [p.id, p.eventId])).toEqual([[bought.body.positionId, OPEN.id]]);
      expect((await client.positions.list.query({ status: 'all', eventId: ref })).positions.map((p) => p.id)).toEqual([bought.body.positionId]);
      const history = (await api(t, who, 'GET', `/api/trading/history?eventId=${ref}`)).body;
      expect(history.trades.length).toBe(bought.body.orders.length);
      expect(new Set(history.trades.map((x: any) => x.eventId))).toEqual(new Set([OPEN.id]));
      expect((await client.orders.history.query({ eventId: ref })).summary.totalTrades).toBe(bought.body.orders.length);
    }
  });

  test('buy by the docs\' alias reaches the SpaceX event (resolved, so 422), over /api and /trpc', async () => {
    const { res, body } = await buy(t, who, { eventId: 'spacex-ipo', side: 'LONG', amount: 40 });
    expect(res.status).toBe(422);
    expect(body).toMatchObject({ code: 'ORDER_REJECTED' });
    expect(body.message).toContain('spacex-ipo-higher');
    const error = await trpcError(trpcClient(t, who.headers).trading.buy.mutate({ eventId: 'spacex-ipo', side: 'LONG', amount: 40 }));
    expect(error).toMatchObject({ code: 'ORDER_REJECTED', status: 422 });
  });

  test.each([
    ['valuation', 'GET', '/api/trading/valuation?eventSlug=no-such-event', 'eventSlug'],
    ['buy', 'POST', '/api/trading/buy', 'eventId'],
    ['positions', 'GET', '/api/trading/positions?eventId=no-such-event', 'eventId'],
    ['history', 'GET', '/api/trading/history?eventId=no-such-event', 'eventId'],
  ])('an unknown id is 404 NOT_FOUND naming it: %s over /api', async (_, method, path, param) => {
    const body = method === 'POST' ? { eventId: 'no-such-event', side: 'LONG', amount: 10 } : undefined;
    const answer = await api(t, who, method, path, body);
    expect(answer.res.status).toBe(404);
    expect(answer.body).toMatchObject({ code: 'NOT_FOUND', status: 404, requestId: expect.any(String) });
    expect(answer.body.message).toContain(`${param}: no event no-such-event`);
  });

  test('an unknown id is 404 NOT_FOUND naming it over /trpc, on every route', async () => {
    const client = trpcClient(t, who.headers);
    const errors = await Promise.all([
      trpcError(client.tradingMarket.valuation.query({ eventSlug: 'no-such-event' })),
      trpcError(client.trading.buy.mutate({ eventId: 'no-such-event', side: 'LONG', amount: 10 })),
      trpcError(client.positions.list.query({ eventId: 'no-such-event' })),
      trpcError(client.orders.history.query({ eventId: 'no-such-event' })),
    ]);
    for (const error of errors) expect(error).toMatchObject({ code: 'NOT_FOUND', status: 404, message: expect.stringContaining('no event no-such-event') });
  });

  test('without a market-data snapshot (TTL 0) the history filter resolves through the database, by the same rule', async () => {
    const cold = await createTestApp({ MARKET_DATA_TTL_MS: '0' }, { database: t.database });
    try {
      const client = trpcClient(cold, who.headers);
      const trades = (await client.orders.history.query({ eventId: OPEN.slug })).summary.totalTrades;
      expect(trades).toBeGreaterThan(0);
      expect((await client.orders.history.query({ eventId: OPEN.id })).summary.totalTrades).toBe(trades);
      expect((await client.orders.history.query({ eventId: 'spacex-ipo' })).summary.totalTrades).toBe(0);
      expect(await trpcError(client.orders.history.query({ eventId: 'no-such-event' }))).toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('eventId: no event no-such-event') });
      expect((await findEvent(t.database.db, 'spacex-ipo')).id).toBe('spacex-ipo-higher');
    } finally {
      await cold.close();
    }
  });
});

describe('aliases in the seeds', () => {
  test('an alias, id or slug that would name two events is refused', async () => {
    const seeded = await loadEvents();
    expect(idCollisions(seeded)).toEqual([]);
    const [a, b] = seeded;
    expect(idCollisions([a!, { ...b!, aliases: [a!.id] }])).toEqual([`${b!.id}: "${a!.id}" already names ${a!.id}`]);
    expect(idCollisions([a!, { ...b!, aliases: [a!.venue.eventSlug!] }]).join()).toContain('already names');
  });

  test('aliases follow the seeds even after events:sync made the venue the source of an event', async () => {
    const db = t.database.db;
    const [before] = await db.select().from(events).where(eq(events.id, 'spacex-ipo-higher'));
    await db.update(events).set({ venue: { ...before!.venue, syncedAt: new Date().toISOString() }, aliases: [] }).where(eq(events.id, 'spacex-ipo-higher'));
    try {
      await upsertEvents(db, await loadEvents());
      const [after] = await db.select().from(events).where(eq(events.id, 'spacex-ipo-higher'));
      expect(after!.aliases).toEqual(['spacex-ipo']);
      expect(after!.venue.syncedAt).toBeDefined();
    } finally {
      await db.update(events).set({ venue: before!.venue }).where(eq(events.id, 'spacex-ipo-higher'));
    }
  });
});
