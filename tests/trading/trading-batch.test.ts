/**
 * Buys and sells in one tRPC batch (the typed client's httpBatchLink sends one HTTP request, whose
 * headers every call shares): each call names its own trading user and idempotency key in its input.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import type { AppRouter } from '../../routers/index.ts';
import { BASE, type TestApp } from '../harness/app.ts';
import { fundedAccount, type FundedAccount } from '../harness/factories.ts';
import { trader, type Trader } from '../harness/trading.ts';
import { createTradingApp } from '../harness/trading-venue.ts';

let t: TestApp;
let account: FundedAccount;
let alice: Trader;
let bob: Trader;

beforeAll(async () => {
  t = await createTradingApp();
  account = await fundedAccount(t, { usd: 1000 });
  alice = await trader(t, { account });
  bob = await trader(t, { account });
});
afterAll(() => t.close());

/** A typed client on the app, batching; `headers` are the batch's (no x-user-id here). */
function batchingClient(headers: Record<string, string>) {
  const requests: Request[] = [];
  const client = createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url: `${BASE}/trpc`,
        headers: () => headers,
        fetch: ((input: RequestInfo | URL, init?: RequestInit) => {
          const request = new Request(input, init);
          requests.push(request);
          return t.app.handle(request);
        }) as never,
      }),
    ],
  });
  return { client, requests };
}

const order = { eventId: 'openai-ipo', side: 'LONG' as const, amount: 20 };

describe('a batch of trades', () => {
  test('two buys for two users with their own keys: one request, two positions, replays answer the same', async () => {
    const { client, requests } = batchingClient(account.headers);
    const [a, b] = await Promise.all([
      client.trading.buy.mutate({ ...order, userId: alice.userId, idempotencyKey: 'batch-a-1' }),
      client.trading.buy.mutate({ ...order, userId: bob.userId, idempotencyKey: 'batch-b-1' }),
    ]);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.url).toContain('trading.buy,trading.buy');
    expect(a.positionId).not.toBe(b.positionId);
    const alicePositions = await (await t.request('/api/trading/positions', { headers: alice.headers })).json();
    const bobPositions = await (await t.request('/api/trading/positions', { headers: bob.headers })).json();
    expect(alicePositions.positions.map((p: any) => p.id)).toEqual([a.positionId]);
    expect(bobPositions.positions.map((p: any) => p.id)).toEqual([b.positionId]);

    // The same two calls again: each is its key's replay (no new trade), in one batch.
    const [again, againB] = await Promise.all([
      client.trading.buy.mutate({ ...order, userId: alice.userId, idempotencyKey: 'batch-a-1' }),
      client.trading.buy.mutate({ ...order, userId: bob.userId, idempotencyKey: 'batch-b-1' }),
    ]);
    expect(again.positionId).toBe(a.positionId);
    expect(againB.positionId).toBe(b.positionId);
    // The key fingerprints the trade, not where the user was named: the header form replays too.
    const viaHeaders = await t.request('/api/trading/buy', {
      method: 'POST',
      headers: { ...alice.headers, 'idempotency-key': 'batch-a-1', 'content-type': 'application/json' },
      body: JSON.stringify(order),
    });
    expect(viaHeaders.status).toBe(200);
    expect((await viaHeaders.json()).positionId).toBe(a.positionId);
  });

  test('a sale and a buy in one batch, for different users', async () => {
    const { client } = batchingClient(account.headers);
    const bought = await client.trading.buy.mutate({ ...order, userId: alice.userId, idempotencyKey: 'batch-a-2' });
    const [sold, other] = await Promise.all([
      client.trading.sell.mutate({ positionId: bought.positionId, percentage: 100, userId: alice.userId, idempotencyKey: 'batch-sell-a-2' }),
      client.trading.buy.mutate({ ...order, userId: bob.userId, idempotencyKey: 'batch-b-2' }),
    ]);
    expect(sold.positionId).toBe(bought.positionId);
    expect(sold.status).toBe('closed');
    expect(other.positionId).not.toBe(bought.positionId);
  });

  test('a member that contradicts its header is refused (400) before anything trades, and costs nothing', async () => {
    const { client } = batchingClient({ ...account.headers, 'x-user-id': bob.userId, 'idempotency-key': 'header-key' });
    const results = await Promise.allSettled([
      client.trading.buy.mutate({ ...order, userId: alice.userId }),
      client.trading.buy.mutate({ ...order, idempotencyKey: 'another-key' }),
    ]);
    const messages = results.map((r) => (r.status === 'rejected' && r.reason instanceof TRPCClientError ? [r.reason.data?.api?.code, r.reason.message] : r.status));
    expect(messages[0]).toEqual(['BAD_REQUEST', expect.stringContaining('userId: differs from the x-user-id header')]);
    expect(messages[1]).toEqual(['BAD_REQUEST', expect.stringContaining('idempotencyKey: differs from the Idempotency-Key header')]);
    // Nothing traded: bob (the header's user) holds what he held before, and neither call was billed.
    const before = await (await t.request('/api/billing', { headers: account.headers })).json();
    const positions = await (await t.request('/api/trading/positions', { headers: bob.headers })).json();
    expect(positions.total).toBe(2);
    const after = await (await t.request('/api/billing', { headers: account.headers })).json();
    expect(before.usageCount + 2).toBe(after.usageCount); // the two reads above; the refused calls were refunded
  });

  test('the members are optional: the headers alone still work, and a malformed userId is refused', async () => {
    const response = await t.request('/api/trading/quote', {
      method: 'POST',
      headers: { ...account.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ ...order, userId: 'not an identifier!' }),
    });
    expect(response.status).toBe(400);
    expect((await response.json()).message).toContain('userId');
    const quoted = await t.request('/api/trading/quote', { method: 'POST', headers: { ...alice.headers, 'content-type': 'application/json' }, body: JSON.stringify(order) });
    expect(quoted.status).toBe(200);
  });
});
