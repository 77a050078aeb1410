/**
 * A company's markets (docs/companies.md "Markets"): the listed valuation events linked to it, valued
 * exactly as the valuation routes value them from the same snapshot; the list's hasMarket filter; and
 * what a company read answers when an event has no prices or the venue does not answer.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { events } from '../../db/schema.ts';
import { ApiError } from '../../server/errors.ts';
import type { OrderBook, Venue } from '../../server/venues/venue.ts';
import { trpcClient, type TestApp } from '../harness/app.ts';
import { fundedAccount, type FundedAccount } from '../harness/factories.ts';
import { api } from '../harness/trading.ts';
import { createTradingApp } from '../harness/trading-venue.ts';

const PUBLIC = { headers: {} };

let t: TestApp;
let acct: FundedAccount;
/** sourceId → the ids of the listed events linked to it, as GET /api/trading/events names them. */
let linked: Map<string, string[]>;

beforeAll(async () => {
  // One snapshot for the whole file unless a test refreshes it: values compared across routes come from the same one.
  t = await createTradingApp({ MARKET_DATA_TTL_MS: '600000' });
  acct = await fundedAccount(t, { usd: 100 });
  const { body } = await api(t, PUBLIC, 'GET', '/api/trading/events');
  linked = new Map();
  for (const e of body.events) if (e.companySourceId) linked.set(e.companySourceId, [...(linked.get(e.companySourceId) ?? []), e.id].sort());
});
afterAll(() => t.close());

const get = (path: string) => api(t, acct, 'GET', path);

/** The market a company answer should carry for an event: what /valuation answers for it now. */
async function valuedAs(eventId: string) {
  const { res, body } = await api(t, PUBLIC, 'GET', `/api/trading/valuation?eventSlug=${eventId}`);
  expect(res.status).toBe(200);
  return {
    eventId,
    status: body.event.status,
    impliedValuation: body.impliedValuation,
    longCost: body.valuation.longCost,
    shortCost: body.valuation.shortCost,
    updatedAt: body.timestamp,
  };
}

/** Every company id of the list with these parameters (one page holds the whole seeded dataset). */
/** Every company the list answers for the query, page by page. */
async function listedIds(query: string) {
  const ids = new Set<number>();
  for (let offset = 0; ; offset += 200) {
    const { res, body } = await get(`/api/private-companies?limit=200&offset=${offset}${query}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-cost-usd')).toBe('0.02');
    for (const c of body.companies) ids.add(c.id);
    if (offset + 200 >= body.total) {
      expect(ids.size).toBe(body.total);
      return ids;
    }
  }
}

describe('GET /api/trading/events', () => {
  test('each event names the company record it is linked to', async () => {
    const { body } = await api(t, PUBLIC, 'GET', '/api/trading/events');
    expect(body.events.every((e: any) => e.companySourceId === null || typeof e.companySourceId === 'string')).toBe(true);
    expect(body.events.find((e: any) => e.id === 'kraken-ipo').companySourceId).toBe('kraken');
    expect(linked.get('spacex')).toEqual(['spacex-ipo-higher', 'spacex-ipo-lower']);
    for (const sourceId of linked.keys()) expect((await get(`/api/private-companies/source/${sourceId}`)).res.status).toBe(200);
  });
});

describe('company detail: markets', () => {
  test('one per listed linked event, valued as GET /api/trading/valuation values it from the same snapshot', async () => {
    for (const sourceId of ['kraken', 'spacex']) {
      const { res, body } = await get(`/api/private-companies/source/${sourceId}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-cost-usd')).toBe('0.02');
      expect(body.markets.map((m: any) => m.eventId)).toEqual(linked.get(sourceId)!);
      for (const market of body.markets) {
        expect(market).toEqual(await valuedAs(market.eventId));
        expect(market.impliedValuation).toBeNumber();
        expect(market.longCost).toBeGreaterThan(0);
      }
      // The same values by id, and as /valuation/all gives them.
      expect((await get(`/api/private-companies/${body.id}`)).body).toEqual(body);
      const { body: all } = await api(t, PUBLIC, 'GET', '/api/trading/valuation/all');
      for (const { status: _, ...market } of body.markets) expect(all.valuations.find((v: any) => v.eventId === market.eventId)).toEqual(market);
    }
    expect((await get('/api/private-companies/spacex')).body).toEqual((await get('/api/private-companies/source/spacex')).body);
  });

  test('a company without a linked event has markets: []', async () => {
    const { body: list } = await get('/api/private-companies?limit=200');
    let checked = 0;
    for (const { id } of list.companies.slice(0, 40)) {
      const { body } = await get(`/api/private-companies/${id}`);
      if (linked.has(body.sourceId)) continue;
      expect(body.markets).toEqual([]);
      checked++;
    }
    expect(checked).toBeGreaterThan(10);
  });
});

