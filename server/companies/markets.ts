/**
 * A company's markets: the listed valuation events linked to it (`events.company_source_id`), each
 * with the implied valuation and the LONG and SHORT costs that GET /api/trading/valuation/all answers
 * for it from the same market-data snapshot (docs/companies.md "Markets").
 *
 * They are read from the snapshot of the request and never go into the dataset-version caches
 * (aggregate-cache.ts, answer-cache.ts): those live as long as the dataset does, these change with
 * every snapshot; a detail answer is made of the two (detailAnswer).
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
import { deepFreeze, markReusable } from '../lib/reusable-json.ts';
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
  latest(): MarketSnapshot | undefined;
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

/** The record part of a detail answer (answers.ts), as it is now or as it stood on `asOf` (point-in-time.ts). 404 for a company founded after the day. */
export function recordDetailAt(company: Company, asOf: string | undefined) {
  if (asOf === undefined) return { ...companyDetail(company), asOf: null };
  const then = companyAsOf(company, asOf);
  if (!then) throw new ApiError('NOT_FOUND', `${company.name} did not exist yet on ${asOf} (founded ${company.foundedYear})`);
  return { ...companyDetail(then), asOf };
}

type RecordDetail = ReturnType<typeof recordDetailAt>;
export type DetailAnswer = RecordDetail & { markets: CompanyMarket[] };

/** Answers made from a kept record (answer-cache.ts), one per record and snapshot, so each is validated and serialized once. */
const withoutMarkets = new WeakMap<object, DetailAnswer>();
const withSnapshot = new WeakMap<object, { snapshot: MarketSnapshot; answer: DetailAnswer }>();

/**
 * The detail answer: the record with the company's markets, always the current ones (live market
 * data, not facts of the record). From a fresh snapshot the answer is one object per record and
 * snapshot — for a company without a listed event (nearly all) one per record: `markets: []` — kept
 * frozen and reusable; without one, the markets are read now (companyMarkets). Between two snapshots
 * (the last one expired, the next not taken yet) a company that had no listed event in the last one
 * is answered without markets at once: an event listed for it since shows from the next snapshot, a
 * few seconds later, as it does on the market routes.
 */
export async function detailAnswer(db: Db, marketData: MarketSource, record: RecordDetail): Promise<DetailAnswer> {
  const latest = marketData.latest();
  const snapshot = marketData.fresh() ?? (latest && !latest.events.some((e) => e.companySourceId === record.sourceId) ? latest : undefined);
  if (!snapshot) return { ...record, markets: await companyMarkets(db, marketData, record.sourceId) };
  const linked = snapshot.events.filter((e) => e.companySourceId === record.sourceId);
  if (!linked.length) {
    let answer = withoutMarkets.get(record);
    if (!answer) withoutMarkets.set(record, (answer = markReusable(deepFreeze({ ...record, markets: [] }))));
    return answer;
  }
  const kept = withSnapshot.get(record);
  if (kept?.snapshot === snapshot) return kept.answer;
  const answer: DetailAnswer = markReusable(deepFreeze({ ...record, markets: linked.map((e) => marketOf(e, snapshot)) }));
  withSnapshot.set(record, { snapshot, answer });
  return answer;
}
