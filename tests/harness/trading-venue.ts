/**
 * The venue the trading tests run against: the paper venue (default), or with TEST_VENUE=polymarket
 * the real Polymarket adapter talking HTTP to a local CLOB stand-in. Tests see the same app either
 * way; what differs is how a test reads the venue's own books (`VenueLedger`), to compare them with
 * ours, and how a trading user is enrolled at the venue.
 */
import { and, eq, sql } from 'drizzle-orm';
import { eventBands, events, paperAccounts, paperHoldings, paperOrders, polymarketOrders } from '../../db/schema.ts';
import { loadConfig } from '../../server/config.ts';
import { ClobHttp } from '../../server/venues/polymarket/clob-http.ts';
import { TokenMap } from '../../server/venues/polymarket/token-map.ts';
import { PolymarketVenue } from '../../server/venues/polymarket/venue.ts';
import type { Venue, VenueCredentials } from '../../server/venues/venue.ts';
import { createTestApp, TEST_ENV, type TestApp } from './app.ts';
import { ClobStandin } from './clob-standin.ts';
import { LedgerRelayer } from './ledger-relayer.ts';
import { Redeemer, REDEMPTION_CONTRACTS } from '../../server/venues/polymarket/redeemer.ts';
import { RelayerHttp } from '../../server/venues/polymarket/relayer-http.ts';
import { keccak256, toHex } from 'viem';
import { freshDatabase, type TestDatabase } from './databases.ts';

export const TEST_VENUE: 'paper' | 'polymarket' = process.env.TEST_VENUE === 'polymarket' ? 'polymarket' : 'paper';

export interface TraderRef {
  account: { accountId: string };
  userId: string;
  credentials: VenueCredentials;
}

/** The venue's side of the books, read from outside the service. Amounts in micro-units. */
export interface VenueLedger {
  startingMicros: number;
  /** Credentials for a new trading user, known to the venue. */
  enrol(userId: string): VenueCredentials;
  /** The user authorised this session key (live venue) after storing credentials. */
  authorise(userId: string, signerAddress: string | null): void;
  collateral(who: TraderRef): Promise<number>;
  /** Holdings by band id (bands not held are absent). */
  holdings(who: TraderRef): Promise<Map<string, number>>;
  /** Orders the venue filled, by our order id. */
  fills(who: TraderRef): Promise<Map<string, { filledMicros: number; notionalMicros: number }>>;
  /** Replaces the wallet's holdings (tokens moved in or out behind our back). */
  setHoldings(who: TraderRef, holdings: Map<string, number>): Promise<void>;
  close(): void;
}

const ledgers = new WeakMap<TestApp, VenueLedger>();
export const ledgerOf = (t: TestApp) => ledgers.get(t)!;

/** A band market's condition id (0x, 32 bytes), stable per band id. */
export const conditionIdFor = (bandId: string) => keccak256(toHex(`condition/${bandId}`));

/** A 77-digit decimal token id for a band (as Gamma would give), stable per band id. */
export const tokenIdFor = (bandId: string) => BigInt(`0x${new Bun.CryptoHasher('sha256').update(bandId).digest('hex')}`).toString();

const standins = new WeakMap<TestApp, ClobStandin>();
/** The CLOB stand-in behind a polymarket test app (to reuse it across a restart, or inject faults). */
export const standinOf = (t: TestApp) => standins.get(t);

