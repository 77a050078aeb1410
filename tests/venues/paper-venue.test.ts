/**
 * The paper venue as a trading venue: fills walk the book, collateral and shares move exactly, orders
 * are idempotent per client order id, concurrent orders never overdraw or oversell, and a paper
 * account is its owner's (account, user), never the API key's.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { PAPER_REFUSED_API_KEY, PaperVenue } from '../../server/venues/paper.ts';
import type { MarketableOrder, VenueCredentials } from '../../server/venues/venue.ts';
import { costToBuy, proceedsOfSale } from '../../server/valuation/index.ts';
import { freshDatabase, type TestDatabase } from '../harness/databases.ts';

/** $10,000: less than a whole book (each holds at least 15 × $1,000 a side), more than its top level. */
const START = 10_000_000_000;
let database: TestDatabase;
let venue: PaperVenue;
beforeAll(async () => {
  database = await freshDatabase();
  venue = new PaperVenue({
    db: database.db,
    startingBalanceMicros: START,
    seed: 3,
    drift: 0,
    now: () => 0,
    referencePrices: async (ids) => new Map(ids.map((id) => [id, 0.4])),
  });
});
afterAll(() => database.close());

let n = 0;
const unique = () => `${++n}-${Math.random().toString(36).slice(2)}`;
/** Credentials as openCredentials gives them: with their owner, a user of their own. */
const creds = (): VenueCredentials => ({ apiKey: `paper-user-${unique()}`, secret: 's', passphrase: 'p', owner: { accountId: 'acct-paper', userId: `user-${unique()}` } });
const order = (o: Partial<MarketableOrder>): MarketableOrder => ({
  clientOrderId: `c-${Math.random().toString(36).slice(2)}`,
  tokenId: 'tok-a',
  side: 'BUY',
  sharesMicros: 10_000_000,
  limitPriceMicros: 990_000,
  timeInForce: 'FOK',
  ...o,
});

describe('credentials and balances', () => {
  test('the documented test key is refused; any other opens an account with the starting balance', async () => {
    await expect(venue.checkCredentials({ apiKey: PAPER_REFUSED_API_KEY, secret: 's', passphrase: 'p' })).rejects.toMatchObject({ apiCode: 'INVALID_CREDENTIALS' });
    await expect(venue.placeOrder({ apiKey: PAPER_REFUSED_API_KEY, secret: 's', passphrase: 'p' }, order({}))).rejects.toMatchObject({ apiCode: 'INVALID_CREDENTIALS' });
    expect(await venue.getCollateral(creds())).toBe(START);
  });

  test('the account is the owner\'s: the same API key in another tenant is another account; a new key is the same one', async () => {
    const a = { ...creds(), apiKey: 'my-venue-key' };
    const b = { ...creds(), apiKey: 'my-venue-key', owner: { accountId: 'acct-other', userId: a.owner!.userId } };
    const bought = await venue.placeOrder(a, order({}));
    expect(bought.status).toBe('MATCHED');
    expect(await venue.getCollateral(a)).toBe(START - bought.notionalMicros);
    // Another tenant with the same key (and even the same user id) sees a fresh account and none of a's orders.
    expect(await venue.getCollateral(b)).toBe(START);
    expect((await venue.getTokenBalances(b, ['tok-a'])).get('tok-a')).toBe(0);
    expect(await venue.getOrder(b, bought.clientOrderId)).toBeNull();
    await expect(venue.placeOrder(b, order({ side: 'SELL', limitPriceMicros: 10_000 }))).resolves.toMatchObject({ status: 'REJECTED', reason: 'insufficient-shares' });
    // The owner replacing its API key keeps its account.
    expect(await venue.getCollateral({ ...a, apiKey: 'a-new-key' })).toBe(START - bought.notionalMicros);
    expect(await venue.getOrder({ ...a, apiKey: 'a-new-key' }, bought.clientOrderId)).toEqual(bought);
  });

  test('credentials without an owner are a programming error, never an account of their own', async () => {
    const { owner: _, ...anonymous } = creds();
    await expect(venue.getCollateral(anonymous)).rejects.toThrow(/owner/);
    await expect(venue.checkCredentials(anonymous)).resolves.toBeUndefined();
  });
});