describe('GET /api/private-companies?hasMarket=', () => {
  test('true lists exactly the companies with a listed linked event, false the others', async () => {
    const withMarket = new Set<number>();
    for (const sourceId of linked.keys()) withMarket.add((await get(`/api/private-companies/source/${sourceId}`)).body.id);
    const all = await listedIds('');
    expect([...(await listedIds('&hasMarket=true'))].sort()).toEqual([...withMarket].sort());
    expect([...(await listedIds('&hasMarket=false'))].sort()).toEqual([...all].filter((id) => !withMarket.has(id)).sort());
    // With another filter, both must match.
    const ai = await listedIds('&industry=artificial%20intelligence');
    expect([...(await listedIds('&industry=artificial%20intelligence&hasMarket=true'))].sort()).toEqual([...ai].filter((id) => withMarket.has(id)).sort());
  });

  test('anything but true or false is 400 naming hasMarket, unbilled', async () => {
    for (const value of ['yes', '1', '']) {
      const { res, body } = await get(`/api/private-companies?hasMarket=${value}`);
      expect(res.status).toBe(400);
      expect(body.message).toContain('hasMarket');
      expect(res.headers.get('x-request-cost-usd')).toBe('0');
    }
  });
});

describe('on /trpc', () => {
  test('the same markets and the same filter, a boolean for a typed client', async () => {
    const client = trpcClient(t, acct.headers);
    const rest = (await get('/api/private-companies/source/kraken')).body;
    const detail = await client.privateCompanies.byId.query({ id: rest.id });
    expect(detail.markets).toEqual(rest.markets);
    expect((await client.privateCompanies.bySourceId.query({ sourceId: 'spacex' })).markets).toEqual((await get('/api/private-companies/source/spacex')).body.markets);
    const withMarket = await client.privateCompanies.list.query({ hasMarket: true, limit: 200 });
    const without = await client.privateCompanies.list.query({ hasMarket: false, limit: 200 });
    expect(withMarket.total).toBe((await get('/api/private-companies?hasMarket=true')).body.total);
    expect(withMarket.companies.some((c) => c.id === rest.id)).toBe(true);
    expect(without.companies.some((c) => c.id === rest.id)).toBe(false);
    expect(withMarket.total + without.total).toBe((await get('/api/private-companies')).body.total);
  });
});

describe('an event taken off the list', () => {
  test('leaves the filter at once and the company\'s markets with the next snapshot', async () => {
    const kraken = (await get('/api/private-companies/source/kraken')).body;
    const before = (await get('/api/private-companies/source/spacex')).body.markets;
    await t.database.db.update(events).set({ listing: 'hidden' }).where(eq(events.id, 'kraken-ipo'));
    await t.database.db.update(events).set({ listing: 'hidden' }).where(eq(events.id, 'spacex-ipo-lower'));

    // The list reads the listings as stored; the markets are the snapshot's until it is refreshed.
    expect((await listedIds('&hasMarket=true')).has(kraken.id)).toBe(false);
    expect((await listedIds('&hasMarket=false')).has(kraken.id)).toBe(true);
    expect((await get('/api/private-companies/source/kraken')).body.markets.map((m: any) => m.eventId)).toEqual(['kraken-ipo']);

    await t.services.marketData.refreshed();
    expect((await get(`/api/private-companies/${kraken.id}`)).body.markets).toEqual([]);
    const after = (await get('/api/private-companies/source/spacex')).body.markets;
    expect(after.map((m: any) => m.eventId)).toEqual(['spacex-ipo-higher']);
    expect(after[0]).toEqual(await valuedAs('spacex-ipo-higher'));
    expect(Date.parse(after[0].updatedAt)).toBeGreaterThanOrEqual(Date.parse(before[0].updatedAt));
    expect((await api(t, PUBLIC, 'GET', '/api/trading/valuation?eventSlug=kraken-ipo')).res.status).toBe(404);
  });
});

