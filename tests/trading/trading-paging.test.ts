/**
 * Paging of positions and orders: `limit` and `offset` cut the newest-first list,
 * `total` counts the whole filtered set (also past the last page), over /api and /trpc.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { trpcClient, type TestApp } from '../harness/app.ts';
import { api, buy, sell, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp } from '../harness/trading-venue.ts';

let t: TestApp;
let who: Trader;
/** Newest first, as the lists answer. */
let positionIds: string[] = [];
/** A position sold 100%: closed, or still open if the books could not take it all (the counts follow). */
let soldId: string;
let soldStatus: 'open' | 'closed';

beforeAll(async () => {
  t = await createTradingApp();
  who = await trader(t);
  const { body } = await api(t, { headers: {} }, 'GET', '/api/trading/events');
  const open = body.events.filter((e: any) => e.status === 'open').map((e: any) => e.id);
  for (const eventId of [open[0], open[1], open[0], open[2], open[0]]) {
    const bought = await buy(t, who, { eventId, side: 'LONG', amount: 40 });
    expect(bought.res.status).toBe(200);
    positionIds.unshift(bought.body.positionId);
  }
  soldId = positionIds[2]!;
  soldStatus = (await sell(t, who, { positionId: soldId, percentage: 100 })).body.status;
  expect(['open', 'closed']).toContain(soldStatus);
});
afterAll(() => t.close());

const get = async (path: string) => {
  const { res, body } = await api(t, who, 'GET', path);
  expect(res.status).toBe(200);
  return body;
};

describe('positions', () => {
  test('limit and offset walk the newest-first list; total is the whole filtered set', async () => {
    const pages = [];
    for (const offset of [0, 2, 4]) {
      const page = await get(`/api/trading/positions?status=all&limit=2&offset=${offset}`);
      expect(page).toMatchObject({ total: 5, limit: 2, offset });
      pages.push(...page.positions.map((p: any) => p.id));
    }
    expect(pages).toEqual(positionIds);
    const stillOpen = positionIds.filter((id) => id !== soldId || soldStatus === 'open');
    const open = await get('/api/trading/positions?limit=3');
    expect(open).toMatchObject({ total: stillOpen.length, limit: 3, offset: 0 });
    expect(open.positions.map((p: any) => p.id)).toEqual(stillOpen.slice(0, 3));
    const event = (await get(`/api/trading/positions/${positionIds[0]}`)).eventId;
    expect(await get(`/api/trading/positions?status=all&eventId=${event}&limit=1&offset=1`)).toMatchObject({ total: 3, positions: [{ id: positionIds[2], eventId: event }] });
  });

  test('a page past the end is empty and still says the total; a user with none has 0', async () => {
    expect(await get('/api/trading/positions?status=all&offset=5')).toEqual({ positions: [], total: 5, limit: 100, offset: 5 });
    expect(await get('/api/trading/positions?status=open&offset=5')).toMatchObject({ positions: [], total: soldStatus === 'open' ? 5 : 4 });
    const other = await trader(t);
    expect((await api(t, other, 'GET', '/api/trading/positions?status=all')).body).toEqual({ positions: [], total: 0, limit: 100, offset: 0 });
  });

  test('over /trpc', async () => {
    const client = trpcClient(t, who.headers);
    const page = await client.positions.list.query({ status: 'all', limit: 2, offset: 3 });
    expect(page.total).toBe(5);
    expect(page.positions.map((p) => p.id)).toEqual(positionIds.slice(3, 5));
  });
});

describe('orders', () => {
  test('limit and offset walk the orders; total counts the filtered set, also past the end', async () => {
    const all = await get('/api/trading/orders?limit=500');
    const n = all.orders.length;
    expect(all.total).toBe(n);
    expect(n).toBeGreaterThan(5);
    const walked = [];
    for (let offset = 0; offset < n; offset += 4) {
      const page = await get(`/api/trading/orders?limit=4&offset=${offset}`);
      expect(page).toMatchObject({ total: n, limit: 4, offset });
      walked.push(...page.orders.map((o: any) => o.id));
    }
    expect(new Set(walked).size).toBe(n);
    expect(walked).toEqual(all.orders.map((o: any) => o.id));
    expect(await get(`/api/trading/orders?offset=${n}`)).toEqual({ orders: [], total: n, limit: 50, offset: n });
    const ofClosed = await get(`/api/trading/orders?positionId=${soldId}&limit=1`);
    expect(ofClosed.orders).toHaveLength(1);
    expect(ofClosed.total).toBe(all.orders.filter((o: any) => o.positionId === soldId).length);
    const client = trpcClient(t, who.headers);
    const page = await client.orders.list.query({ limit: 3, offset: 1 });
    expect(page.total).toBe(n);
    expect(page.orders.map((o) => o.id)).toEqual(walked.slice(1, 4));
  });
});

test.each([
  ['/api/trading/positions?offset=-1', 'offset'],
  ['/api/trading/positions?offset=1.5', 'offset'],
  ['/api/trading/orders?offset=abc', 'offset'],
  ['/api/trading/orders?limit=0', 'limit'],
])('%s is 400 naming %s', async (path, param) => {
  const { res, body } = await api(t, who, 'GET', path);
  expect(res.status).toBe(400);
  expect(body).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
  expect(body.message).toContain(param);
});