describe('orders', () => {
  test('a buy walks the asks, debits exactly the cost and credits the shares', async () => {
    const c = creds();
    const book = (await venue.getOrderBooks(['tok-a'])).get('tok-a')!;
    const shares = book.asks[0]!.sizeMicros + 20_000_000; // past the first level
    const placed = await venue.placeOrder(c, order({ sharesMicros: shares }));
    const cost = costToBuy(book.asks, shares)!;
    expect(placed).toMatchObject({ status: 'MATCHED', filledMicros: shares, notionalMicros: cost, reason: null });
    expect(cost).toBeGreaterThan(Math.ceil((shares * book.asks[0]!.priceMicros) / 1e6)); // paid more past the top level
    expect(await venue.getCollateral(c)).toBe(START - cost);
    expect((await venue.getTokenBalances(c, ['tok-a', 'tok-b'])).get('tok-a')).toBe(shares);
    expect(await venue.getOrder(c, placed.clientOrderId)).toEqual(placed);
  });

  test('a sell walks the bids and credits exactly the proceeds', async () => {
    const c = creds();
    await venue.placeOrder(c, order({ sharesMicros: 50_000_000 }));
    const before = await venue.getCollateral(c);
    const book = (await venue.getOrderBooks(['tok-a'])).get('tok-a')!;
    const sold = await venue.placeOrder(c, order({ side: 'SELL', sharesMicros: 30_000_000, limitPriceMicros: 10_000 }));
    expect(sold).toMatchObject({ status: 'MATCHED', filledMicros: 30_000_000, notionalMicros: proceedsOfSale(book.bids, 30_000_000).proceeds });
    expect(await venue.getCollateral(c)).toBe(before + sold.notionalMicros);
    expect((await venue.getTokenBalances(c, ['tok-a'])).get('tok-a')).toBe(20_000_000);
  });

  test('FOK refuses what the book cannot fill within the limit; FAK fills what it can', async () => {
    const c = creds();
    const book = (await venue.getOrderBooks(['tok-a'])).get('tok-a')!;
    const topOnly = book.asks[0]!;
    const tooMuch = order({ sharesMicros: topOnly.sizeMicros + 10_000_000, limitPriceMicros: topOnly.priceMicros });
    expect(await venue.placeOrder(c, tooMuch)).toMatchObject({ status: 'REJECTED', reason: 'no-liquidity', filledMicros: 0 });
    const partial = await venue.placeOrder(c, { ...tooMuch, clientOrderId: 'fak-1', timeInForce: 'FAK' });
    expect(partial).toMatchObject({ status: 'MATCHED', filledMicros: topOnly.sizeMicros, requestedMicros: topOnly.sizeMicros + 10_000_000 });
  });

  test.each([
    ['below the minimum order', { sharesMicros: 4_990_000 }, 'below-minimum'],
    ['off the share step', { sharesMicros: 5_000_001 }, 'invalid'],
    ['off the tick', { limitPriceMicros: 405_000 }, 'invalid'],
    ['selling shares not held', { side: 'SELL' as const, limitPriceMicros: 10_000 }, 'insufficient-shares'],
    ['buying beyond the balance', { sharesMicros: 1_000_000_000_000 }, 'insufficient-balance'],
  ])('%s is rejected', async (_, change, reason) => {
    const c = creds();
    expect(await venue.placeOrder(c, order({ ...change, timeInForce: 'FAK' }))).toMatchObject({ status: 'REJECTED', reason });
    expect(await venue.getCollateral(c)).toBe(START);
  });

  test('placing the same client order id again returns the first order and moves nothing twice', async () => {
    const c = creds();
    const o = order({ clientOrderId: 'once' });
    const [a, b] = await Promise.all([venue.placeOrder(c, o), venue.placeOrder(c, o)]);
    expect(a).toEqual(b);
    const again = await venue.placeOrder(c, o);
    expect(again).toEqual(a);
    expect(await venue.getCollateral(c)).toBe(START - a.notionalMicros);
    expect((await venue.getTokenBalances(c, ['tok-a'])).get('tok-a')).toBe(10_000_000);
  });

  test('cancelling a filled order changes nothing', async () => {
    const c = creds();
    const placed = await venue.placeOrder(c, order({}));
    expect(await venue.cancelOrder(c, placed.clientOrderId)).toEqual(placed);
  });

  test('cancelling an order the venue never saw blocks it for good: a late placement is not filled', async () => {
    const c = creds();
    const before = await venue.getCollateral(c);
    const cancelled = await venue.cancelOrder(c, 'sent-late');
    expect(cancelled).toMatchObject({ clientOrderId: 'sent-late', status: 'CANCELLED', filledMicros: 0 });
    const late = await venue.placeOrder(c, order({ clientOrderId: 'sent-late' }));
    expect(late).toMatchObject({ status: 'CANCELLED', filledMicros: 0 });
    expect(await venue.getCollateral(c)).toBe(before);
  });
});