export async function createTradingApp(
  env: Record<string, string> = {},
  options: Parameters<typeof createTestApp>[1] & { wrap?: (venue: Venue) => Venue; standin?: ClobStandin; keepStandin?: boolean; venueKind?: 'paper' | 'polymarket'; standinNow?: () => number } = {},
): Promise<TestApp> {
  const config = loadConfig({ ...TEST_ENV, ...env });
  if ((options.venueKind ?? TEST_VENUE) === 'paper') {
    const base = await createTestApp(env, options);
    const venue = options.wrap ? options.wrap(base.services.venue) : undefined;
    const t = venue ? await createTestApp(env, { ...options, database: base.database, venue }) : base;
    if (venue) {
      const close = t.close;
      t.close = async () => {
        await close();
        await base.close();
      };
    }
    ledgers.set(t, paperLedger(t, config.paper.startingBalanceMicros));
    return t;
  }

  const database: TestDatabase = options.database ?? (await freshDatabase());
  const bands = await database.db.select({ id: eventBands.id, eventId: eventBands.eventId, bandIndex: eventBands.bandIndex, seedPrice: eventBands.seedPrice }).from(eventBands);
  const structures = new Map((await database.db.select({ id: events.id, venue: events.venue }).from(events)).map((e) => [e.id, e.venue.structure]));
  // Every band's market gets venue tokens, as `npm run events:sync` would give them. A band event's
  // Yes token is priced at the band's seed price; a ladder's "above" market (band i's Yes) at the sum
  // of the seed prices from band i up; No tokens mirror their Yes books.
  const reference = new Map(
    bands.map((b) => {
      const above = bands.filter((o) => o.eventId === b.eventId && o.bandIndex >= b.bandIndex).reduce((s, o) => s + o.seedPrice, 0);
      return [tokenIdFor(b.id), structures.get(b.eventId) === 'ladder' ? above : b.seedPrice];
    }),
  );
  const yesOfNo = new Map(bands.map((b) => [tokenIdFor(`${b.id}/no`), tokenIdFor(b.id)]));
  for (const band of bands) {
    const negRisk = structures.get(band.eventId) !== 'ladder';
    await database.db
      .update(eventBands)
      .set({ venue: sql`${eventBands.venue} || ${JSON.stringify({ tokenId: tokenIdFor(band.id), noTokenId: tokenIdFor(`${band.id}/no`), conditionId: conditionIdFor(band.id), version: 'v1', negRisk })}::jsonb` })
      .where(eq(eventBands.id, band.id));
  }
  // A market's band, by its condition, read from the database (so markets listed later resolve too).
  const bandByCondition = async (conditionId: string) => {
    const [row] = await database.db
      .select({ bandIndex: eventBands.bandIndex, eventId: eventBands.eventId, venue: eventBands.venue, event: events.venue })
      .from(eventBands)
      .innerJoin(events, eq(events.id, eventBands.eventId))
      .where(sql`lower(${eventBands.venue}->>'conditionId') = lower(${conditionId})`)
      .limit(1);
    return row;
  };
  // Our token ids (a band's id; a ladder's `<band id>:yes|no`) and the stand-in's.
  const ourTokenOf = new Map<string, string>();
  for (const b of bands) {
    const ladder = structures.get(b.eventId) === 'ladder';
    ourTokenOf.set(tokenIdFor(b.id), ladder ? `${b.id}:yes` : b.id);
    if (ladder) ourTokenOf.set(tokenIdFor(`${b.id}/no`), `${b.id}:no`);
  }
  const standin =
    options.standin ??
    new ClobStandin({ referencePrice: (id) => reference.get(id), complementOf: (id) => yesOfNo.get(id), startingCollateralMicros: config.paper.startingBalanceMicros, drift: config.paper.drift, now: options.standinNow ?? options.now }).start();
  const tokens = new TokenMap(database.db, options.now);
  // Redemption on the same ledger: the "chain" reports what the event resolved to, as its oracle would.
  const chain = new LedgerRelayer({
    standin,
    factory: REDEMPTION_CONTRACTS.walletFactory,
    tokensOf: async (conditionId) => {
      const band = await bandByCondition(conditionId);
      return band?.venue.tokenId && band.venue.noTokenId ? { yes: band.venue.tokenId, no: band.venue.noTokenId } : undefined;
    },
    payouts: async (conditionId) => {
      const band = await bandByCondition(conditionId);
      if (!band) return null;
      const [event] = await database.db.select({ status: events.status, winner: events.resolvedBandIndex }).from(events).where(eq(events.id, band.eventId));
      if (event?.status === 'voided') return { numerators: [1n, 1n], denominator: 2n };
      if (event?.status !== 'resolved' || event.winner === null) return null;
      // A band's market pays Yes when its band wins; a ladder's "above" market when the winner is its band or higher.
      const yes = band.event.structure === 'ladder' ? event.winner >= band.bandIndex : band.bandIndex === event.winner;
      return { numerators: yes ? [1n, 0n] : [0n, 1n], denominator: 1n };
    },
  }).start();
  const venue = new PolymarketVenue({
    db: database.db,
    now: options.now,
    http: new ClobHttp({ baseUrl: standin.url, timeoutMs: config.venueTimeoutMs, now: options.now, backoffMs: () => 20 }),
    tokens,
    // The stand-in's holdings play the chain here; tests/venues/polymarket-chain.test.ts reads a real EVM.
    positions: {
      balancesOf: async (owner: string, refs: { tokenId: string }[]) => new Map(refs.map((r) => [r.tokenId, BigInt(standin.held(owner, r.tokenId))])),
    },
    redeemer: new Redeemer({
      db: database.db,
      tokens,
      now: options.now,
      chain,
      relayer: new RelayerHttp({ baseUrl: chain.url, builder: { apiKey: 'builder', secret: 'c2VjcmV0', passphrase: 'pass' }, factory: REDEMPTION_CONTRACTS.walletFactory, timeoutMs: config.venueTimeoutMs, now: options.now }),
      waitMs: 2000,
      pollMs: 10,
    }),
  });
  const t = await createTestApp({ ...env, VENUE: 'polymarket', POLYMARKET_CLOB_URL: standin.url }, { ...options, database, venue: options.wrap ? options.wrap(venue) : venue });
  const close = t.close;
  t.close = async () => {
    chain.stop();
    if (!options.standin && !options.keepStandin) standin.stop();
    await close();
    if (!options.database) await database.close();
  };
  standins.set(t, standin);
  ledgers.set(t, standinLedger(standin, database, ourTokenOf, config.paper.startingBalanceMicros));
  return t;
}

