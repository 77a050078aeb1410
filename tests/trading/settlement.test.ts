/**
 * Resolution and settlement, exactly once, over /api and /trpc, on the
 * paper venue and (TEST_VENUE=polymarket) the live adapter, whose redemptions go through the relayer
 * to the CLOB stand-in's ledger: an operator resolves an event (POST /api/events/{eventId}/resolution,
 * or the CLI); every open position of it settles at winning shares × $1, with its remaining cost basis
 * released as realised P&L, a SETTLE trade in the history and a row in GET /api/trading/settlements;
 * the venue pays the proceeds and takes the tokens back. Resolving again, two resolutions at once and
 * a payment that failed (or whose record was lost) all pay once.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { readFileSync } from 'node:fs';
import { settlements } from '../../db/schema.ts';
import { loadEvents } from '../../seeds/events.ts';
import { runCli } from '../../server/commands/cli.ts';
import { gammaEventSchema } from '../../server/events/gamma-client.ts';
import { planEventSync } from '../../server/events/gamma-sync.ts';
import { findEvent } from '../../server/events/queries.ts';
import { upsertEvents } from '../../server/events/store.ts';
import { payPaperSettlement } from '../../server/venues/paper-ledger.ts';
import { createTestApp, DASHBOARD_KEY, trpcClient, type TestApp } from '../harness/app.ts';
import { dashboardHeaders } from '../harness/factories.ts';
import { api, buy, sell, storeTraderCredentials, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp, ledgerOf, TEST_VENUE } from '../harness/trading-venue.ts';

const MICRO = 1_000_000;
const micros = (usd: number) => Math.round(usd * MICRO);

let t: TestApp;
let alice: Trader;
let bob: Trader;
let events: any[];

/** Resolves (or, given a body, voids) over /api with the dashboard key (x-account-id: the operator's own account). */
const resolve = (eventId: string, winningBandId: string | Record<string, unknown>) =>
  t.request(`/api/events/${encodeURIComponent(eventId)}/resolution`, {
    method: 'POST',
    headers: { ...dashboardHeaders(DASHBOARD_KEY, alice.account.accountId), 'content-type': 'application/json' },
    body: JSON.stringify(typeof winningBandId === 'string' ? { winningBandId } : winningBandId),
  });

const get = async (who: Trader, path: string) => {
  const { res, body } = await api(t, who, 'GET', path);
  expect(res.status).toBe(200);
  return body;
};

/** What a position holds now (shares of each band, cost basis), from its detail and our records. */
async function holding(who: Trader, positionId: string) {
  const detail = await get(who, `/api/trading/positions/${positionId}`);
  return { detail, shares: new Map<string, number>(detail.bands.map((b: any) => [b.bandId, micros(b.tokens)])), costMicros: micros(detail.cost) };
}

async function openPosition(who: Trader, eventId: string, side: 'LONG' | 'SHORT', amount: number) {
  const { res, body } = await buy(t, who, { eventId, side, amount });
  expect(res.status).toBe(200);
  return body.positionId as string;
}

describe('events:sync', () => {
  // The openai fixture's markets are open and accepting orders: the sync would call the event `open`.
  const gamma = gammaEventSchema.parse(JSON.parse(readFileSync(new URL('../fixtures/gamma/openai-ipo-closing-market-cap.json', import.meta.url), 'utf8')));
  test('never reopens a resolved or voided event (only an operator changes an outcome)', async () => {
    const app = await createTestApp();
    try {
      const event = await findEvent(app.database.db, 'openai-ipo');
      expect(planEventSync(event, gamma).event.status).toBe('open');
      expect(planEventSync({ ...event, status: 'resolved', resolvedBandIndex: 1 }, gamma).event.status).toBe('resolved');
      expect(planEventSync({ ...event, status: 'voided' }, gamma).event.status).toBe('voided');
      expect(planEventSync({ ...event, status: 'closed' }, gamma).event.status).toBe('open');
    } finally {
      await app.close();
    }
  });
});

