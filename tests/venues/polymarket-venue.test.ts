/**
 * The Polymarket adapter end to end through the API, against the local CLOB stand-in, on the
 * things only a live venue does: credentials checked with an authenticated call, session keys and
 * their authorisation, the CLOB's own clock, 429/5xx retries, a placement that outlives its deadline
 * and is found by orders/sync, and refusals mapped to our error codes.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { and, eq, sql } from 'drizzle-orm';
import { eventBands, events } from '../../db/schema.ts';
import { TokenMap } from '../../server/venues/polymarket/token-map.ts';
import type { TestApp } from '../harness/app.ts';
import type { ClobStandin } from '../harness/clob-standin.ts';
import { api, buy, expectBooksAgree, trader } from '../harness/trading.ts';
import { createTradingApp, ledgerOf, standinOf } from '../harness/trading-venue.ts';

let t: TestApp;
let standin: ClobStandin;
const TIMEOUT_MS = 400;

beforeAll(async () => {
  // The CLOB's clock runs an hour ahead of ours: signatures must carry its time, not ours.
  t = await createTradingApp({ VENUE_TIMEOUT_MS: String(TIMEOUT_MS) }, { venueKind: 'polymarket', standinNow: () => Date.now() + 3_600_000 });
  standin = standinOf(t)!;
});
afterAll(() => t.close());

const order = { eventId: 'openai-ipo', side: 'LONG', amount: 60 };

describe('credentials and session keys', () => {
  test('credentials the CLOB does not know are refused (403) and not stored', async () => {
    const who = await trader(t, { credentials: false });
    const { res, body } = await api(t, who, 'POST', '/api/trading/credentials', { apiKey: 'unknown', secret: 'c2VjcmV0', passphrase: 'x' });
    expect(res.status).toBe(403);
    expect(body.code).toBe('INVALID_CREDENTIALS');
    expect((await api(t, who, 'GET', '/api/trading/settings')).body).toMatchObject({ hasCredentials: false, signerAddress: null });
  });

  test('the funding wallet must be set first', async () => {
    const who = await trader(t, { credentials: false });
    await api(t, who, 'PUT', '/api/trading/settings', { walletAddress: null });
    const { apiKey, secret, passphrase } = who.credentials;
    const { res, body } = await api(t, who, 'POST', '/api/trading/credentials', { apiKey, secret, passphrase });
    expect(res.status).toBe(400);
    expect(body.message).toContain('walletAddress');
  });

  test('each user gets a session key; storing new credentials keeps it; it signs every order', async () => {
    const who = await trader(t);
    const first = (await api(t, who, 'GET', '/api/trading/settings')).body.signerAddress;
    expect(first).toMatch(/^0x[0-9a-fA-F]{40}$/);
    const { apiKey, secret, passphrase } = who.credentials;
    await api(t, who, 'POST', '/api/trading/credentials', { apiKey, secret, passphrase });
    expect((await api(t, who, 'GET', '/api/trading/settings')).body.signerAddress).toBe(first);
    expect((await trader(t)).userId).not.toBe(who.userId);
    const { res } = await buy(t, who, order);
    expect(res.status).toBe(200);
  });

  test('orders signed by a key the wallet never authorised are refused by the CLOB: 422, nothing held', async () => {
    const who = await trader(t, { credentials: false });
    const { apiKey, secret, passphrase } = who.credentials;
    await api(t, who, 'POST', '/api/trading/credentials', { apiKey, secret, passphrase });
    const { res, body } = await buy(t, who, order);
    expect(res.status).toBe(422);
    expect(body.code).toBe('ORDER_REJECTED');
    await expectBooksAgree(t, who);
  });
});

describe('the CLOB misbehaving', () => {
  test('429s and 5xx on order placement are retried inside the deadline', async () => {
    const who = await trader(t);
    standin.inject({ path: '/order', status: 429 }, 2);
    standin.inject({ path: '/books', status: 502 }, 1);
    const { res, body } = await buy(t, who, order);
    expect(res.status).toBe(200);
    expect(body.orders.every((o: { status: string }) => o.status === 'MATCHED')).toBe(true);
    await expectBooksAgree(t, who);
  });

  test('a placement that outlives its deadline is PENDING; orders/sync finds the fill and completes the buy', async () => {
    const who = await trader(t);
    standin.inject({ path: '/order', delayMs: TIMEOUT_MS * 3 });
    standin.inject({ path: '/data/order', delayMs: TIMEOUT_MS * 3 });
    const { res } = await buy(t, who, order);
    expect(res.status).toBe(503);
    await Bun.sleep(TIMEOUT_MS * 3);
    const sync = (await api(t, who, 'POST', '/api/trading/orders/sync', {})).body;
    expect(sync).toMatchObject({ synced: 1, updated: 1, orders: [{ previousStatus: 'PENDING', currentStatus: 'MATCHED' }] });
    expect(sync.positions[0].status).toBe('open');
    await expectBooksAgree(t, who);
  });

  test('"not enough balance / allowance" on one band: the others are sold back and the answer is 402', async () => {
    const who = await trader(t);
    standin.inject({ path: '/order', status: 400, body: { success: false, errorMsg: 'not enough balance / allowance', orderID: '', status: '' } });
    const { res, body } = await buy(t, who, order);
    expect(res.status).toBe(402);
    expect(body.code).toBe('INSUFFICIENT_BALANCE');
    await expectBooksAgree(t, who);
  });

  test('a CLOB that is down answers 503 in our error shape; nothing is recorded', async () => {
    const who = await trader(t);
    standin.inject({ path: '/books', status: 503 }, 50);
    const { res, body } = await buy(t, who, order);
    expect(res.status).toBe(503);
    expect(body).toMatchObject({ code: 'VENUE_UNAVAILABLE', status: 503 });
    expect((await api(t, who, 'GET', '/api/trading/positions?status=all')).body.positions).toEqual([]);
    standin.clearFaults();
  });

  test('market data on the live venue reads the CLOB books', async () => {
    const valuation = (await api(t, { headers: {} }, 'GET', '/api/trading/valuation?eventSlug=openai-ipo')).body;
    expect(valuation.slippage.bandPrices.every((b: { bid: number; ask: number }) => b.ask > b.bid)).toBe(true);
    expect(ledgerOf(t).startingMicros).toBeGreaterThan(0);
  });

  test("a ladder trades its thresholds' Yes and No tokens: `<band id>:yes|no` map to the market's two outcome tokens, its bands to none", async () => {
    const db = t.database.db;
    const [kraken] = await db.select({ venue: events.venue }).from(events).where(eq(events.id, 'kraken-ipo'));
    expect(kraken!.venue.structure).toBe('ladder');
    const tokens = await new TokenMap(db).byBand();
    const [band] = await db.select().from(eventBands).where(and(eq(eventBands.eventId, 'kraken-ipo'), eq(eventBands.bandIndex, 2)));
    expect(tokens.get(`${band!.id}:yes`)?.tokenId).toBe(band!.venue.tokenId!);
    expect(tokens.get(`${band!.id}:no`)?.tokenId).toBe(band!.venue.noTokenId!);
    expect(tokens.has(band!.id)).toBe(false);
    expect(tokens.has('paper-openai-ipo-0')).toBe(true);
  });
});