describe('books like the live venue', () => {
  test("a cheap band trades on Polymarket's 0.001 tick with depth in dollars: a $500 order of it fills at the top level", async () => {
    const cheap = new PaperVenue({ db: database.db, startingBalanceMicros: START, seed: 3, drift: 0, now: () => 0, referencePrices: async (ids) => new Map(ids.map((id) => [id, 0.002])) });
    const c = creds();
    const book = (await cheap.getOrderBooks(['tok-cheap'])).get('tok-cheap')!;
    expect(book.tickMicros).toBe(1_000);
    expect(book.bids[0]!.priceMicros).toBe(1_000);
    const shares = 166_000_000_000; // 166,000 shares ≈ $500 at 0.003
    expect(book.asks[0]!.sizeMicros).toBeGreaterThanOrEqual(shares);
    const bought = await cheap.placeOrder(c, order({ tokenId: 'tok-cheap', sharesMicros: shares, limitPriceMicros: book.asks[0]!.priceMicros }));
    expect(bought).toMatchObject({ status: 'MATCHED', filledMicros: shares, notionalMicros: 498_000_000 });
    const sold = await cheap.placeOrder(c, order({ tokenId: 'tok-cheap', side: 'SELL', sharesMicros: shares, limitPriceMicros: 1_000, timeInForce: 'FAK' }));
    expect(sold).toMatchObject({ status: 'MATCHED', filledMicros: shares, notionalMicros: 166_000_000 });
    // Off the 0.001 grid is refused; a 0.01-tick book refuses a 0.001 price.
    expect(await cheap.placeOrder(c, order({ tokenId: 'tok-cheap', limitPriceMicros: 3_500 }))).toMatchObject({ status: 'REJECTED', reason: 'invalid' });
    expect(await venue.placeOrder(c, order({ limitPriceMicros: 401_000 }))).toMatchObject({ status: 'REJECTED', reason: 'invalid' });
  });
});

describe('concurrency', () => {
  test('concurrent buys never overdraw; concurrent sells never oversell', async () => {
    const c = creds();
    const one = (await venue.getOrderBooks(['tok-c'])).get('tok-c')!;
    const unitCost = costToBuy(one.asks, 100_000_000)!;
    // A balance for exactly 4 buys of 100 shares.
    const poor = { ...c, owner: { ...c.owner!, userId: `${c.owner!.userId}-poor` } };
    const rich = new PaperVenue({ db: database.db, startingBalanceMicros: unitCost * 4, seed: 3, drift: 0, now: () => 0, referencePrices: async (ids) => new Map(ids.map((id) => [id, 0.4])) });
    const buys = await Promise.all(Array.from({ length: 12 }, () => rich.placeOrder(poor, order({ tokenId: 'tok-c', sharesMicros: 100_000_000 }))));
    expect(buys.filter((b) => b.status === 'MATCHED')).toHaveLength(4);
    expect(buys.filter((b) => b.reason === 'insufficient-balance')).toHaveLength(8);
    expect(await rich.getCollateral(poor)).toBe(0);
    const sells = await Promise.all(Array.from({ length: 12 }, () => rich.placeOrder(poor, order({ tokenId: 'tok-c', side: 'SELL', sharesMicros: 100_000_000, limitPriceMicros: 10_000 }))));
    expect(sells.filter((s) => s.status === 'MATCHED')).toHaveLength(4);
    expect((await rich.getTokenBalances(poor, ['tok-c'])).get('tok-c')).toBe(0);
  });
});
