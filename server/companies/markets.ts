/**
 * A company's markets: the listed valuation events linked to it (`events.company_source_id`), each
 * with the implied valuation and the LONG and SHORT costs that GET /api/trading/valuation/all answers
 * for it from the same market-data snapshot (docs/companies.md "Markets").
 *
 * They are read from the snapshot on every request and never go into the dataset-version cache
 * (aggregate-cache.ts): that lives as long as the dataset does, these change with every snapshot.
 */
import { and, asc, eq } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { events } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import type { EventWithBands } from '../events/queries.ts';
import type { MarketSnapshot } from '../market/market-data.ts';
import { allValuations } from '../market/valuation-view.ts';
import { DEFAULT_FLOORS } from '../valuation/index.ts';
import { companyDetail } from './answers.ts';
import { companyAsOf } from './point-in-time.ts';
import type { Company } from './queries.ts';

export interface CompanyMarket {
  eventId: string;
  status: EventWithBands['status'];
  /** Billions of USD, as the valuation routes give it; null when it cannot be computed. */
  impliedValuation: number | null;
  /** USD per $1 of exposure at the default floors; null when the event has no prices. */
  longCost: number | null;
  shortCost: number | null;
  /** The snapshot's time; null when no snapshot could be read (the venue did not answer). */
  updatedAt: string | null;
}

/** What the markets need of the market data (MarketData): the current snapshot if fresh, or a new one. */
export interface MarketSource {
  fresh(): MarketSnapshot | undefined;
  snapshot(): Promise<MarketSnapshot>;
}

/** The listed events linked to a company, as stored now, in the snapshot's order (by id). */
function listedEventsOf(db: Db, sourceId: string) {
  return db
    .select({ id: events.id, status: events.status })
    .from(events)
    .where(and(eq(events.companySourceId, sourceId), eq(events.listing, 'listed')))
    .orderBy(asc(events.id));
}

/**
 * Whether any band of the event has a price in the snapshot (a bid, an ask or a last trade). Without
 * one the quote would only be made of the empty-book defaults (bid 0, ask 1), not of the market.
 */
const isPriced = (e: EventWithBands, snapshot: MarketSnapshot) =>
  e.bands.some((b) => {
    const book = snapshot.books.get(b.id);
    return !!book && (book.bids.length > 0 || book.asks.length > 0 || book.lastTradeMicros !== null);
  });

function marketOf(e: EventWithBands, snapshot: MarketSnapshot): CompanyMarket {
  const updatedAt = snapshot.fetchedAt.toISOString();
  if (!isPriced(e, snapshot)) return { eventId: e.id, status: e.status, impliedValuation: null, longCost: null, shortCost: null, updatedAt };
  // The /valuation/all computation itself, on a view of the snapshot holding only this event.
  const v = allValuations({ ...snapshot, events: [e] }, DEFAULT_FLOORS)[0]!;
  return { eventId: e.id, status: e.status, impliedValuation: v.impliedValuation, longCost: v.longCost, shortCost: v.shortCost, updatedAt: v.updatedAt };
}

/**
 * The company's markets, from the current snapshot. When the snapshot has expired, the database says
 * first whether the company has any listed event, so a company without one never waits for the
 * venue's books; and when the venue does not answer, its listed events come back without numbers
 * rather than the company read failing.
 */
export async function companyMarkets(db: Db, marketData: MarketSource, sourceId: string): Promise<CompanyMarket[]> {
  let snapshot = marketData.fresh();
  if (!snapshot) {
    const stored = await listedEventsOf(db, sourceId);
    if (!stored.length) return [];
    try {
      snapshot = await marketData.snapshot();
    } catch (error) {
      if (!(error instanceof ApiError && error.apiCode === 'VENUE_UNAVAILABLE')) throw error;
      return stored.map((e) => ({ eventId: e.id, status: e.status, impliedValuation: null, longCost: null, shortCost: null, updatedAt: null }));
    }
  }
  const current = snapshot;
  return current.events.filter((e) => e.companySourceId === sourceId).map((e) => marketOf(e, current));
}

/** The detail answer (answers.ts) with the company's markets, read now: never kept with the record. */
export async function companyDetailWithMarkets(db: Db, marketData: MarketSource, company: Company) {
  return { ...companyDetail(company), markets: await companyMarkets(db, marketData, company.sourceId) };
}

/**
 * The detail answer as it is now or as it stood on `asOf` (point-in-time.ts), with its markets: always
 * the current ones (live market data, not facts of the record). 404 for a company founded after the day.
 */
export async function companyDetailAt(db: Db, marketData: MarketSource, company: Company, asOf: string | undefined) {
  if (asOf === undefined) return { ...(await companyDetailWithMarkets(db, marketData, company)), asOf: null };
  const then = companyAsOf(company, asOf);
  if (!then) throw new ApiError('NOT_FOUND', `${company.name} did not exist yet on ${asOf} (founded ${company.foundedYear})`);
  return { ...(await companyDetailWithMarkets(db, marketData, then)), asOf };
}
