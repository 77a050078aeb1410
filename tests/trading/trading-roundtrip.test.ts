/**
 * No stranded positions: on every open event, a $500 LONG and a $500 SHORT bought and
 * then sold 100% at once close fully — status closed, no band left, nothing unsold — and the round
 * trip loses no more than the quoted spread (/valuation's spreadPercent) plus 1 point. The paper
 * books make this true the way the live venue's do: Polymarket's tick rule and depth in dollars.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { TestApp } from '../harness/app.ts';
import { api, buy, expectBooksAgree, sell, trader } from '../harness/trading.ts';
import { createTradingApp } from '../harness/trading-venue.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTradingApp();
});
afterAll(() => t.close());

test('$500 LONG and SHORT on every open event: bought, sold 100%, closed, losing at most the quoted spread + 1 point', async () => {
  const events = (await api(t, { headers: {} }, 'GET', '/api/trading/events')).body.events.filter((e: any) => e.status === 'open');
  expect(events.length).toBeGreaterThanOrEqual(5);
  for (const event of events) {
    const who = await trader(t);
    const valuation = (await api(t, who, 'GET', `/api/trading/valuation?eventSlug=${event.id}`)).body;
    for (const side of ['LONG', 'SHORT'] as const) {
      const where = `${event.id} ${side}`;
      const bought = await buy(t, who, { eventId: event.id, side, amount: 500 });
      expect(`${where} ${bought.res.status}`).toBe(`${where} 200`);
      const sold = await sell(t, who, { positionId: bought.body.positionId, percentage: 100 });
      expect(`${where} ${sold.res.status} ${sold.body.status}`).toBe(`${where} 200 closed`);
      expect(sold.body.unsold).toEqual([]);
      expect(sold.body.orders.every((o: any) => o.status === 'MATCHED' && o.filled === o.size)).toBe(true);
      const detail = (await api(t, who, 'GET', `/api/trading/positions/${bought.body.positionId}`)).body;
      expect(detail).toMatchObject({ status: 'closed', cost: 0, currentValue: 0 });
      expect(detail.bands.filter((b: any) => b.tokens !== 0)).toEqual([]);

      const lossPercent = ((bought.body.totalCost - sold.body.totalProceeds) / bought.body.totalCost) * 100;
      const spreadPercent = valuation.slippage[side === 'LONG' ? 'long' : 'short'].spreadPercent;
      expect({ where, within: lossPercent <= spreadPercent + 1, lossPercent, spreadPercent }).toMatchObject({ where, within: true });
      expect(sold.body.realizedPnl).toBeCloseTo(sold.body.totalProceeds - bought.body.totalCost, 6);
    }
    await expectBooksAgree(t, who);
  }
});
