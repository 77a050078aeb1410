/**
 * Applying a venue's report to our records (`applyOrderOutcome`), below the HTTP surface where the
 * interleavings can be forced: exactly once, implausible reports closed without a fill, and two
 * sales of one band applied at the same time each releasing the cost basis of what is left.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { orders, positionBands, trades } from '../../db/schema.ts';
import type { Db } from '../../db/client.ts';
import { applyOrderOutcome, recordBuyIntent, recordSaleIntent, refusal, type OrderOutcome } from '../../server/trading/ledger-writes.ts';
import { engine, freshDatabase, type TestDatabase } from '../harness/databases.ts';
import { discoveredEventRecord } from '../harness/factories.ts';
import { upsertEvents } from '../../server/events/store.ts';

let database: TestDatabase;
let db: Db;
beforeAll(async () => {
  database = await freshDatabase();
  db = database.db;
  // The event the positions are on: a buy is recorded only while its event is open and listed.
  await upsertEvents(db, [discoveredEventRecord('records-event-1', 90001)]);
});
afterAll(() => database.close());

let n = 0;
const user = () => ({ accountId: `acct-records-${++n}`, userId: `user-${n}` });
const filled = (filledMicros: number, notionalMicros: number, feesMicros = 0): OrderOutcome => ({ status: 'MATCHED', filledMicros, notionalMicros, feesMicros, reason: null, venueOrderId: `v-${Math.random()}` });

/** A position of one band holding `shares` bought for `cost` (its BUY order applied). */
async function holding(shares: number, cost: number) {
  const who = user();
  const positionId = `pos-records-${n}`;
  const { orders: [buy] } = await recordBuyIntent(db, who, {
    position: { id: positionId, eventId: 'records-event', side: 'LONG', floorL: 0.1, floorS: 0.1, unitsMicros: shares },
    bands: [{ bandIndex: 0, bandId: 'records-band', targetMicros: shares }],
    orders: [{ bandIndex: 0, bandId: 'records-band', side: 'BUY', limitPriceMicros: 500_000, requestedMicros: shares }],
  });
  expect(await applyOrderOutcome(db, buy!, filled(shares, cost))).toBe(true);
  return { who, positionId };
}

/** A PENDING sale of `shares` of band 0 (the shares reserved). */
async function sale(who: ReturnType<typeof user>, positionId: string, shares: number) {
  const { orders: [order] } = await recordSaleIntent(db, who, positionId, 'close', () => [
    { bandIndex: 0, bandId: 'records-band', side: 'SELL', limitPriceMicros: 10_000, requestedMicros: shares },
  ]);
  return order!;
}

const bandOf = async (positionId: string) => (await db.select().from(positionBands).where(eq(positionBands.positionId, positionId)))[0]!;
const tradesOf = (positionId: string) => db.select().from(trades).where(eq(trades.positionId, positionId));

describe('applyOrderOutcome', () => {
  test('a fill is applied exactly once: a second report of it, or a PENDING one, changes nothing', async () => {
    const { who, positionId } = await holding(10_000_000, 4_000_000);
    const order = await sale(who, positionId, 4_000_000);
    expect(await applyOrderOutcome(db, order, { ...filled(0, 0), status: 'PENDING' })).toBe(false);
    expect(await applyOrderOutcome(db, order, filled(4_000_000, 2_000_000, 10_000))).toBe(true);
    expect(await applyOrderOutcome(db, order, filled(4_000_000, 2_000_000, 10_000))).toBe(false);
    expect(await bandOf(positionId)).toMatchObject({ sharesMicros: 6_000_000, reservedMicros: 0, costMicros: 2_400_000, boughtMicros: 10_000_000, entryCostMicros: 4_000_000 });
    const sold = (await tradesOf(positionId)).filter((t) => t.action === 'SELL');
    // 40% of the shares take 40% of the basis (1,600,000): realised = 2,000,000 − 10,000 − 1,600,000.
    expect(sold).toEqual([expect.objectContaining({ sharesMicros: 4_000_000, amountMicros: 2_000_000, feesMicros: 10_000, realizedPnlMicros: 390_000, side: 'LONG', eventId: 'records-event' })]);
  });

  test.each([
    ['more shares than the order asked', filled(5_000_001, 100)],
    ['a negative amount', filled(1_000_000, -5)],
    ['an amount beyond safe integers', filled(1_000_000, 2 ** 60)],
  ])('a report of %s closes the order REJECTED with nothing filled and no trade', async (_, report) => {
    const { who, positionId } = await holding(10_000_000, 4_000_000);
    const order = await sale(who, positionId, 5_000_000);
    expect(await applyOrderOutcome(db, order, report)).toBe(true);
    const [row] = await db.select().from(orders).where(eq(orders.id, order.id));
    expect(row).toMatchObject({ status: 'REJECTED', filledMicros: 0, notionalMicros: 0, feesMicros: 0, reason: 'implausible-venue-report', venueOrderId: report.venueOrderId, txHash: null, matchedAt: null });
    expect(await bandOf(positionId)).toMatchObject({ sharesMicros: 10_000_000, reservedMicros: 0, costMicros: 4_000_000 });
    expect((await tradesOf(positionId)).filter((t) => t.action === 'SELL')).toEqual([]);
  });

  test('a refusal releases the reserved shares and records no trade', async () => {
    const { who, positionId } = await holding(10_000_000, 4_000_000);
    const order = await sale(who, positionId, 10_000_000);
    expect(await applyOrderOutcome(db, order, refusal('no-liquidity'))).toBe(true);
    expect(await bandOf(positionId)).toMatchObject({ sharesMicros: 10_000_000, reservedMicros: 0, costMicros: 4_000_000 });
    expect((await db.select().from(orders).where(eq(orders.id, order.id)))[0]).toMatchObject({ status: 'REJECTED', reason: 'no-liquidity' });
  });

  test(`two sales of one band applied at once: the second releases the basis of what the first left (${engine})`, async () => {
    // 3 shares bought for 1.000001: selling 1 releases floor(1,000,001 / 3) = 333,333; the second
    // sale takes the last 2 shares and must release all that is left (666,668). Computed from the
    // row as it was before the first sale, it would release floor(1,000,001 × 2 / 3) = 666,667 and
    // leave 1 micro of basis on no shares.
    const { who, positionId } = await holding(3_000_000, 1_000_001);
    const first = await sale(who, positionId, 1_000_000);
    const second = await sale(who, positionId, 2_000_000);
    let secondApplied: Promise<boolean> | undefined;
    await db.transaction(async (tx) => {
      await applyOrderOutcome(tx as unknown as Db, first, filled(1_000_000, 400_000));
      // On PostgreSQL this waits for the band row the open transaction holds (PGlite, one
      // connection, runs it after the commit): either way it must see the first sale.
      secondApplied = applyOrderOutcome(db, second, filled(2_000_000, 800_000));
      await Bun.sleep(engine === 'postgres' ? 150 : 0);
    });
    expect(await secondApplied).toBe(true);
    expect(await bandOf(positionId)).toMatchObject({ sharesMicros: 0, reservedMicros: 0, costMicros: 0 });
    const realised = (await tradesOf(positionId)).filter((t) => t.action === 'SELL').map((t) => [t.sharesMicros, t.realizedPnlMicros]).sort((a, b) => a[0]! - b[0]!);
    expect(realised).toEqual([
      [1_000_000, 400_000 - 333_333],
      [2_000_000, 800_000 - 666_668],
    ]);
  });
});
