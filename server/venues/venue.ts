/**
 * What the service needs from a prediction-market venue. The paper venue and Polymarket
 * implement it; nothing above this interface knows which one runs. Prices and sizes are integers:
 * micro-USD per share and micro-shares.
 */
import { microsToUsd } from '../lib/money.ts';
import type { BookLevel, VenueRules } from '../valuation/index.ts';

export interface OrderBook {
  tokenId: string;
  /** Best first: bids descending, asks ascending. */
  bids: BookLevel[];
  asks: BookLevel[];
  lastTradeMicros: number | null;
  tickMicros: number;
}

/** The trading user a venue call is made for. */
export interface VenueOwner {
  accountId: string;
  userId: string;
}

/** The caller's stored venue credentials (decrypted only for the call). */
export interface VenueCredentials {
  apiKey: string;
  secret: string;
  passphrase: string;
  /** Live venue: the per-user session key (hex private key) that signs orders; sealed with the rest. */
  sessionKey?: `0x${string}`;
  /** Live venue: the user's funding wallet (settings walletAddress), filled in when opened. */
  walletAddress?: string | null;
  /**
   * Whose credentials these are, filled in when opened. The paper venue keeps one account per owner
   * (docs/decisions.md §8), never per API key: two tenants may store the same key. A live venue ignores it
   * (its accounts are the credentials themselves).
   */
  owner?: VenueOwner;
}

export type OrderSide = 'BUY' | 'SELL';
export type VenueOrderStatus = 'PENDING' | 'MATCHED' | 'CANCELLED' | 'REJECTED';

export interface MarketableOrder {
  /** Ours, unique per venue account: placing the same id again returns the first order. */
  clientOrderId: string;
  tokenId: string;
  side: OrderSide;
  sharesMicros: number;
  /** Worst acceptable price: BUY pays at most this, SELL takes at least this. */
  limitPriceMicros: number;
  /** FOK: all or nothing. FAK: fill what the book allows now, cancel the rest. */
  timeInForce: 'FOK' | 'FAK';
}

export interface VenueOrder {
  venueOrderId: string;
  clientOrderId: string;
  tokenId: string;
  side: OrderSide;
  status: VenueOrderStatus;
  requestedMicros: number;
  filledMicros: number;
  /** USD paid (BUY) or received (SELL) for the filled shares. */
  notionalMicros: number;
  feesMicros: number;
  /** Why a REJECTED order was refused: `insufficient-balance`, `insufficient-shares`, `no-liquidity`, `below-minimum`, `invalid`. */
  reason: string | null;
  /** The settlement transaction, where the venue reports one (none on the paper venue). */
  txHash?: string | null;
}

/** Paying out a settled position (server/trading/settlement.ts): its tokens back, its proceeds out. */
export interface Redemption {
  /** Our settlement id: a venue pays each at most once, however often it is asked. */
  settlementId: string;
  /** Whose position it was: the paper venue pays this owner's paper account. */
  owner: VenueOwner;
  /** Every band token the position held, winners and losers. */
  holdings: { tokenId: string; sharesMicros: number }[];
  /** The bands whose shares pay (the winner; every band of a voided event): what a live venue redeems. */
  payingTokenIds: string[];
  /** Winning shares × $1, in micro-USD. */
  payoutMicros: number;
}

export interface Venue {
  readonly name: 'paper' | 'polymarket';
  readonly rules: VenueRules;
  /** Orders are signed by a per-user session key the service generates (settings report its address). */
  readonly usesSessionKeys: boolean;
  /** Books for many tokens in one round trip. Unknown tokens come back with empty sides. */
  getOrderBooks(tokenIds: string[]): Promise<Map<string, OrderBook>>;
  /** Throws ApiError INVALID_CREDENTIALS when the venue refuses them. */
  checkCredentials(credentials: VenueCredentials): Promise<void>;
  placeOrder(credentials: VenueCredentials, order: MarketableOrder): Promise<VenueOrder>;
  /** The venue's current view of an order we placed (by our client order id). */
  getOrder(credentials: VenueCredentials, clientOrderId: string): Promise<VenueOrder | null>;
  cancelOrder(credentials: VenueCredentials, clientOrderId: string): Promise<VenueOrder | null>;
  /** Stablecoin collateral available to trade, in micro-USD. */
  getCollateral(credentials: VenueCredentials): Promise<number>;
  /**
   * Shares of each token held by the wallet, in micro-shares (tokens not held are 0). A live venue
   * reads the chain at `walletAddress`; the paper venue answers from its ledger for the credentials' owner.
   */
  getTokenBalances(credentials: VenueCredentials, tokenIds: string[], walletAddress?: string): Promise<Map<string, number>>;
  /**
   * Pays a settled position, idempotently by `redemption.settlementId`; answers the transaction hash
   * where there is one (null on the paper venue). A venue without it leaves settlements unpaid
   * (their `paidAt` stays null) until it has one: live redemption on chain is not built yet.
   * `credentials` opens the owner's stored credentials, for a venue that must sign (the paper venue
   * does not call it: a user who has since deleted their credentials is still paid).
   */
  redeem?(redemption: Redemption, credentials: () => Promise<VenueCredentials>): Promise<{ txHash: string | null }>;
  /** The owner's account as new, with the starting balance (the paper venue: test mode's reset). */
  reset?(owner: VenueOwner): Promise<{ collateralMicros: number }>;
}

/** Best bid (0 when none) and best ask (1 when none) as prices, per docs/decisions.md §6. */
export function topOfBook(book: OrderBook | undefined) {
  return {
    bid: book?.bids[0] ? microsToUsd(book.bids[0].priceMicros) : 0,
    ask: book?.asks[0] ? microsToUsd(book.asks[0].priceMicros) : 1,
    lastTrade: book?.lastTradeMicros != null ? microsToUsd(book.lastTradeMicros) : null,
  };
}