describe('without prices', () => {
  let u: TestApp;
  let who: FundedAccount;
  /** What the venue's books do: answer, answer empty books for Kraken's bands, or fail. */
  let books: 'ok' | 'kraken-empty' | 'down' = 'ok';
  beforeAll(async () => {
    const krakenBands = new Set<string>();
    // No snapshot outlives a request here, so each one sees the venue as `books` says.
    u = await createTradingApp(
      { MARKET_DATA_TTL_MS: '0' },
      {
        venueKind: 'paper',
        wrap: (venue: Venue) =>
          new Proxy(venue, {
            get(target, prop) {
              if (prop !== 'getOrderBooks') return Reflect.get(target, prop, target);
              return async (ids: string[]): Promise<Map<string, OrderBook>> => {
                if (books === 'down') throw new ApiError('VENUE_UNAVAILABLE', 'The venue failed to read the order books; retry shortly');
                const answer = await target.getOrderBooks(ids);
                if (books === 'kraken-empty') for (const id of krakenBands) answer.set(id, { tokenId: id, bids: [], asks: [], lastTradeMicros: null, tickMicros: 10_000 });
                return answer;
              };
            },
          }),
      },
    );
    who = await fundedAccount(u, { usd: 100 });
    const kraken = (await api(u, PUBLIC, 'GET', '/api/trading/events')).body.events.find((e: any) => e.id === 'kraken-ipo');
    // Kraken's is a ladder: its books are its thresholds' tokens (its bands' are derived from them).
    for (const token of kraken.tokens) krakenBands.add(token.id);
  });
  afterAll(() => u.close());

  test('an event with no prices has null numbers; the others keep theirs', async () => {
    books = 'kraken-empty';
    const { res, body } = await api(u, who, 'GET', '/api/private-companies/source/kraken');
    expect(res.status).toBe(200);
    expect(body.markets).toEqual([{ eventId: 'kraken-ipo', status: 'open', impliedValuation: null, longCost: null, shortCost: null, updatedAt: expect.any(String) }]);
    const spacex = (await api(u, who, 'GET', '/api/private-companies/source/spacex')).body.markets;
    expect(spacex).toHaveLength(2);
    for (const market of spacex) expect(market.longCost).toBeNumber();
  });

  test('a venue that does not answer leaves the numbers null, not the company read failed', async () => {
    books = 'down';
    const { res, body } = await api(u, who, 'GET', '/api/private-companies/source/kraken');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-cost-usd')).toBe('0.02');
    expect(body.name).toBe('Kraken');
    expect(body.markets).toEqual([{ eventId: 'kraken-ipo', status: 'open', impliedValuation: null, longCost: null, shortCost: null, updatedAt: null }]);
    // A company without markets never asks the venue.
    const { body: list } = await api(u, who, 'GET', '/api/private-companies?hasMarket=false&limit=1');
    const other = await api(u, who, 'GET', `/api/private-companies/${list.companies[0].id}`);
    expect(other.res.status).toBe(200);
    expect(other.body.markets).toEqual([]);
    // While the valuation routes themselves cannot answer.
    expect((await api(u, PUBLIC, 'GET', '/api/trading/valuation?eventSlug=kraken-ipo')).res.status).toBe(503);
    books = 'ok';
  });
});
