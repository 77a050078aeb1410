/**
 * What the service needs from a prediction-market venue. The paper venue and (issue #6) Polymarket
 * implement it; nothing above this interface knows which one runs. Prices and sizes are integers:
 * micro-USD per share and micro-shares.
 */
import type { BookLevel, VenueRules } from '../valuation/index.ts';

export interface OrderBook {
  tokenId: string;
  /** Best first: bids descending, asks ascending. */
  bids: BookLevel[];
  asks: BookLevel[];
  lastTradeMicros: number | null;
  tickMicros: number;
}

export interface Venue {
  readonly name: 'paper' | 'polymarket';
  readonly rules: VenueRules;
  /** Books for many tokens in one round trip. Unknown tokens come back with empty sides. */
  getOrderBooks(tokenIds: string[]): Promise<Map<string, OrderBook>>;
}

/** Best bid (0 when none) and best ask (1 when none) as prices, per decisions §6. */
export function topOfBook(book: OrderBook | undefined) {
  return {
    bid: book?.bids[0] ? book.bids[0].priceMicros / 1e6 : 0,
    ask: book?.asks[0] ? book.asks[0].priceMicros / 1e6 : 1,
    lastTrade: book?.lastTradeMicros != null ? book.lastTradeMicros / 1e6 : null,
  };
}
