/**
 * The paper venue (docs/decisions.md §8): an in-process exchange whose books (paper-book.ts) are a pure
 * function of a seed, each token's reference price and the time, shaped like the live venue's
 * (Polymarket's tick rule, depth sized in dollars). Minimum order 5 shares, share step 0.01.
 */
import type { Db } from '../../db/client.ts';
import { ApiError } from '../errors.ts';
import type { VenueRules } from '../valuation/index.ts';
import { ladderTokenId, parseLadderTokenId } from '../valuation/index.ts';
import { mirrorBook, paperBook, type TickRule } from './paper-book.ts';
import { cancelPaperOrder, ensurePaperAccount, findPaperOrder, paperCollateral, paperTokenBalances, payPaperSettlement, placePaperOrders, resetPaperAccount, type PricedPaperOrder } from './paper-ledger.ts';
import { coalescedBy } from '../lib/coalesce.ts';
import type { MarketableOrder, OrderBook, Redemption, Venue, VenueCredentials, VenueOrder, VenueOwner } from './venue.ts';

/** The one API key the paper venue refuses, so INVALID_CREDENTIALS can be tested end to end. */
export const PAPER_REFUSED_API_KEY = 'paper-refused';

export const PAPER_RULES: VenueRules = { shareStepMicros: 10_000, minOrderMicros: 5_000_000 };
/** Paper account owners remembered as opened (forgotten all at once beyond this; reopening is harmless). */
const MAX_REMEMBERED_ACCOUNTS = 100_000;

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
  /** Polymarket's tick rule (default), or 0.01 everywhere. */
  tickRule?: TickRule;
  /**
   * The books orders fill against, in place of the computed ones: test mode on a live server fills
   * its paper orders against the live venue's books (venues/index.ts createTestVenue), without
   * touching them. With them come that venue's rules.
   */
  books?: (tokenIds: string[]) => Promise<Map<string, OrderBook>>;
  rules?: VenueRules;
}

export class PaperVenue implements Venue {
  readonly name = 'paper' as const;
  readonly rules: VenueRules;
  readonly usesSessionKeys = false;
  private now: () => number;
  private opened = new Set<string>();

  constructor(private options: PaperVenueOptions) {
    this.now = options.now ?? Date.now;
    this.rules = options.rules ?? PAPER_RULES;
  }

  book(tokenId: string, reference: number | undefined): OrderBook {
    return paperBook(this.options, tokenId, reference, this.now());
  }

  /** A ladder threshold's No book mirrors its Yes book (mirrorBook); every other token has its own. */
  async getOrderBooks(tokenIds: string[]): Promise<Map<string, OrderBook>> {
    if (this.options.books) return this.options.books(tokenIds);
    const complementOf = (id: string) => {
      const ladder = parseLadderTokenId(id);
      return ladder?.outcome === 'no' ? ladderTokenId(ladder.bandId, 'yes') : undefined;
    };
    const priced = [...new Set(tokenIds.map((id) => complementOf(id) ?? id))];
    const references = await this.options.referencePrices(priced);
    return new Map(
      tokenIds.map((id) => {
        const yes = complementOf(id);
        return [id, yes ? mirrorBook(this.book(yes, references.get(yes)), id) : this.book(id, references.get(id))];
      }),
    );
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

  /**
   * The orders one account sends in the same turn (a buy's or a sale's, one per band) are placed by one
   * statement (placePaperOrders). If it fails, each order is tried alone, so one order's trouble is its
   * own: the same client order id placed concurrently means the other placement won, and its result
   * is reported.
   */
  async placeOrder(credentials: VenueCredentials, order: MarketableOrder): Promise<VenueOrder> {
    const { db, owner } = await this.account(credentials);
    const book = (await this.getOrderBooks([order.tokenId])).get(order.tokenId)!;
    const priced = { order, book };
    try {
      return (await this.placeTogether(`${owner.accountId}\n${owner.userId}`, [priced])).get(priced)!;
    } catch {
      try {
        return (await placePaperOrders(db, owner, [priced], this.rules)).get(priced)!;
      } catch (error) {
        const existing = await findPaperOrder(db, owner, order.clientOrderId);
        if (existing) return existing;
        throw error;
      }
    }
  }

  private placeTogether = coalescedBy<PricedPaperOrder, VenueOrder>((group, priced) => {
    const [accountId, userId] = group.split('\n') as [string, string];
    return placePaperOrders(this.options.db!, { accountId, userId }, priced, this.rules);
  });

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

  async reset(owner: VenueOwner) {
    const db = this.options.db;
    if (!db) throw new Error('this paper venue has no ledger database');
    const collateralMicros = this.options.startingBalanceMicros ?? 0;
    await resetPaperAccount(db, owner, collateralMicros);
    return { collateralMicros };
  }

  /** Pays a settlement from the paper ledger: once per settlement id, whoever asks and however often. */
  async redeem(redemption: Redemption) {
    const db = this.options.db;
    if (!db) throw new Error('this paper venue has no ledger database');
    await payPaperSettlement(db, redemption);
    return { txHash: null };
  }
}
