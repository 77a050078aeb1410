/**
 * positions/sync on the live venue reads Polygon: the Polymarket adapter (against the CLOB stand-in)
 * with a real viem public client on an in-process EVM, where a minimal ERC-1155 sits at the real
 * Conditional Tokens address (v1 markets) and at the PositionManager address (v2 markets).
 * Balances the wallet holds are verified, a position whose tokens left is closed, extra tokens are
 * reported as untracked, and each band is read from the contract of its market version.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { eventBands, events } from '../../db/schema.ts';
import { createPositionReader, POSITION_CONTRACTS } from '../../server/chain/position-reader.ts';
import { ClobHttp } from '../../server/venues/polymarket/clob-http.ts';
import { TokenMap } from '../../server/venues/polymarket/token-map.ts';
import { PolymarketVenue } from '../../server/venues/polymarket/venue.ts';
import { createTestApp, type TestApp } from '../harness/app.ts';
import { ClobStandin } from '../harness/clob-standin.ts';
import { freshDatabase, type TestDatabase } from '../harness/databases.ts';
import { startEvm } from '../harness/in-process-evm.ts';
import { api, buy, type Trader } from '../harness/trading.ts';
import { fundedAccount, newUserId } from '../harness/factories.ts';
import { tokenIdFor } from '../harness/trading-venue.ts';

let database: TestDatabase;
let standin: ClobStandin;
let evm: Awaited<ReturnType<typeof startEvm>>;
let t: TestApp;
let slow: TestApp;
const V2_BAND = 'paper-kraken-ipo-2';

beforeAll(async () => {
  database = await freshDatabase();
  const bands = await database.db.select({ id: eventBands.id, seedPrice: eventBands.seedPrice }).from(eventBands);
  await database.db.update(events).set({ venue: sql`${events.venue} || '{"structure":"bands"}'::jsonb` });
  for (const band of bands) {
    const version = band.id === V2_BAND ? 'v2' : 'v1';
    await database.db
      .update(eventBands)
      .set({ venue: sql`${eventBands.venue} || ${JSON.stringify({ tokenId: tokenIdFor(band.id), version, negRisk: true })}::jsonb` })
      .where(eq(eventBands.id, band.id));
  }
  const reference = new Map(bands.map((b) => [tokenIdFor(b.id), b.seedPrice]));
  standin = new ClobStandin({ referencePrice: (id) => reference.get(id), startingCollateralMicros: 10_000_000_000 }).start();
  evm = await startEvm();
  await evm.deployMiniErc1155At(POSITION_CONTRACTS.v1);
  await evm.deployMiniErc1155At(POSITION_CONTRACTS.v2);
  const venue = new PolymarketVenue({
    db: database.db,
    http: new ClobHttp({ baseUrl: standin.url, timeoutMs: 5000 }),
    tokens: new TokenMap(database.db),
    positions: createPositionReader(evm.client, { batchSize: 7 }),
  });
  t = await createTestApp({ VENUE: 'polymarket', POLYMARKET_CLOB_URL: standin.url }, { database, venue });
  // The same venue with a short deadline, for the slow-CLOB case.
  const slowVenue = new PolymarketVenue({
    db: database.db,
    http: new ClobHttp({ baseUrl: standin.url, timeoutMs: 400 }),
    tokens: new TokenMap(database.db),
    positions: createPositionReader(evm.client, { batchSize: 7 }),
  });
  slow = await createTestApp({ VENUE: 'polymarket', POLYMARKET_CLOB_URL: standin.url, VENUE_TIMEOUT_MS: '400' }, { database, venue: slowVenue });
}, 60_000);

afterAll(async () => {
  await slow.close();
  await t.close();
  standin.stop();
  await evm.close();
  await database.close();
});

/** A user enrolled at the stand-in, wallet set, credentials stored, session key authorised. */
async function liveTrader(): Promise<Trader> {
  const account = await fundedAccount(t, { usd: 100 });
  const userId = newUserId();
  const credentials = { apiKey: crypto.randomUUID(), secret: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url'), passphrase: 'pp' };
  standin.register({ ...credentials, wallet: userId as `0x${string}` });
  const who: Trader = { account, userId, credentials: { ...credentials, walletAddress: userId }, headers: { ...account.headers, 'x-user-id': userId } };
  await api(t, who, 'PUT', '/api/trading/settings', { walletAddress: userId });
  const { res } = await api(t, who, 'POST', '/api/trading/credentials', credentials);
  expect(res.status).toBe(200);
  const { signerAddress } = (await api(t, who, 'GET', '/api/trading/settings')).body;
  expect(signerAddress).toMatch(/^0x[0-9a-fA-F]{40}$/);
  standin.authorise(userId, signerAddress);
  return who;
}

/** Settlement: what the CLOB filled lands on chain, on the contract of each band's market version. */
async function settleOnChain(who: Trader) {
  const tokens = await new TokenMap(database.db).byBand();
  for (const token of tokens.values()) {
    const held = standin.held(who.userId, token.tokenId);
    if (held > 0) await evm.mint(POSITION_CONTRACTS[token.version], who.userId as `0x${string}`, BigInt(token.tokenId), BigInt(held));
  }
}

describe('positions/sync against the chain', () => {
  test('verifies positions from on-chain balances, v1 and v2 contracts alike', async () => {
    const who = await liveTrader();
    const long = await buy(t, who, { eventId: 'kraken-ipo', side: 'LONG', amount: 60 });
    expect(long.res.status).toBe(200);
    expect(long.body.orders.some((o: { bandId: string }) => o.bandId === V2_BAND)).toBe(true);
    // The fills settle on chain (each band on the contract of its market version).
    await settleOnChain(who);
    const { body } = await api(t, who, 'POST', '/api/trading/positions/sync', {});
    expect(body).toMatchObject({ synced: 1, added: 0, removed: 0, untracked: [] });
    expect(body.positions).toEqual([{ id: long.body.positionId, eventId: 'kraken-ipo', side: 'LONG', status: 'open', onChainVerified: true }]);
  });

  test('tokens that left the wallet close the position; tokens we never bought are untracked', async () => {
    const who = await liveTrader();
    const kept = (await buy(t, who, { eventId: 'openai-ipo', side: 'LONG', amount: 60 })).body;
    const gone = (await buy(t, who, { eventId: 'ledger-ipo', side: 'SHORT', amount: 60 })).body;
    const tokens = await new TokenMap(database.db).byBand();
    for (const order of kept.orders) {
      const token = tokens.get(order.bandId)!;
      await evm.mint(POSITION_CONTRACTS[token.version], who.userId as `0x${string}`, BigInt(token.tokenId), BigInt(Math.round(order.filled * 1e6)));
    }
    const stray = tokens.get('paper-strava-ipo-1')!;
    await evm.mint(POSITION_CONTRACTS.v1, who.userId as `0x${string}`, BigInt(stray.tokenId), 7_000_000n);

    // Another address proves nothing about the user's positions: reported, nothing closed.
    const elsewhere = (await api(t, who, 'POST', '/api/trading/positions/sync', { walletAddress: newUserId() })).body;
    expect(elsewhere).toMatchObject({ removed: 0 });
    expect(elsewhere.positions.every((p: { onChainVerified: boolean; status: string }) => !p.onChainVerified && p.status === 'open')).toBe(true);

    const { body } = await api(t, who, 'POST', '/api/trading/positions/sync', {});
    expect(body).toMatchObject({ synced: 2, removed: 1 });
    expect(body.positions).toEqual([
      { id: kept.positionId, eventId: 'openai-ipo', side: 'LONG', status: 'open', onChainVerified: true },
      { id: gone.positionId, eventId: 'ledger-ipo', side: 'SHORT', status: 'closed', onChainVerified: false },
    ]);
    expect(body.untracked).toEqual([{ bandId: 'paper-strava-ipo-1', eventId: 'strava-ipo', label: expect.any(String), tokens: 7 }]);
  });

  test('a pending buy whose fills reached the chain is added: settled through orders, verified by balances', async () => {
    const who = await liveTrader();
    // The CLOB is slow to answer one placement and its status: the buy ends PENDING.
    standin.inject({ path: '/order', delayMs: 1500 });
    standin.inject({ path: '/data/order', delayMs: 1500 });
    const pending = await buy(slow, who, { eventId: 'openai-ipo', side: 'SHORT', amount: 60 });
    expect(pending.res.status).toBe(503);
    await Bun.sleep(1600);
    await settleOnChain(who);
    const { body } = await api(slow, who, 'POST', '/api/trading/positions/sync', {});
    expect(body).toMatchObject({ synced: 1, added: 1, removed: 0 });
    expect(body.positions[0]).toMatchObject({ status: 'open', onChainVerified: true });
  });

  test('an unreachable RPC answers 503 VENUE_UNAVAILABLE in our error shape', async () => {
    const who = await liveTrader();
    const dead = new PolymarketVenue({
      db: database.db,
      http: new ClobHttp({ baseUrl: standin.url, timeoutMs: 2000 }),
      tokens: new TokenMap(database.db),
      positions: createPositionReader((await import('../../server/chain/position-reader.ts')).createPolygonClient('http://127.0.0.1:9', { timeoutMs: 300 })),
    });
    const broken = await createTestApp({ VENUE: 'polymarket', POLYMARKET_CLOB_URL: standin.url }, { database, venue: dead });
    const { res, body } = await api(broken, who, 'POST', '/api/trading/positions/sync', {});
    expect(res.status).toBe(503);
    expect(body).toMatchObject({ code: 'VENUE_UNAVAILABLE', status: 503 });
    await broken.close();
  });
});
