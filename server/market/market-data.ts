/**
 * Market data: every event with its bands and the books of all their tokens, as one snapshot that is
 * reused for MARKET_DATA_TTL_MS. Concurrent requests share one refresh, so however many requests
 * arrive, the venue sees at most one round trip per period (and the database one read of events).
 */
import type { Db } from '../../db/client.ts';
import { listEvents, type EventWithBands } from '../events/queries.ts';
import type { OrderBook, Venue } from '../venues/venue.ts';

export interface MarketSnapshot {
  events: EventWithBands[];
  books: Map<string, OrderBook>;
  fetchedAt: Date;
}

export class MarketData {
  private current?: { snapshot: MarketSnapshot; expiresAt: number };
  private refreshing?: Promise<MarketSnapshot>;

  constructor(
    private db: Db,
    readonly venue: Venue,
    private ttlMs: number,
    private now: () => number = Date.now,
  ) {}

  async snapshot(): Promise<MarketSnapshot> {
    const fresh = this.fresh();
    if (fresh) return fresh;
    this.refreshing ??= this.refresh().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /**
   * A snapshot taken no earlier than this call (the recorder's: every recording is a new look at the
   * books), shared with the requests that need one meanwhile.
   */
  async refreshed(): Promise<MarketSnapshot> {
    const requestedAt = this.now();
    const current = this.fresh();
    if (current && current.fetchedAt.getTime() >= requestedAt) return current;
    if (this.refreshing) {
      const pending = await this.refreshing;
      if (pending.fetchedAt.getTime() >= requestedAt) return pending;
    }
    this.refreshing ??= this.refresh().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** The current snapshot if it has not expired (synchronously: the cheapest answers need no promise). */
  fresh(): MarketSnapshot | undefined {
    return this.current && this.now() < this.current.expiresAt ? this.current.snapshot : undefined;
  }

  private async refresh(): Promise<MarketSnapshot> {
    const events = await listEvents(this.db);
    const books = await this.venue.getOrderBooks(events.flatMap((e) => e.bands.map((b) => b.id)));
    const snapshot = { events, books, fetchedAt: new Date(this.now()) };
    this.current = { snapshot, expiresAt: this.now() + this.ttlMs };
    return snapshot;
  }
}
