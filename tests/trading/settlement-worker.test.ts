/**
 * The settlement worker (SETTLEMENT_INTERVAL_MS) finishes what a resolution could not: a position
 * whose sale was still PENDING when its event resolved is settled once the sale's outcome is known,
 * and a payment the venue could not make is made when it can — each exactly once, by the worker's
 * own timer, without anyone resolving again.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { runSettlementPass, startSettlementWorker } from '../../server/trading/settlement-worker.ts';
import { DASHBOARD_KEY, type TestApp } from '../harness/app.ts';
import { dashboardHeaders } from '../harness/factories.ts';
import { FaultyVenue } from '../harness/faulty-venue.ts';
import { api, buy, sell, trader } from '../harness/trading.ts';
import { createTradingApp, ledgerOf } from '../harness/trading-venue.ts';

let t: TestApp;
let venue: FaultyVenue;

beforeAll(async () => {
  t = await createTradingApp({ VENUE_TIMEOUT_MS: '300', MARKET_DATA_TTL_MS: '0', SETTLEMENT_INTERVAL_MS: '50' }, { wrap: (inner) => (venue = new FaultyVenue(inner)) });
});
afterAll(() => t.close());

const resolve = async (eventId: string, winningBandId: string, accountId: string) => {
  const res = await t.request(`/api/events/${eventId}/resolution`, { method: 'POST', headers: { ...dashboardHeaders(DASHBOARD_KEY, accountId), 'content-type': 'application/json' }, body: JSON.stringify({ winningBandId }) });
  expect(res.status).toBe(200);
  return res.json();
};

test('a sale pending at resolution and a payment the venue refused: the worker settles and pays each once', async () => {
  const who = await trader(t);
  await api(t, who, 'PUT', '/api/trading/settings', { walletAddress: who.userId });
  const bought = await buy(t, who, { eventId: 'openai-ipo', side: 'LONG', amount: 80 });
  expect(bought.res.status).toBe(200);
  const positionId = bought.body.positionId;
  // The sale's first order is filled, then the answer is lost and the status cannot be read: PENDING.
  const start = venue.placements;
  venue.faultFor = (n) => (n === start + 1 ? 'filled-then-error' : undefined);
  venue.statusDown = true;
  expect((await sell(t, who, { positionId, percentage: 50 })).res.status).toBe(503);
  venue.faultFor = () => undefined;

  const detail = (await api(t, who, 'GET', `/api/trading/positions/${positionId}`)).body;
  const winner = detail.bands.find((b: any) => b.tokens > 0).bandId;
  expect(await resolve('openai-ipo', winner, who.account.accountId)).toMatchObject({ settled: 0, deferred: 1 });
  // While nothing can be learned, a pass changes nothing.
  expect(await runSettlementPass(t.services)).toEqual({ settled: 0, paid: 0 });

  // The venue answers again, but cannot pay yet: orders/sync completes the sale; the worker settles the position, the payment waits.
  venue.statusDown = false;
  venue.redeemDown = true;
  expect((await api(t, who, 'POST', '/api/trading/orders/sync', {})).res.status).toBe(200);
  const collateral = await ledgerOf(t).collateral(who);
  const worker = startSettlementWorker(t.services);
  try {
    const settled = async () => (await api(t, who, 'GET', `/api/trading/positions/${positionId}`)).body.status;
    for (let i = 0; i < 100 && (await settled()) !== 'settled'; i++) await Bun.sleep(20);
    expect(await settled()).toBe('settled');
    const [settlement] = (await api(t, who, 'GET', '/api/trading/settlements?eventId=openai-ipo')).body.settlements;
    expect(await ledgerOf(t).collateral(who)).toBe(collateral);

    // The venue can pay: the worker's next passes pay it, once.
    venue.redeemDown = false;
    const proceeds = Math.round(settlement.proceeds * 1e6);
    for (let i = 0; i < 100 && (await ledgerOf(t).collateral(who)) === collateral; i++) await Bun.sleep(20);
    await Bun.sleep(200); // several more passes
    expect((await ledgerOf(t).collateral(who)) - collateral).toBe(proceeds);
    expect(await runSettlementPass(t.services)).toEqual({ settled: 0, paid: 0 });
  } finally {
    await worker.stop();
  }
});