function paperLedger(t: TestApp, startingMicros: number): VenueLedger {
  const db = t.database.db;
  // A paper account is its owner's (account, user), whatever API key the user stored.
  const owned = (table: typeof paperAccounts | typeof paperHoldings | typeof paperOrders, who: TraderRef) =>
    and(eq(table.accountId, who.account.accountId), eq(table.userId, who.userId));
  return {
    startingMicros,
    enrol: (userId) => ({ apiKey: `paper-${userId}`, secret: 'c2VjcmV0', passphrase: 'pass' }),
    authorise: () => {},
    collateral: async (who) => {
      const [row] = await db.select().from(paperAccounts).where(owned(paperAccounts, who));
      return row?.collateralMicros ?? startingMicros;
    },
    holdings: async (who) => {
      const rows = await db.select().from(paperHoldings).where(owned(paperHoldings, who));
      return new Map(rows.filter((r) => r.sharesMicros > 0).map((r) => [r.tokenId, r.sharesMicros]));
    },
    fills: async (who) => {
      const rows = await db.select().from(paperOrders).where(owned(paperOrders, who));
      return new Map(rows.filter((r) => r.filledMicros > 0).map((r) => [r.clientOrderId, { filledMicros: r.filledMicros, notionalMicros: r.notionalMicros }]));
    },
    setHoldings: async (who, holdings) => {
      await db.delete(paperHoldings).where(owned(paperHoldings, who));
      for (const [tokenId, sharesMicros] of holdings) await db.insert(paperHoldings).values({ accountId: who.account.accountId, userId: who.userId, tokenId, sharesMicros });
    },
    close: () => {},
  };
}

function standinLedger(standin: ClobStandin, database: TestDatabase, bandByToken: Map<string, string>, startingMicros: number): VenueLedger {
  const wallet = (who: TraderRef) => who.credentials.walletAddress ?? who.userId;
  return {
    startingMicros,
    enrol: (userId) => {
      const credentials = {
        apiKey: crypto.randomUUID(),
        secret: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url'),
        passphrase: Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('hex'),
      };
      standin.register({ ...credentials, wallet: userId as `0x${string}` });
      return credentials;
    },
    authorise: (userId, signer) => {
      if (signer) standin.authorise(userId, signer);
    },
    collateral: async (who) => standin.collateral.get(wallet(who)) ?? startingMicros,
    holdings: async (who) => {
      const held = standin.holdings.get(wallet(who)) ?? new Map<string, number>();
      return new Map([...held].filter(([, v]) => v > 0).map(([token, v]) => [bandByToken.get(token) ?? token, v]));
    },
    fills: async (who) => {
      // The CLOB knows orders by hash; our adapter's table maps them back to our order ids.
      const rows = await database.db.select().from(polymarketOrders).where(eq(polymarketOrders.apiKey, who.credentials.apiKey));
      const ours = new Map(rows.filter((r) => r.orderHash).map((r) => [r.orderHash!.toLowerCase(), r.clientOrderId]));
      const out = new Map<string, { filledMicros: number; notionalMicros: number }>();
      for (const order of standin.orders.values()) {
        if (order.owner !== who.credentials.apiKey || order.matchedMicros === 0) continue;
        out.set(ours.get(order.id) ?? order.id, { filledMicros: order.matchedMicros, notionalMicros: order.notionalMicros });
      }
      return out;
    },
    setHoldings: async (who, holdings) => {
      const venueToken = new Map([...bandByToken].map(([venue, ours]) => [ours, venue]));
      standin.holdings.set(wallet(who), new Map([...holdings].map(([ours, v]) => [venueToken.get(ours) ?? tokenIdFor(ours), v])));
    },
    close: () => standin.stop(),
  };
}