/** The paper venue pays in its ledger (no transaction); the live venue records the redemption's hash. */
const TX_HASH = TEST_VENUE === 'paper' ? null : expect.stringMatching(/^0x[0-9a-f]{64}$/);

describe(`settlement on the ${TEST_VENUE} venue`, () => {
  beforeAll(async () => {
    // Every request sees the database's events at once (a resolution shows without waiting for the snapshot to expire).
    t = await createTradingApp({ MARKET_DATA_TTL_MS: '0' });
    alice = await trader(t);
    bob = await trader(t);
    events = (await get(alice, '/api/trading/events')).events;
  });
  afterAll(() => t?.close());

  test('events carry status and winningBandId; the seeds resolve what is public and close what is not', () => {
    const stripe = events.find((e) => e.id === 'stripe-ipo');
    expect(stripe).toMatchObject({ status: 'resolved', winningBandId: stripe.bands[0].id });
    expect(stripe.bands[0].label).toBe('No IPO');
    expect(events.find((e) => e.id === 'megaeth-fdv')).toMatchObject({ status: 'closed', winningBandId: null });
    for (const e of events.filter((x) => x.status !== 'resolved')) expect(e.winningBandId).toBeNull();
  });

  test('buy → partial sell → resolution → settlement: history, settlements and the ledger agree to the micro-unit', async () => {
    const event = events.find((e) => e.status === 'open');
    const winner = event.bands[event.bands.length - 1];
    const long = await openPosition(alice, event.id, 'LONG', 60);
    const short = await openPosition(alice, event.id, 'SHORT', 40);
    const bobs = await openPosition(bob, event.id, 'LONG', 30);
    const sold = await sell(t, alice, { positionId: long, percentage: 50 });
    expect(sold.res.status).toBe(200);

    const before = { long: await holding(alice, long), short: await holding(alice, short), bob: await holding(bob, bobs) };
    const collateralBefore = { alice: await ledgerOf(t).collateral(alice), bob: await ledgerOf(t).collateral(bob) };

    const res = await resolve(event.id, winner.id);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      eventId: event.id,
      status: 'resolved',
      winningBandId: winner.id,
      winningBandLabel: winner.label,
      changed: true,
      settled: 3,
      paid: 3,
      unpaid: 0,
      deferred: 0,
    });

    const after = (await get(alice, '/api/trading/events')).events.find((e: any) => e.id === event.id);
    expect(after).toMatchObject({ status: 'resolved', winningBandId: winner.id });
    expect((await get(alice, `/api/trading/valuation?eventSlug=${event.id}`)).event).toMatchObject({ status: 'resolved', winningBandId: winner.id });

    const listed = await get(alice, `/api/trading/settlements?eventId=${event.id}`);
    expect(listed.settlements).toHaveLength(2);
    let aliceProceeds = 0;
    for (const [positionId, was] of [
      [long, before.long],
      [short, before.short],
    ] as const) {
      const s = listed.settlements.find((x: any) => x.positionId === positionId);
      const proceedsMicros = was.shares.get(winner.id) ?? 0;
      aliceProceeds += proceedsMicros;
      expect(s).toMatchObject({
        eventId: event.id,
        winningBandId: winner.id,
        winningBandLabel: winner.label,
        proceeds: proceedsMicros / MICRO,
        realizedPnl: (proceedsMicros - was.costMicros) / MICRO,
        paid: true,
        txHash: TX_HASH,
        unpaidReason: null,
      });
      expect(s.payoutPerUnit).toBeCloseTo(s.units ? s.proceeds / s.units : 0, 5);
      // The position is settled, holds nothing, and its realised P&L includes the settlement.
      const detail = await get(alice, `/api/trading/positions/${positionId}`);
      expect(detail).toMatchObject({ status: 'settled', cost: 0, currentValue: 0 });
      expect(detail.closedAt).not.toBeNull();
      // The SETTLE trade is in the history, with the settlement's numbers.
      const history = await get(alice, `/api/trading/history?eventId=${event.id}&limit=1000`);
      const settle = history.trades.find((x: any) => x.positionId === positionId && x.action === 'SETTLE');
      expect(settle).toMatchObject({ orderId: s.id, bandId: winner.id, shares: proceedsMicros / MICRO, amount: s.proceeds, fees: 0, realizedPnl: s.realizedPnl });
    }
    expect(listed.summary).toMatchObject({ totalSettlements: 2, unpaid: 0 });
    expect(micros(listed.summary.totalProceeds)).toBe(aliceProceeds);

    // The venue paid exactly the proceeds and holds none of the event's tokens any more.
    expect(await ledgerOf(t).collateral(alice)).toBe(collateralBefore.alice + aliceProceeds);
    expect(await ledgerOf(t).collateral(bob)).toBe(collateralBefore.bob + (before.bob.shares.get(winner.id) ?? 0));
    const held = await ledgerOf(t).holdings(alice);
    for (const band of event.bands) expect(held.get(band.id) ?? 0).toBe(0);

    // Status filters: settled positions are listed as such, and no longer as open.
    const settledList = await get(alice, `/api/trading/positions?status=settled&eventId=${event.id}`);
    expect(settledList.positions.map((p: any) => p.id).sort()).toEqual([long, short].sort());
    expect((await get(alice, `/api/trading/positions?status=open&eventId=${event.id}`)).total).toBe(0);

    // Resolving again pays nothing more; a different band is refused now that money has moved.
    const again = await resolve(event.id, winner.id);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ changed: false, settled: 0, paid: 0, unpaid: 0 });
    expect(await ledgerOf(t).collateral(alice)).toBe(collateralBefore.alice + aliceProceeds);
    const corrected = await resolve(event.id, event.bands[0].id);
    expect(corrected.status).toBe(400);
    expect(await corrected.json()).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringContaining('settled') });

    // A settled position cannot be sold; the resolved event takes no buys.
    const sale = await sell(t, alice, { positionId: long, percentage: 100 });
    expect(sale.res.status).toBe(422);
    expect(sale.body).toMatchObject({ code: 'ORDER_REJECTED', message: expect.stringContaining('settled') });
    const late = await buy(t, alice, { eventId: event.id, side: 'LONG', amount: 20 });
    expect(late.res.status).toBe(422);

    // Bob sees only his own settlement.
    const bobsList = await get(bob, '/api/trading/settlements');
    expect(bobsList.settlements.map((s: any) => s.positionId)).toEqual([bobs]);
    expect((await get(bob, `/api/trading/settlements?positionId=${long}`)).settlements).toEqual([]);
  });

  test('bad resolutions: unknown event 404, a band of another event 400, no dashboard key 401', async () => {
    const [first, second] = events.filter((e) => e.status === 'open').slice(-2);
    expect((await resolve('no-such-event', first.bands[0].id)).status).toBe(404);
    const foreign = await resolve(first.id, second.bands[0].id);
    expect(foreign.status).toBe(400);
    expect(await foreign.json()).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringContaining('winningBandId') });
    for (const body of [{}, { winningBandId: first.bands[0].id, voided: true }, { voided: false }]) {
      const both = await resolve(first.id, body);
      expect(both.status).toBe(400);
      expect(await both.json()).toMatchObject({ code: 'BAD_REQUEST' });
    }
    const keyOnly = await api(t, alice, 'POST', `/api/events/${first.id}/resolution`, { winningBandId: first.bands[0].id });
    expect(keyOnly.res.status).toBe(401);
    // Nothing changed.
    expect((await get(alice, '/api/trading/events')).events.find((e: any) => e.id === first.id)).toMatchObject({ status: 'open', winningBandId: null });
  });

  test('two resolutions at once settle and pay each position once (over /trpc), credentials or not', async () => {
    const event = events.filter((e) => e.status === 'open')[1];
    const positionId = await openPosition(alice, event.id, 'LONG', 40);
    const before = await holding(alice, positionId);
    const collateral = await ledgerOf(t).collateral(alice);
    // Carol deletes her venue credentials before the resolution: the paper venue pays her all the same;
    // the live venue cannot sign her redemption until she stores them again.
    const carol = await trader(t);
    const carols = await openPosition(carol, event.id, 'LONG', 20);
    const carolBefore = await holding(carol, carols);
    const carolCollateral = await ledgerOf(t).collateral(carol);
    expect((await api(t, carol, 'DELETE', '/api/trading/credentials')).res.status).toBe(200);
    const operator = trpcClient(t, dashboardHeaders(DASHBOARD_KEY, alice.account.accountId));
    const winner = event.bands[0];
    const answers = await Promise.all([0, 1, 2].map(() => operator.events.resolve.mutate({ eventId: event.id, winningBandId: winner.id })));
    expect(answers.reduce((n, a) => n + a.settled, 0)).toBe(2);
    expect(answers.reduce((n, a) => n + a.paid, 0)).toBe(TEST_VENUE === 'paper' ? 2 : 1);
    const proceeds = before.shares.get(winner.id) ?? 0;
    expect(await ledgerOf(t).collateral(alice)).toBe(collateral + proceeds);
    if (TEST_VENUE !== 'paper') {
      expect(await ledgerOf(t).collateral(carol)).toBe(carolCollateral);
      const [waiting] = await t.database.db.select().from(settlements).where(eq(settlements.positionId, carols));
      expect(waiting).toMatchObject({ paidAt: null, payError: expect.stringContaining('credentials') });
      await storeTraderCredentials(t, carol);
      expect(await operator.events.resolve.mutate({ eventId: event.id, winningBandId: winner.id })).toMatchObject({ changed: false, settled: 0, paid: 1, unpaid: 0 });
    }
    expect(await ledgerOf(t).collateral(carol)).toBe(carolCollateral + (carolBefore.shares.get(winner.id) ?? 0));
    const user = trpcClient(t, alice.headers);
    const listed = await user.settlements.list.query({ positionId });
    expect(listed.settlements).toHaveLength(1);
    expect(listed.settlements[0]).toMatchObject({ proceeds: proceeds / MICRO, realizedPnl: (proceeds - before.costMicros) / MICRO, paid: true });
  });

  test('a payment that failed is retried by the next resolution; one whose record was lost is not paid again', async () => {
    const [failing, lost] = events.filter((e) => e.status === 'open').slice(2, 4);
    const venue = t.services.venue as any;
    const redeem = venue.redeem;

    // 1. The venue fails: the intent is recorded (position settled), nothing is paid; the retry pays once.
    const first = await openPosition(alice, failing.id, 'LONG', 40);
    const winner = failing.bands[0];
    const proceeds = (await holding(alice, first)).shares.get(winner.id) ?? 0;
    const collateral = await ledgerOf(t).collateral(alice);
    venue.redeem = async () => {
      throw new Error('venue down');
    };
    try {
      const res = await resolve(failing.id, winner.id);
      expect(await res.json()).toMatchObject({ settled: 1, paid: 0, unpaid: 1 });
    } finally {
      venue.redeem = redeem;
    }
    expect((await get(alice, `/api/trading/positions/${first}`)).status).toBe('settled');
    expect(await ledgerOf(t).collateral(alice)).toBe(collateral);
    expect((await get(alice, `/api/trading/settlements?positionId=${first}`)).settlements[0]).toMatchObject({ paid: false, paidAt: null, unpaidReason: 'venue down' });
    expect(await (await resolve(failing.id, winner.id)).json()).toMatchObject({ settled: 0, paid: 1, unpaid: 0 });
    expect(await ledgerOf(t).collateral(alice)).toBe(collateral + proceeds);

    // 2. A crash after the venue paid and before the payment was recorded: the next run records it, paying nothing more.
    const second = await openPosition(alice, lost.id, 'SHORT', 40);
    const lostWinner = lost.bands[lost.bands.length - 1];
    const lostProceeds = (await holding(alice, second)).shares.get(lostWinner.id) ?? 0;
    const collateral2 = await ledgerOf(t).collateral(alice);
    venue.redeem = async (redemption: any, credentials: any) => {
      await redeem.call(venue, redemption, credentials); // paid …
      throw new Error('crashed before recording the payment'); // … but never recorded
    };
    try {
      expect(await (await resolve(lost.id, lostWinner.id)).json()).toMatchObject({ settled: 1, paid: 0, unpaid: 1 });
    } finally {
      venue.redeem = redeem;
    }
    expect(await ledgerOf(t).collateral(alice)).toBe(collateral2 + lostProceeds);
    const [row] = await t.database.db.select().from(settlements).where(eq(settlements.positionId, second));
    // Paying the same settlement id directly, again, moves nothing either.
    if (TEST_VENUE === 'paper') expect(await payPaperSettlement(t.database.db, { settlementId: row!.id, owner: { accountId: alice.account.accountId, userId: alice.userId }, holdings: row!.holdings, payingTokenIds: [row!.winningBandId!], payoutMicros: row!.proceedsMicros })).toBe(false);
    expect(await (await resolve(lost.id, lostWinner.id)).json()).toMatchObject({ settled: 0, paid: 1, unpaid: 0 });
    expect(await ledgerOf(t).collateral(alice)).toBe(collateral2 + lostProceeds);
  });

  test('a voided event pays every share held $0.50, once; its outcome is then final', async () => {
    const event = events.filter((e) => e.status === 'open')[5];
    const positionId = await openPosition(alice, event.id, 'SHORT', 40);
    const before = await holding(alice, positionId);
    const collateral = await ledgerOf(t).collateral(alice);
    const proceeds = [...before.shares.values()].reduce((sum, shares) => sum + Math.floor(shares / 2), 0);
    const res = await resolve(event.id, { voided: true });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ eventId: event.id, status: 'voided', winningBandId: null, winningBandLabel: null, changed: true, settled: 1, paid: 1 });
    expect(await ledgerOf(t).collateral(alice)).toBe(collateral + proceeds);
    const [s] = (await get(alice, `/api/trading/settlements?positionId=${positionId}`)).settlements;
    expect(s).toMatchObject({ outcome: 'voided', winningBandId: null, proceeds: proceeds / MICRO, realizedPnl: (proceeds - before.costMicros) / MICRO, paid: true });
    const settle = (await get(alice, `/api/trading/history?eventId=${event.id}`)).trades.find((x: any) => x.action === 'SETTLE');
    expect(settle).toMatchObject({ orderId: s.id, bandId: '*', amount: proceeds / MICRO });
    expect((await get(alice, '/api/trading/events')).events.find((e: any) => e.id === event.id)).toMatchObject({ status: 'voided', winningBandId: null });
    expect(await (await resolve(event.id, { voided: true })).json()).toMatchObject({ changed: false, settled: 0, paid: 0 });
    expect((await resolve(event.id, event.bands[0].id)).status).toBe(400);
    expect(await ledgerOf(t).collateral(alice)).toBe(collateral + proceeds);
  });

  test('cli resolve-event resolves by any event id and answers the same', async () => {
    const event = events.filter((e) => e.status === 'open')[4];
    const positionId = await openPosition(bob, event.id, 'LONG', 30);
    const ref = event.aliases[0] ?? event.venue.eventSlug ?? event.id;
    const answer = (await runCli(['resolve-event', '--event', ref, '--band', event.bands[1].id], t.services)) as any;
    expect(answer).toMatchObject({ eventId: event.id, status: 'resolved', winningBandId: event.bands[1].id, settled: 1, paid: 1 });
    expect((await get(bob, `/api/trading/positions/${positionId}`)).status).toBe('settled');
    // Seeding again (every start does) never reopens or changes a resolution.
    await upsertEvents(t.database.db, await loadEvents());
    expect((await get(bob, '/api/trading/events')).events.find((e: any) => e.id === event.id)).toMatchObject({ status: 'resolved', winningBandId: event.bands[1].id });
  });
});
