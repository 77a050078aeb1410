/**
 * The paper venue (decisions §8): an in-process exchange whose books are a pure function of a seed,
 * each token's reference price and the time. Around the (optionally drifting) reference price it
 * quotes five levels a side, one tick apart, with sizes growing away from the top, so large orders
 * walk the book. Tick 0.01; minimum order 5 shares.
 */
import type { Db } from '../../db/client.ts';
import { ApiError } from '../errors.ts';
import type { VenueRules } from '../valuation/index.ts';
import { cancelPaperOrder, ensurePaperAccount, findPaperOrder, paperCollateral, paperTokenBalances, placePaperOrder } from './paper-ledger.ts';
import type { MarketableOrder, OrderBook, Venue, VenueCredentials, VenueOrder, VenueOwner } from './venue.ts';

/** The one API key the paper venue refuses, so INVALID_CREDENTIALS can be tested end to end. */
export const PAPER_REFUSED_API_KEY = 'paper-refused';

export const PAPER_RULES: VenueRules = { shareStepMicros: 10_000, minOrderMicros: 5_000_000 };
const TICK = 10_000; // 0.01 in micro-USD
const LEVELS = 5;
const MIN_PRICE = TICK;
const MAX_PRICE = 1_000_000 - TICK;
/** Paper account owners remembered as opened (forgotten all at once beyond this; reopening is harmless). */
const MAX_REMEMBERED_ACCOUNTS = 100_000;
/** One drift cycle: a day. */
const DRIFT_PERIOD_MS = 86_400_000;

/** FNV-1a over the seed and a string: a stable 32-bit hash. */
export function stableHash(seed: number, text: string): number {
  let h = (2166136261 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619) >>> 0;
  }
  return h;
}

export interface PaperVenueOptions {
  /** Where the paper ledger lives; without it the venue only serves order books. */
  db?: Db;
  /** Collateral a new paper account starts with, in micro-USD. */
  startingBalanceMicros?: number;
  seed: number;
  /** Amplitude of the price drift (0 = none): the reference price moves by up to ± this much. */
  drift: number;
  /** Reference prices of the tokens (the events' seed prices). */
  referencePrices: (tokenIds: string[]) => Promise<Map<string, number>>;
  now?: () => number;
}

export class PaperVenue implements Venue {
  readonly name = 'paper' as const;
  readonly rules = PAPER_RULES;
  readonly usesSessionKeys = false;
  private now: () => number;
  private opened = new Set<string>();

  constructor(private options: PaperVenueOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The reference price after drift, on the tick grid, within [0.01, 0.99]. */
  midMicros(tokenId: string, reference: number): number {
    const phase = ((stableHash(this.options.seed, tokenId) % 3600) / 3600) * 2 * Math.PI;
    const drifted = reference + this.options.drift * Math.sin((2 * Math.PI * this.now()) / DRIFT_PERIOD_MS + phase);
    const onGrid = Math.round((drifted * 1e6) / TICK) * TICK;
    return Math.min(MAX_PRICE, Math.max(MIN_PRICE, onGrid));
  }

  book(tokenId: string, reference: number | undefined): OrderBook {
    if (reference === undefined) return { tokenId, bids: [], asks: [], lastTradeMicros: null, tickMicros: TICK };
    const mid = this.midMicros(tokenId, reference);
    // 100–499 shares at the top, growing by that much per level away from it.
    const baseShares = 100 + (stableHash(this.options.seed, `size:${tokenId}`) % 400);
    const bids = [];
    const asks = [];
    for (let level = 0; level < LEVELS; level++) {
      const sizeMicros = baseShares * (level + 1) * 1_000_000;
      const bid = mid - TICK * (level + 1);
      const ask = mid + TICK * (level + 1);
      if (bid >= MIN_PRICE) bids.push({ priceMicros: bid, sizeMicros });
      if (ask <= MAX_PRICE) asks.push({ priceMicros: ask, sizeMicros });
    }
    return { tokenId, bids, asks, lastTradeMicros: mid, tickMicros: TICK };
  }

  async getOrderBooks(tokenIds: string[]): Promise<Map<string, OrderBook>> {
    const references = await this.options.referencePrices(tokenIds);
    return new Map(tokenIds.map((id) => [id, this.book(id, references.get(id))]));
  }

  async checkCredentials(credentials: VenueCredentials): Promise<void> {
    if (credentials.apiKey === PAPER_REFUSED_API_KEY) throw new ApiError('INVALID_CREDENTIALS', 'The venue refused these credentials');
  }

  /**
   * The paper account of the credentials' owner, opened with the starting balance on first use. The
   * API key never names it: tenants who store the same key (the README's example invites it) must
   * not see or spend each other's paper money.
   */
  private async account(credentials: VenueCredentials): Promise<{ db: Db; owner: VenueOwner }> {
    await this.checkCredentials(credentials);
    const db = this.options.db;
    if (!db) throw new Error('this paper venue has no ledger database');
    const owner = credentials.owner;
    if (!owner) throw new Error('the paper venue needs the owner of the credentials (openCredentials fills it in)');
    // Opened once per owner and process: every order otherwise paid one more round trip for an
    // insert that did nothing. Paper accounts are never deleted, so an owner seen here stays opened.
    const remembered = `${owner.accountId}\n${owner.userId}`;
    if (!this.opened.has(remembered)) {
      await ensurePaperAccount(db, owner, this.options.startingBalanceMicros ?? 0);
      if (this.opened.size >= MAX_REMEMBERED_ACCOUNTS) this.opened.clear();
      this.opened.add(remembered);
    }
    return { db, owner };
  }

  async placeOrder(credentials: VenueCredentials, order: MarketableOrder): Promise<VenueOrder> {
    const { db, owner } = await this.account(credentials);
    const book = (await this.getOrderBooks([order.tokenId])).get(order.tokenId)!;
    try {
      return await placePaperOrder(db, owner, book, order, this.rules);
    } catch (error) {
      // The same client order id placed concurrently: the other placement won; report its result.
      const existing = await findPaperOrder(db, owner, order.clientOrderId);
      if (existing) return existing;
      throw error;
    }
  }

  async getOrder(credentials: VenueCredentials, clientOrderId: string) {
    const { db, owner } = await this.account(credentials);
    return findPaperOrder(db, owner, clientOrderId);
  }

  async cancelOrder(credentials: VenueCredentials, clientOrderId: string) {
    const { db, owner } = await this.account(credentials);
    return cancelPaperOrder(db, owner, clientOrderId);
  }

  async getCollateral(credentials: VenueCredentials) {
    const { db, owner } = await this.account(credentials);
    return paperCollateral(db, owner);
  }

  async getTokenBalances(credentials: VenueCredentials, tokenIds: string[]) {
    const { db, owner } = await this.account(credentials);
    return paperTokenBalances(db, owner, tokenIds);
  }
}
