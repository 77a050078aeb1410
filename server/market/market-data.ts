/**
 * Market data: every event with its bands and the books of all their tokens, as one snapshot that is
 * reused for MARKET_DATA_TTL_MS. Concurrent requests share one refresh, so however many requests
 * arrive, the venue sees at most one round trip per period (and the database one read of events).
 */
import type { Db } from '../../db/client.ts';
import { listEvents, type EventWithBands } from '../events/queries.ts';
import { isLadder, tokensOf } from '../events/tokens.ts';
import { ladderBandBooks } from '../valuation/index.ts';
import type { OrderBook, Venue } from '../venues/venue.ts';

export interface MarketSnapshot {
  events: EventWithBands[];
  /**
   * By token id: every token the events trade (a band's; a ladder threshold's Yes and No), and by
   * band id a ladder band's book derived from its thresholds (valuation/ladder.ts).
   */
  books: Map<string, OrderBook>;
  fetchedAt: Date;
}

export class MarketData {
  /** `seq`: the number of the refresh that took it (see `started`). */
  private current?: { snapshot: MarketSnapshot; expiresAt: number; seq: number };
  private refreshing?: Promise<MarketSnapshot>;
  /** The number of the refresh in flight (`refreshing`). */
  private refreshingSeq = 0;
  /**
   * Refreshes started so far: each refresh is numbered when it starts, before it asks anything, so
   * "started after this call" is exact (no clock involved: two calls in the same millisecond differ).
   */
  private started = 0;

  constructor(
    private db: Db,
    readonly venue: Venue,
    private ttlMs: number,
    private now: () => number = Date.now,
  ) {}

  async snapshot(): Promise<MarketSnapshot> {
    const fresh = this.fresh();
    if (fresh) return fresh;
    return this.refreshing ?? this.startRefresh();
  }

  /**
   * A snapshot whose refresh started after this call began (the recorder's: every recording is a new
   * look at the books, even two calls within one millisecond), shared with the requests that need one
   * meanwhile. A refresh already in flight started before the call, so it is waited for (one round trip
   * at a time) and then a new one is started — unless someone else started one meanwhile, which is
   * joined. `fetchedAt` still says when the venue answered (the time shown to clients); the comparison
   * is on the refreshes' start order.
   */
  async refreshed(): Promise<MarketSnapshot> {
    const asked = this.started;
    while (this.refreshing) {
      if (this.refreshingSeq > asked) return this.refreshing;
      await this.refreshing.catch(() => undefined);
    }
    if (this.current && this.current.seq > asked) return this.current.snapshot;
    return this.startRefresh();
  }

  private startRefresh(): Promise<MarketSnapshot> {
    const seq = ++this.started;
    this.refreshingSeq = seq;
    const refreshing = this.refresh(seq).finally(() => {
      if (this.refreshing === refreshing) this.refreshing = undefined;
    });
    this.refreshing = refreshing;
    return refreshing;
  }

  /** How old the latest snapshot is, by this instance's clock (undefined before the first); for the metrics. */
  ageMs(): number | undefined {
    return this.current && this.now() - this.current.snapshot.fetchedAt.getTime();
  }

  /** The latest snapshot, expired or not (undefined before the first). */
  latest(): MarketSnapshot | undefined {
    return this.current?.snapshot;
  }

  /** The current snapshot if it has not expired (synchronously: the cheapest answers need no promise). */
  fresh(): MarketSnapshot | undefined {
    return this.current && this.now() < this.current.expiresAt ? this.current.snapshot : undefined;
  }

  private async refresh(seq: number): Promise<MarketSnapshot> {
    const events = await listEvents(this.db);
    const books = withLadderBands(events, await this.venue.getOrderBooks(events.flatMap((e) => tokensOf(e).map((t) => t.id))));
    const snapshot = { events, books, fetchedAt: new Date(this.now()) };
    this.current = { snapshot, expiresAt: this.now() + this.ttlMs, seq };
    return snapshot;
  }
}

/** The venue's books plus, for each ladder event, its bands' books derived from the thresholds' Yes books. */
export function withLadderBands(events: EventWithBands[], books: Map<string, OrderBook>): Map<string, OrderBook> {
  for (const event of events) {
    if (!isLadder(event)) continue;
    const tokens = tokensOf(event).filter((t) => t.outcome === 'yes');
    const derived = ladderBandBooks(tokens.map((t) => books.get(t.id)));
    event.bands.forEach((band, i) => books.set(band.id, { tokenId: band.id, ...derived[i]! }));
  }
  return books;
}
