/**
 * The market universe's listings: a discovered event joins the list once (however many passes write
 * it at once), stays invisible to customers while proposed or hidden, and an operator lists it —
 * announcing event.listed once to each account with a webhook subscribed to it — or hides it, which
 * is refused while positions of it are open. Through /api and /trpc, on both databases.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { count, eq, sql } from 'drizzle-orm';
import { accountEvents, companies, events, positions, webhookDeliveries } from '../../db/schema.ts';
import { runCli, UsageError } from '../../server/commands/cli.ts';
import { companyForMarket } from '../../server/companies/market-companies.ts';
import { addDiscoveredEvents, setListing } from '../../server/events/listing.ts';
import { createWebhook } from '../../server/webhooks/service.ts';
import { DASHBOARD_KEY, trpcClient, type TestApp } from '../harness/app.ts';
import { dashboardHeaders, discoveredEventRecord, fundedAccount, type FundedAccount } from '../harness/factories.ts';
import { api, buy, trader, type Trader } from '../harness/trading.ts';
import { expectValuationRecomputed } from '../harness/expected-valuation.ts';
import { createTradingApp } from '../harness/trading-venue.ts';

let t: TestApp;
let operator: Record<string, string>;
let who: Trader;
let subscribed: FundedAccount;
let unsubscribed: FundedAccount;

const eventIds = async (headers: Record<string, string> = {}) => (await api(t, { headers }, 'GET', '/api/trading/events')).body.events.map((e: any) => e.id);
const refreshSnapshot = () => t.services.marketData.refreshed();

beforeAll(async () => {
  t = await createTradingApp();
  const operatorAccount = await fundedAccount(t);
  operator = dashboardHeaders(DASHBOARD_KEY, operatorAccount.accountId);
  who = await trader(t);
  subscribed = await fundedAccount(t);
  unsubscribed = await fundedAccount(t);
  await createWebhook(t.services, subscribed.accountId, { url: 'https://hooks.example.com/listed', events: ['event.listed'] }, { lookup: async () => ['93.184.216.34'] });
  await createWebhook(t.services, unsubscribed.accountId, { url: 'https://hooks.example.com/orders', events: ['order.filled'] }, { lookup: async () => ['93.184.216.34'] });
});
afterAll(() => t.close());

describe('a discovered event, proposed', () => {
  const record = discoveredEventRecord('cerebras-ipo-closing-market-cap-412', 91001);

  test('passes writing it at once list it once, under one id without the numeric suffix', async () => {
    const results = await Promise.all(Array.from({ length: 4 }, () => addDiscoveredEvents(t.database.db, [{ record }], { autoList: false, companyFor: companyForMarket })));
    expect(results.flatMap((r) => r.added)).toEqual([{ eventId: 'cerebras-ipo-closing-market-cap', venueEventSlug: record.venue.eventSlug, listing: 'proposed' }]);
    // The other passes found it written: known, not lost.
    expect(results.flatMap((r) => r.known)).toEqual(Array(3).fill(record.venue.eventSlug));
    const rows = await t.database.db.select({ id: events.id, listing: events.listing, origin: events.origin }).from(events).where(sql`${events.venue}->>'gammaEventId' = '91001'`);
    expect(rows).toEqual([{ id: 'cerebras-ipo-closing-market-cap', listing: 'proposed', origin: 'discovered' }]);
    // A later pass that sees it again (by its Gamma id or slug) writes nothing.
    expect(await addDiscoveredEvents(t.database.db, [{ record: { ...record, id: 'another-name' } }], { autoList: false, companyFor: companyForMarket })).toEqual({ added: [], known: [record.venue.eventSlug!], skipped: [] });
  });

  test('an event whose band token another event already trades is skipped with the reason, and the rest of the pass is written', async () => {
    const clashing = discoveredEventRecord('cerebras-ipo-valuation-9', 91004);
    clashing.bands[1]!.venue.tokenId = record.bands[1]!.venue.tokenId;
    const fine = discoveredEventRecord('cohere-ipo-closing-market-cap-8', 91005, 'Cohere');
    const written = await addDiscoveredEvents(t.database.db, [{ record: clashing }, { record: fine }], { autoList: false, companyFor: companyForMarket });
    expect(written.added.map((a) => a.eventId)).toEqual(['cohere-ipo-closing-market-cap']);
    expect(written.skipped).toEqual([{ slug: 'cerebras-ipo-valuation-9', reason: `cerebras-ipo-valuation-9: band token ${record.bands[1]!.venue.tokenId} already belongs to event cerebras-ipo-closing-market-cap` }]);
  });

  test('customers do not see it: not listed, no valuation, no buy, not a filter', async () => {
    await refreshSnapshot();
    expect(await eventIds()).not.toContain('cerebras-ipo-closing-market-cap');
    const valuation = await api(t, { headers: {} }, 'GET', '/api/trading/valuation?eventSlug=cerebras-ipo-closing-market-cap');
    expect([valuation.res.status, valuation.body.code]).toEqual([404, 'NOT_FOUND']);
    const bought = await buy(t, who, { eventId: 'cerebras-ipo-closing-market-cap', side: 'LONG', amount: 10 });
    expect([bought.res.status, bought.body.code]).toEqual([404, 'NOT_FOUND']);
    const history = await api(t, who, 'GET', '/api/trading/valuation/history?eventSlug=cerebras-ipo-closing-market-cap&interval=1h');
    expect(history.res.status).toBe(404);
  });

  test('the operator sees it among the proposed, on /api and /trpc', async () => {
    const { res, body } = await api(t, { headers: operator }, 'GET', '/api/events/listings?listing=proposed');
    expect(res.status).toBe(200);
    // Newest first: the Cohere event of the previous test, then Cerebras.
    expect(body.events.map((e: any) => [e.eventId, e.listing, e.origin, e.structure, e.bands, e.venueEventSlug])).toEqual([
      ['cohere-ipo-closing-market-cap', 'proposed', 'discovered', 'bands', 4, 'cohere-ipo-closing-market-cap-8'],
      ['cerebras-ipo-closing-market-cap', 'proposed', 'discovered', 'bands', 4, 'cerebras-ipo-closing-market-cap-412'],
    ]);
    const viaTrpc = await trpcClient(t, operator).events.listings.query({ listing: 'proposed' });
    expect(viaTrpc.events.map((e) => e.eventId)).toEqual(['cohere-ipo-closing-market-cap', 'cerebras-ipo-closing-market-cap']);
    // Seeded events are listed, and marked as seeded.
    const listed = (await api(t, { headers: operator }, 'GET', '/api/events/listings?listing=listed')).body.events;
    expect(listed.find((e: any) => e.eventId === 'openai-ipo')).toMatchObject({ listing: 'listed', origin: 'seed' });
    // Only the operator: a customer's key is not a dashboard key.
    expect((await api(t, who, 'GET', '/api/events/listings')).res.status).toBe(401);
  });

  test('approving lists it for customers and announces event.listed once, to subscribed accounts only', async () => {
    const approved = await api(t, { headers: operator }, 'POST', '/api/events/cerebras-ipo-closing-market-cap-412/listing', { listing: 'listed' });
    expect(approved.res.status).toBe(200);
    expect(approved.body).toEqual({ eventId: 'cerebras-ipo-closing-market-cap', listing: 'listed', changed: true, announced: 1 });
    const again = await trpcClient(t, operator).events.setListing.mutate({ eventId: 'cerebras-ipo-closing-market-cap', listing: 'listed' });
    expect(again).toEqual({ eventId: 'cerebras-ipo-closing-market-cap', listing: 'listed', changed: false, announced: 0 });

    const announced = await t.database.db.select({ accountId: accountEvents.accountId, data: accountEvents.data }).from(accountEvents).where(eq(accountEvents.type, 'event.listed'));
    expect(announced).toEqual([
      {
        accountId: subscribed.accountId,
        data: { eventId: 'cerebras-ipo-closing-market-cap', name: 'Cerebras IPO closing market cap', company: 'Cerebras', structure: 'bands', bands: 4, venueEventSlug: 'cerebras-ipo-closing-market-cap-412', origin: 'discovered' },
      },
    ]);
    const deliveries = await t.database.db.select({ accountId: webhookDeliveries.accountId, payload: webhookDeliveries.payload }).from(webhookDeliveries).where(eq(webhookDeliveries.type, 'event.listed'));
    expect(deliveries.map((d) => d.accountId)).toEqual([subscribed.accountId]);
    expect(JSON.parse(deliveries[0]!.payload)).toMatchObject({ type: 'event.listed', data: { eventId: 'cerebras-ipo-closing-market-cap' } });

    await refreshSnapshot();
    expect(await eventIds()).toContain('cerebras-ipo-closing-market-cap');
    const valuation = await api(t, { headers: {} }, 'GET', '/api/trading/valuation?eventSlug=cerebras-ipo-closing-market-cap-412');
    expect([valuation.res.status, valuation.body.event.slug]).toEqual([200, 'cerebras-ipo-closing-market-cap']);
    // Every number, recomputed independently from the venue's books.
    await expectValuationRecomputed(t, 'cerebras-ipo-closing-market-cap');
  });

  test('hiding is refused while a position of it is open, and takes it off the list once none is', async () => {
    const bought = await buy(t, who, { eventId: 'cerebras-ipo-closing-market-cap', side: 'LONG', amount: 40 });
    expect([bought.res.status, bought.body.message]).toEqual([200, undefined]);
    const refused = await api(t, { headers: operator }, 'POST', '/api/events/cerebras-ipo-closing-market-cap/listing', { listing: 'hidden' });
    expect([refused.res.status, refused.body.code]).toEqual([400, 'BAD_REQUEST']);
    expect(refused.body.message).toContain('open or pending position');
    const sold = await api(t, who, 'POST', '/api/trading/sell', { positionId: bought.body.positionId });
    expect(sold.res.status).toBe(200);

    const hidden = await api(t, { headers: operator }, 'POST', '/api/events/cerebras-ipo-closing-market-cap/listing', { listing: 'hidden' });
    expect(hidden.body).toEqual({ eventId: 'cerebras-ipo-closing-market-cap', listing: 'hidden', changed: true, announced: 0 });
    // A buy within the snapshot's lifetime is refused too: the listing is read as the buy acts.
    const late = await buy(t, who, { eventId: 'cerebras-ipo-closing-market-cap', side: 'LONG', amount: 10 });
    expect([404, 422]).toContain(late.res.status);
    await refreshSnapshot();
    expect(await eventIds()).not.toContain('cerebras-ipo-closing-market-cap');
    // Listed again later: not a new event, so nobody is told twice.
    const relisted = await api(t, { headers: operator }, 'POST', '/api/events/cerebras-ipo-closing-market-cap/listing', { listing: 'listed' });
    expect(relisted.body).toMatchObject({ changed: true, announced: 0 });
  });

  test('an unknown event is 404, a bad listing 400', async () => {
    expect((await api(t, { headers: operator }, 'POST', '/api/events/no-such-event/listing', { listing: 'listed' })).res.status).toBe(404);
    const bad = await api(t, { headers: operator }, 'POST', '/api/events/openai-ipo/listing', { listing: 'proposed' });
    expect([bad.res.status, bad.body.code]).toEqual([400, 'BAD_REQUEST']);
  });
});

describe('EVENT_AUTO_LIST', () => {
  test('on: a discovered event is listed at once and announced; its id never takes one already used', async () => {
    const record = { ...discoveredEventRecord('cerebras-ipo-closing-market-cap-above-77', 91002), id: 'cerebras-ipo-closing-market-cap' };
    const { added } = await addDiscoveredEvents(t.database.db, [{ record }], { autoList: true, companyFor: companyForMarket });
    expect(added).toEqual([{ eventId: 'cerebras-ipo-closing-market-cap-2', venueEventSlug: 'cerebras-ipo-closing-market-cap-above-77', listing: 'listed' }]);
    const told = await t.database.db.select({ data: accountEvents.data }).from(accountEvents).where(sql`${accountEvents.type} = 'event.listed' and ${accountEvents.data}->>'eventId' = 'cerebras-ipo-closing-market-cap-2'`);
    expect(told).toHaveLength(1);
  });
});

describe('the operator CLI', () => {
  test('list-events, approve-event and hide-event do what the routes do; a bad listing is a usage error', async () => {
    const record = discoveredEventRecord('mistral-ipo-closing-market-cap-55', 91003, 'Mistral');
    await addDiscoveredEvents(t.database.db, [{ record }], { autoList: false, companyFor: companyForMarket });
    const listed = (await runCli(['list-events', '--listing', 'proposed'], t.services)) as { events: Array<{ eventId: string }> };
    expect(listed.events.map((e) => e.eventId)).toContain('mistral-ipo-closing-market-cap');
    expect(await runCli(['approve-event', '--event', 'mistral-ipo-closing-market-cap-55'], t.services)).toEqual({ eventId: 'mistral-ipo-closing-market-cap', listing: 'listed', changed: true, announced: 1 });
    expect(await runCli(['hide-event', '--event', 'mistral-ipo-closing-market-cap'], t.services)).toEqual({ eventId: 'mistral-ipo-closing-market-cap', listing: 'hidden', changed: true, announced: 0 });
    await expect(runCli(['list-events', '--listing', 'gone'], t.services)).rejects.toBeInstanceOf(UsageError);
    await expect(runCli(['approve-event'], t.services)).rejects.toBeInstanceOf(UsageError);
  });
});

describe('hiding while a buy is under way', () => {
  test('an event hidden after the buy read it, before the buy recorded its position: the buy is refused and nothing is sent', async () => {
    let hideDuringBuy: (() => Promise<unknown>) | undefined;
    const app = await createTradingApp({}, {
      venueKind: 'paper',
      // The venue's balance read sits between the buy's first look at the event and its position.
      wrap: (venue) => Object.assign(Object.create(venue), { getCollateral: async (c: never) => (await hideDuringBuy?.(), venue.getCollateral(c)) }),
    });
    try {
      const record = discoveredEventRecord('anthropic-robotics-ipo-closing-market-cap-5', 91006, 'Anthropic Robotics');
      const { added } = await addDiscoveredEvents(app.database.db, [{ record }], { autoList: true, companyFor: companyForMarket });
      await app.services.marketData.refreshed();
      const buyer = await trader(app);
      hideDuringBuy = () => setListing(app.database.db, added[0]!.eventId, 'hidden');
      const bought = await buy(app, buyer, { eventId: added[0]!.eventId, side: 'LONG', amount: 40 });
      expect([bought.res.status, bought.body.code, bought.body.message]).toEqual([422, 'ORDER_REJECTED', `eventId: ${added[0]!.eventId} is hidden; buys are accepted while an event is open`]);
      const left = await app.database.db.select().from(positions).where(eq(positions.eventId, added[0]!.eventId));
      expect(left).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

describe("a discovered event's company", () => {
  test('linked to the record of that name; else created from the market, marked as such, once however many passes write', async () => {
    const known = discoveredEventRecord('spacex-ipo-valuation-77', 91101, 'spacex');
    const novel = discoveredEventRecord('zyxwave-robotics-ipo-closing-market-cap-5', 91102, 'Zyxwave Robotics');
    const twin = discoveredEventRecord('zyxwave-robotics-ipo-valuation-6', 91103, 'Zyxwave Robotics');
    const companiesBefore = (await t.database.db.select({ n: count() }).from(companies))[0]!.n;
    await Promise.all([
      addDiscoveredEvents(t.database.db, [{ record: known }, { record: novel }], { autoList: true, companyFor: companyForMarket }),
      addDiscoveredEvents(t.database.db, [{ record: twin }], { autoList: true, companyFor: companyForMarket }),
    ]);
    const linked = await t.database.db.select({ id: events.id, company: events.companySourceId }).from(events).where(sql`${events.venue}->>'gammaEventId' in ('91101', '91102', '91103')`);
    expect(Object.fromEntries(linked.map((r) => [r.id, r.company]))).toEqual({
      'spacex-ipo-valuation': 'spacex',
      'zyxwave-robotics-ipo-closing-market-cap': 'market-zyxwave-robotics',
      'zyxwave-robotics-ipo-valuation': 'market-zyxwave-robotics',
    });
    const companiesAfter = (await t.database.db.select({ n: count() }).from(companies))[0]!.n;
    expect(companiesAfter).toBe(companiesBefore + 1);
    // The new record says where it came from and invents nothing; its markets are both events.
    await refreshSnapshot();
    const record = await api(t, who, 'GET', '/api/private-companies/source/market-zyxwave-robotics');
    expect(record.res.status).toBe(200);
    expect(record.body).toMatchObject({ name: 'Zyxwave Robotics', valuationUsd: null, totalFundingUsd: null, extra: { origin: 'market' } });
    // Made from whichever of the two events a pass wrote first (the passes ran at once).
    const from = [
      { eventId: 'zyxwave-robotics-ipo-closing-market-cap', slug: 'zyxwave-robotics-ipo-closing-market-cap-5' },
      { eventId: 'zyxwave-robotics-ipo-valuation', slug: 'zyxwave-robotics-ipo-valuation-6' },
    ].find((e) => e.eventId === record.body.extra.fromEventId)!;
    expect(from).toBeDefined();
    expect(record.body.extra.venueEventSlug).toBe(from.slug);
    expect(record.body.referenceUrl).toBe(`https://polymarket.com/event/${from.slug}`);
    expect(record.body.markets.map((m: any) => m.eventId).sort()).toEqual(['zyxwave-robotics-ipo-closing-market-cap', 'zyxwave-robotics-ipo-valuation']);
  });
});
