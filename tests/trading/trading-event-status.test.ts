/**
 * Trading reads an event's status from the database when it acts: the market-data
 * snapshot can be MARKET_DATA_TTL_MS old, and a quote, a buy or a sale must not slip in after the
 * event stopped trading or resolved. A position of such an event is not sold: it settles at resolution.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { events } from '../../db/schema.ts';
import type { TestApp } from '../harness/app.ts';
import { api, buy, sell, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp } from '../harness/trading-venue.ts';

const EVENT = 'openai-ipo';
let t: TestApp;
let alice: Trader;

// A snapshot that outlives the test: whatever the routes refuse, they refuse from the database.
beforeAll(async () => {
  t = await createTradingApp({ MARKET_DATA_TTL_MS: '600000' });
  alice = await trader(t);
});
afterAll(() => t.close());

const setStatus = (status: 'open' | 'closed' | 'resolved') => t.database.db.update(events).set({ status }).where(eq(events.id, EVENT));

test('a buy or a sale after the event stopped trading is refused, though the snapshot still says open', async () => {
  const bought = await buy(t, alice, { eventId: EVENT, side: 'LONG', amount: 50 });
  expect(bought.res.status).toBe(200);
  const positionId = bought.body.positionId as string;

  await setStatus('closed');
  const listed = await api(t, alice, 'GET', '/api/trading/events');
  expect(listed.body.events.find((e: any) => e.id === EVENT).status).toBe('open'); // the stale snapshot

  const again = await buy(t, alice, { eventId: EVENT, side: 'LONG', amount: 50 });
  expect(again.res.status).toBe(422);
  expect(again.body).toMatchObject({ code: 'ORDER_REJECTED', message: expect.stringContaining(`${EVENT} is closed`) });
  // A quote answers what a buy would: refused as well.
  const quoted = await api(t, alice, 'POST', '/api/trading/quote', { eventId: EVENT, side: 'LONG', amount: 50 });
  expect(quoted.res.status).toBe(422);
  expect(quoted.body).toMatchObject({ code: 'ORDER_REJECTED', message: expect.stringContaining(`${EVENT} is closed`) });

  const whileClosed = await sell(t, alice, { positionId, percentage: 100 });
  expect(whileClosed.res.status).toBe(422);
  expect(whileClosed.body.message).toContain('trading has stopped');

  await setStatus('resolved');
  const whileResolved = await sell(t, alice, { positionId, percentage: 100 });
  expect(whileResolved.res.status).toBe(422);
  expect(whileResolved.body.message).toContain('settles at its resolution');

  // Nothing was sent: the position holds what it bought.
  const detail = await api(t, alice, 'GET', `/api/trading/positions/${positionId}`);
  expect(detail.body.status).toBe('open');
  expect(detail.body.bands.every((b: any) => b.tokens > 0)).toBe(true);

  await setStatus('open');
  expect((await sell(t, alice, { positionId, percentage: 100 })).res.status).toBe(200);
});
