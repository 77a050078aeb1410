/**
 * Discovery passes through the HTTP surface and the job, against a Gamma stand-in serving real
 * payload shapes (tests/fixtures/gamma/discovery/): a pass lists exactly the new IPO valuation events
 * (here the SpaceX "above $X" ladder; the seeded Anthropic event is known), skips the rest with their
 * reasons, writes nothing in a dry run, changes nothing the second time, and two instances passing at
 * once list an event once. A discovered ladder, once approved, is valued and traded on the paper venue.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { loadConfig } from '../../server/config.ts';
import { findEvent } from '../../server/events/queries.ts';
import { runDiscoveryPass, startEventDiscovery } from '../../server/events/discovery-pass.ts';
import { createTestApp, DASHBOARD_KEY, TEST_ENV, trpcClient, type TestApp } from '../harness/app.ts';
import { dashboardHeaders, fundedAccount } from '../harness/factories.ts';
import { GammaStandin } from '../harness/gamma-standin.ts';
import { api, buy, expectBooksAgree, sell, trader } from '../harness/trading.ts';
import { expectValuationRecomputed } from '../harness/expected-valuation.ts';
import { createTradingApp, ledgerOf, standinOf } from '../harness/trading-venue.ts';

const DIR = new URL('../fixtures/gamma/discovery/', import.meta.url);
const FIXTURES = readdirSync(DIR).map((file) => JSON.parse(readFileSync(new URL(file, DIR), 'utf8')));
const LADDER = 'spacex-ipo-closing-market-cap-above';

let gamma: GammaStandin;
let t: TestApp;
let operator: Record<string, string>;

beforeAll(async () => {
  gamma = new GammaStandin(FIXTURES).start();
  t = await createTradingApp({ GAMMA_API_URL: gamma.url }, { venueKind: 'paper' });
  operator = dashboardHeaders(DASHBOARD_KEY, (await fundedAccount(t)).accountId);
});
afterAll(async () => {
  await t.close();
  gamma.stop();
});

const discover = (body: Record<string, unknown> = {}, app = t) => api(app, { headers: operator }, 'POST', '/api/events/discover', body);
const proposed = async () => (await api(t, { headers: operator }, 'GET', '/api/events/listings?listing=proposed')).body.events.map((e: any) => e.eventId);

describe('a discovery pass', () => {
  test('a dry run names what it would list and what it skips, and writes nothing', async () => {
    const { res, body } = await discover({ dryRun: true });
    expect(res.status).toBe(200);
    expect(body.added).toEqual([{ eventId: LADDER, venueEventSlug: LADDER, listing: 'proposed' }]);
    expect(body.known).toEqual(['anthropic-ipo-closing-market-cap-119']);
    expect(body.skipped.map((s: any) => s.slug).sort()).toEqual([
      'canva-ipo-closing-market-cap',
      'cerebras-ipo-closing-market-cap',
      'discord-ipo-closing-market-cap',
      'kraken-ipo-in-2026',
      'revolut-ipo-closing-market-cap',
      'which-bank-will-take-kraken-public',
    ]);
    for (const { slug, reason } of body.skipped) expect(reason.startsWith(slug)).toBe(true);
    // The closed Databricks event is read only for status (it is resolved here: nothing to close).
    expect(body.seen).toBe(FIXTURES.filter((e) => !e.closed).length);
    expect(new Set(gamma.listRequests.map((r) => `${r.query.tag_slug} closed=${r.query.closed}`))).toEqual(new Set(['ipo closed=false', 'ipo closed=true']));
    expect(body.closed).toEqual([]);
    expect(body.dryRun).toBe(true);
    expect(await proposed()).toEqual([]);
  });

  test('a pass proposes the new ladder; a second pass changes nothing; customers do not see it yet', async () => {
    const first = await discover();
    expect(first.body.added).toEqual([{ eventId: LADDER, venueEventSlug: LADDER, listing: 'proposed' }]);
    const second = (await trpcClient(t, operator).events.discover.mutate({})) as any;
    expect(second.added).toEqual([]);
    expect(second.known.sort()).toEqual(['anthropic-ipo-closing-market-cap-119', LADDER]);
    expect(await proposed()).toEqual([LADDER]);
    const listing = (await api(t, { headers: operator }, 'GET', '/api/events/listings?listing=proposed')).body.events[0];
    expect(listing).toMatchObject({ company: 'SpaceX', structure: 'ladder', origin: 'discovered', status: 'open' });
    // Its venue details are mapped as the sync maps them, from the first moment: the token ledger
    // (market version), the No tokens, the tick size — the live venue trades on them.
    const stored = await findEvent(t.database.db, LADDER);
    const markets = FIXTURES.find((e) => e.slug === LADDER).markets;
    expect(stored.venue.syncedAt).toBeString();
    for (const band of stored.bands.slice(1)) {
      const market = markets.find((m: any) => JSON.parse(m.clobTokenIds)[0] === band.venue.tokenId);
      expect(band.venue).toMatchObject({ version: market.version, noTokenId: JSON.parse(market.clobTokenIds)[1], tickSize: market.orderPriceMinTickSize });
    }
    await t.services.marketData.refreshed();
    const events = (await api(t, { headers: {} }, 'GET', '/api/trading/events')).body.events.map((e: any) => e.id);
    expect(events).not.toContain(LADDER);
  });

  test('approved, the ladder is valued over its derived bands and trades on the paper venue', async () => {
    const approved = await api(t, { headers: operator }, 'POST', `/api/events/${LADDER}/listing`, { listing: 'listed' });
    expect(approved.body).toMatchObject({ eventId: LADDER, changed: true });
    await t.services.marketData.refreshed();
    const valuation = await api(t, { headers: {} }, 'GET', `/api/trading/valuation?eventSlug=${LADDER}`);
    expect(valuation.res.status).toBe(200);
    const bands = valuation.body.breakdown;
    expect(bands[0]).toMatchObject({ minValuation: 0 });
    expect(bands.at(-1).maxValuation).toBeNull();
    // Contiguous bands between the thresholds, ascending.
    for (let i = 1; i < bands.length; i++) expect(bands[i].minValuation).toBe(bands[i - 1].maxValuation);
    // Every number, recomputed independently from the venue's books of its threshold tokens.
    await expectValuationRecomputed(t, LADDER);
    const who = await trader(t);
    const bought = await buy(t, who, { eventId: LADDER, side: 'LONG', amount: 100 });
    expect([bought.res.status, bought.body.message]).toEqual([200, undefined]);
    // Bought as its thresholds' Yes and No tokens (tests/trading/ladder-trading.test.ts checks the replication).
    for (const order of bought.body.orders) expect(order.bandId).toMatch(/:(yes|no)$/);
    const half = await sell(t, who, { positionId: bought.body.positionId, percentage: 50 });
    expect([half.res.status, half.body.status]).toEqual([200, 'open']);
    const rest = await sell(t, who, { positionId: bought.body.positionId, percentage: 100 });
    expect([rest.res.status, rest.body.status, rest.body.unsold]).toEqual([200, 'closed', []]);

    // Settlement: resolved at its top band, a SHORT pays its Yes of the top threshold (wₙ·U shares), once.
    const short = await buy(t, who, { eventId: LADDER, side: 'SHORT', amount: 50 });
    expect(short.res.status).toBe(200);
    const held = (await api(t, who, 'GET', `/api/trading/positions/${short.body.positionId}`)).body.bands;
    const top = held.at(-1);
    const resolved = await api(t, { headers: operator }, 'POST', `/api/events/${LADDER}/resolution`, { winningBandId: top.bandId });
    expect(resolved.body).toMatchObject({ status: 'resolved', settled: 1, paid: 1, unpaid: 0 });
    const [settlement] = (await api(t, who, 'GET', `/api/trading/settlements?eventId=${LADDER}`)).body.settlements;
    expect(settlement).toMatchObject({ positionId: short.body.positionId, proceeds: top.tokens, paid: true });
  });

  test('Gamma not answering is 503 VENUE_UNAVAILABLE, and nothing is written', async () => {
    gamma.failNext = [502];
    const { res, body } = await discover();
    expect([res.status, body.code]).toEqual([503, 'VENUE_UNAVAILABLE']);
  });
});

describe('several instances', () => {
  test('two instances discovering at once list a new event once (EVENT_AUTO_LIST=true lists it at once)', async () => {
    const renamed = structuredClone(FIXTURES.find((e) => e.slug === LADDER));
    Object.assign(renamed, { id: '402007', slug: 'spacex-ipo-closing-market-cap-above-2027', ticker: 'spacex-ipo-closing-market-cap-above-2027' });
    renamed.markets.forEach((m: any, i: number) => (m.clobTokenIds = JSON.stringify([`99${i}0${'7'.repeat(60)}`, `99${i}1${'7'.repeat(60)}`])));
    gamma.setEvents([renamed]);
    const env = { GAMMA_API_URL: gamma.url, EVENT_AUTO_LIST: 'true' };
    const [a, b] = await Promise.all([createTestApp(env, { database: t.database }), createTestApp(env, { database: t.database })]);
    try {
      const passes = await Promise.all([discover({}, a), discover({}, b), discover({}, a), discover({}, b)]);
      const added = passes.flatMap((p) => p.body.added);
      // Its id drops the numeric suffix, and is made unique against the first ladder's.
      expect(added).toEqual([{ eventId: 'spacex-ipo-closing-market-cap-above-2', venueEventSlug: 'spacex-ipo-closing-market-cap-above-2027', listing: 'listed' }]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('on the live venue', () => {
  test('with EVENT_AUTO_LIST=true a ladder is listed at once, like a band event (both trade there)', async () => {
    const ladder = structuredClone(FIXTURES.find((e) => e.slug === LADDER));
    Object.assign(ladder, { id: '502007', slug: 'spacex-ipo-closing-market-cap-above-live' });
    const bands = structuredClone(FIXTURES.find((e) => e.slug === 'anthropic-ipo-closing-market-cap-119'));
    Object.assign(bands, { id: '502008', slug: 'anthropic-ipo-closing-market-cap-live' });
    gamma.setEvents([ladder, bands]);
    const live = { ...t.services, config: { ...t.config, venue: 'polymarket' as const, discovery: { ...t.config.discovery, autoList: true } } };
    const report = await runDiscoveryPass(live, { dryRun: true });
    expect(report.added).toEqual([
      { eventId: 'spacex-ipo-closing-market-cap-above-live', venueEventSlug: 'spacex-ipo-closing-market-cap-above-live', listing: 'listed' },
      { eventId: 'anthropic-ipo-closing-market-cap-live', venueEventSlug: 'anthropic-ipo-closing-market-cap-live', listing: 'listed' },
    ]);
    gamma.setEvents(FIXTURES);
  });
});

describe('the discovery job', () => {
  test('runs every EVENT_DISCOVERY_INTERVAL_MS; unset, it is off on the paper venue without GAMMA_API_URL and hourly otherwise', async () => {
    expect(loadConfig({ ...TEST_ENV }).discovery.intervalMs).toBe(0);
    expect(loadConfig({ ...TEST_ENV, GAMMA_API_URL: 'http://gamma.test' }).discovery.intervalMs).toBe(3_600_000);
    expect(loadConfig({ ...TEST_ENV, VENUE: 'polymarket' }).discovery.intervalMs).toBe(3_600_000);
    expect(loadConfig({ ...TEST_ENV, VENUE: 'polymarket', EVENT_DISCOVERY_INTERVAL_MS: '0' }).discovery.intervalMs).toBe(0);
    expect(() => loadConfig({ ...TEST_ENV, EVENT_DISCOVERY_INTERVAL_MS: 'hourly' })).toThrow(/EVENT_DISCOVERY_INTERVAL_MS/);

    expect(startEventDiscovery({ ...t.services, config: { ...t.config, discovery: { ...t.config.discovery, intervalMs: 0 } } })).toBeUndefined();
    gamma.setEvents(FIXTURES);
    const job = startEventDiscovery({ ...t.services, config: { ...t.config, discovery: { ...t.config.discovery, intervalMs: 3_600_000 } } })!;
    try {
      const report = await job.runNow();
      expect(report.added).toEqual([]);
      expect(report.known).toContain(LADDER);
    } finally {
      await job.stop();
    }
  });
});

describe('events Gamma has closed', () => {
  test('an open event here that Gamma lists as closed is closed by a pass (a dry run only says so); trading on it stops', async () => {
    const closedAnthropic = { ...structuredClone(FIXTURES.find((e) => e.slug === 'anthropic-ipo-closing-market-cap-119')), closed: true };
    const own = new GammaStandin([closedAnthropic]).start();
    const app = await createTradingApp({ GAMMA_API_URL: own.url, MARKET_DATA_TTL_MS: '0' }, { venueKind: 'paper' });
    try {
      const ops = dashboardHeaders(DASHBOARD_KEY, (await fundedAccount(app)).accountId);
      const dry = await api(app, { headers: ops }, 'POST', '/api/events/discover', { dryRun: true });
      expect([dry.res.status, dry.body.closed, dry.body.seen]).toEqual([200, ['anthropic-ipo'], 0]);
      expect((await findEvent(app.database.db, 'anthropic-ipo')).status).toBe('open');
      const pass = await api(app, { headers: ops }, 'POST', '/api/events/discover', {});
      expect(pass.body.closed).toEqual(['anthropic-ipo']);
      expect((await findEvent(app.database.db, 'anthropic-ipo')).status).toBe('closed');
      // A second pass finds nothing left to close.
      expect((await api(app, { headers: ops }, 'POST', '/api/events/discover', {})).body.closed).toEqual([]);
      const who = await trader(app);
      const refused = await buy(app, who, { eventId: 'anthropic-ipo', side: 'LONG', amount: 50 });
      expect([refused.res.status, refused.body.code]).toEqual([422, 'ORDER_REJECTED']);
    } finally {
      await app.close();
      own.stop();
    }
  });
});

describe('discovered events on the live venue (the CLOB stand-in)', () => {
  test('a discovered ladder and a discovered band event: valued from their tokens, bought, sold in part and in full; books and venue agree', async () => {
    const ladder = { ...structuredClone(FIXTURES.find((e) => e.slug === LADDER)), id: '602007', slug: 'spacex-ipo-closing-market-cap-above-clob' };
    const bands = { ...structuredClone(FIXTURES.find((e) => e.slug === 'anthropic-ipo-closing-market-cap-119')), id: '602008', slug: 'anthropic-ipo-closing-market-cap-clob' };
    const own = new GammaStandin([ladder, bands]).start();
    let clock = Date.now();
    const app = await createTradingApp({ GAMMA_API_URL: own.url, EVENT_AUTO_LIST: 'true', MARKET_DATA_TTL_MS: '0' }, { venueKind: 'polymarket', now: () => clock });
    try {
      const ops = dashboardHeaders(DASHBOARD_KEY, (await fundedAccount(app)).accountId);
      const pass = await api(app, { headers: ops }, 'POST', '/api/events/discover', {});
      const ids = pass.body.added.map((a: any) => a.eventId);
      expect(pass.body.added.map((a: any) => a.listing)).toEqual(['listed', 'listed']);
      // The venue quotes the new markets (around their stored seed prices: a ladder's "above" market at
      // the sum from its band up); the token map picks them up within its minute.
      const standin = standinOf(app)!;
      for (const id of ids) {
        const event = await findEvent(app.database.db, id);
        event.bands.forEach((band, i) => {
          if (!band.venue.tokenId || !band.venue.noTokenId) return;
          const price = event.venue.structure === 'ladder' ? event.bands.slice(i).reduce((sum, b) => sum + b.seedPrice, 0) : band.seedPrice;
          standin.list({ yes: band.venue.tokenId, no: band.venue.noTokenId, price: Math.min(0.97, Math.max(0.03, price)) });
        });
      }
      clock += 61_000;
      const who = await trader(app);
      await api(app, who, 'PUT', '/api/trading/settings', { walletAddress: who.userId });
      for (const id of ids) {
        await expectValuationRecomputed(app, id);
        const quote = await api(app, who, 'POST', '/api/trading/quote', { eventId: id, side: 'LONG', amount: 60 });
        const bought = await buy(app, who, { eventId: id, side: 'LONG', amount: 60 });
        expect(`${id} ${bought.res.status} ${bought.body.message ?? ''}`).toBe(`${id} 200 `);
        expect(bought.body.orders.map((o: any) => [o.bandId, o.size])).toEqual(quote.body.bands.map((q: any) => [q.bandId, q.shares]));
        const half = await sell(app, who, { positionId: bought.body.positionId, percentage: 50 });
        expect([half.res.status, half.body.status]).toEqual([200, 'open']);
        const rest = await sell(app, who, { positionId: bought.body.positionId, percentage: 100 });
        expect([rest.res.status, rest.body.status, rest.body.unsold]).toEqual([200, 'closed', []]);
      }
      await expectBooksAgree(app, who);

      // Settlement, redeemed on the venue's ledger: each event resolved at its top band pays a SHORT
      // what its position pays there (its bands answer it), once.
      const before = await ledgerOf(app).collateral(who);
      let proceeds = 0;
      for (const id of ids) {
        const short = (await buy(app, who, { eventId: id, side: 'SHORT', amount: 40 })).body.positionId;
        const top = (await api(app, who, 'GET', `/api/trading/positions/${short}`)).body.bands.at(-1);
        const resolved = await api(app, { headers: ops }, 'POST', `/api/events/${id}/resolution`, { winningBandId: top.bandId });
        expect(resolved.body).toMatchObject({ status: 'resolved', settled: 1, paid: 1, unpaid: 0 });
        const [settlement] = (await api(app, who, 'GET', `/api/trading/settlements?eventId=${id}`)).body.settlements;
        expect(settlement).toMatchObject({ positionId: short, proceeds: top.tokens, paid: true, txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
        proceeds += Math.round(top.tokens * 1e6);
      }
      const buys = (await api(app, who, 'GET', '/api/trading/history?limit=1000')).body.trades.filter((x: any) => x.action === 'BUY' && x.side === 'SHORT');
      const spent = buys.reduce((sum: number, x: any) => sum + Math.round(x.amount * 1e6), 0);
      expect(await ledgerOf(app).collateral(who)).toBe(before - spent + proceeds);
    } finally {
      await app.close();
      own.stop();
    }
  });
});
