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
import { api, buy, sell, trader } from '../harness/trading.ts';
import { createTradingApp } from '../harness/trading-venue.ts';

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
    // The closed Databricks event is not asked for: a pass reads the open ones.
    expect(body.seen).toBe(FIXTURES.filter((e) => !e.closed).length);
    expect(gamma.listRequests.every((r) => r.query.tag_slug === 'ipo' && r.query.closed === 'false')).toBe(true);
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
    const who = await trader(t);
    const bought = await buy(t, who, { eventId: LADDER, side: 'LONG', amount: 100 });
    expect([bought.res.status, bought.body.message]).toEqual([200, undefined]);
    // Bought as its thresholds' Yes and No tokens (tests/trading/ladder-trading.test.ts checks the replication).
    for (const order of bought.body.orders) expect(order.bandId).toMatch(/:(yes|no)$/);
    const half = await sell(t, who, { positionId: bought.body.positionId, percentage: 50 });
    expect([half.res.status, half.body.status]).toEqual([200, 'open']);
    const rest = await sell(t, who, { positionId: bought.body.positionId, percentage: 100 });
    expect([rest.res.status, rest.body.status, rest.body.unsold]).toEqual([200, 'closed', []]);
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
