/**
 * A paper venue account belongs to its owner, (account, user) (docs/decisions.md §8), through the real HTTP
 * surface: users of different accounts who store the same venue API key (the README's
 * `my-venue-key`), and another user of the same account, each trade their own paper money and see
 * only their own holdings at positions/sync. (The paper ledger used to be keyed by the API key: the
 * second tenant's buy spent the first tenant's balance, and positions/sync listed the first tenant's
 * holdings under `untracked`.)
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { TestApp } from '../harness/app.ts';
import { fundedAccount, newUserId } from '../harness/factories.ts';
import { api, buy, expectBooksAgree, storeTraderCredentials, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp, ledgerOf } from '../harness/trading-venue.ts';

let t: TestApp;
beforeAll(async () => {
  // $100 each: two $60 buys from one shared paper account could not both be paid.
  t = await createTradingApp({ PAPER_STARTING_BALANCE_USD: '100' }, { venueKind: 'paper' });
});
afterAll(() => t.close());

/** A user who stores the README's example credentials, as many will. */
async function sharingTheExampleKey(account = undefined as Trader['account'] | undefined, userId?: string): Promise<Trader> {
  const who = await trader(t, { account, credentials: false });
  if (userId) {
    who.userId = userId;
    who.headers = { ...who.headers, 'x-user-id': userId };
  }
  who.credentials = { ...who.credentials, apiKey: 'my-venue-key', owner: { accountId: who.account.accountId, userId: who.userId } };
  await storeTraderCredentials(t, who);
  return who;
}

test('users storing the same venue API key each trade their own paper account and see only their own holdings', async () => {
  const first = await sharingTheExampleKey();
  const otherTenant = await sharingTheExampleKey(await fundedAccount(t, { usd: 100 }));
  const sameAccountOtherUser = await sharingTheExampleKey(first.account);
  // The same x-user-id in another account is another owner too.
  const twin = await sharingTheExampleKey(await fundedAccount(t, { usd: 100 }), first.userId);
  const users = [first, otherTenant, sameAccountOtherUser, twin];

  const events = ['openai-ipo', 'kraken-ipo', 'anthropic-ipo', 'strava-ipo'];
  const bought: any[] = [];
  const untracked = async (who: Trader) => (await api(t, who, 'POST', '/api/trading/positions/sync', { walletAddress: newUserId() })).body.untracked;
  for (const [i, who] of users.entries()) {
    // Nobody sees the tokens the others bought before it.
    expect(await untracked(who)).toEqual([]);
    const { res, body } = await buy(t, who, { eventId: events[i], side: 'LONG', amount: 60 });
    expect(`${i}: ${res.status} ${body.code ?? ''}`).toBe(`${i}: 200 `);
    bought.push(body);
  }

  for (const [i, who] of users.entries()) {
    // Collateral and holdings at the venue are exactly this user's own trades, from its own $100.
    await expectBooksAgree(t, who, 100_000_000);
    expect(await ledgerOf(t).collateral(who)).toBe(100_000_000 - Math.round(bought[i].totalCost * 1e6));
    const held = await ledgerOf(t).holdings(who);
    expect([...held.keys()].sort()).toEqual(bought[i].orders.map((o: any) => o.bandId).sort());

    const synced = await api(t, who, 'POST', '/api/trading/positions/sync', { walletAddress: newUserId() });
    expect(synced.res.status).toBe(200);
    expect(synced.body.untracked).toEqual([]);
    expect(synced.body.positions).toEqual([{ id: bought[i].positionId, eventId: events[i], side: 'LONG', status: 'open', onChainVerified: true }]);
  }
});

test('the refused test key is still refused', async () => {
  const who = await trader(t, { credentials: false });
  const { res, body } = await api(t, who, 'POST', '/api/trading/credentials', { apiKey: 'paper-refused', secret: 's', passphrase: 'p' });
  expect(res.status).toBe(403);
  expect(body.code).toBe('INVALID_CREDENTIALS');
});
