/**
 * One set of event ids for every route that takes one (valuation `eventSlug`, buy and quote
 * `eventId`, the positions, history and settlements filters): an event answers to our id, the
 * venue's event slug, and its aliases (seeds/events/events.json `aliases`, e.g. the docs'
 * `spacex-ipo`). Routes answer with our (canonical) id. The seeds refuse an id that would name two
 * events; should the venue's slug ever equal another event's id, our id wins, then the slug.
 *
 * Two ways in, one rule: `resolveEvent` over a list of events already in hand (the market-data
 * snapshot), and `canonicalEventId` for a filter, which uses the current snapshot when there is one
 * and otherwise one indexed query, so a history or positions filter never waits for the venue's books.
 */
import { and, desc, eq, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { events } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';

// Below queries.ts (which uses eventsNamed) and market/market-data.ts (whose snapshot canonicalEventId
// reads): it names neither, only the columns it needs and the one method of the snapshot it calls.
type Identified = Pick<typeof events.$inferSelect, 'id' | 'venue' | 'aliases'>;

/** What canonicalEventId needs of the services: the market-data snapshot if fresh (MarketData.fresh), and the database. */
export interface EventLookup {
  marketData: { fresh(): { events: readonly Identified[] } | undefined };
  database: { db: Db };
}

export const unknownEvent = (ref: string, param: string) => new ApiError('NOT_FOUND', `${param}: no event ${ref}; GET /api/trading/events lists them`);

/** Built once per events list (the snapshot's list is replaced, never changed, on refresh). */
const indexes = new WeakMap<readonly Identified[], Map<string, Identified>>();

function indexOf<E extends Identified>(list: readonly E[]): Map<string, E> {
  let index = indexes.get(list) as Map<string, E> | undefined;
  if (!index) {
    index = new Map();
    // Weakest first, so that a slug overrides an alias and our id overrides both.
    for (const e of list) for (const alias of e.aliases) index.set(alias, e);
    for (const e of list) if (e.venue.eventSlug) index.set(e.venue.eventSlug, e);
    for (const e of list) index.set(e.id, e);
    indexes.set(list, index);
  }
  return index;
}

/** The event `ref` names in `list`, or 404 NOT_FOUND naming `param` and `ref`. */
export function resolveEvent<E extends Identified>(list: readonly E[], ref: string, param = 'eventId'): E {
  const found = indexOf(list).get(ref);
  if (!found) throw unknownEvent(ref, param);
  return found;
}

/** The SQL form of the same rule, best match first (our id, then the venue slug, then an alias). */
export function eventsNamed(ref: string) {
  const bySlug = sql`${events.venue}->>'eventSlug' = ${ref}`;
  return {
    where: or(eq(events.id, ref), bySlug, sql`${ref} = any(${events.aliases})`),
    order: [desc(sql`${events.id} = ${ref}`), desc(sql`coalesce(${bySlug}, false)`)],
  };
}

/** Our id for `ref` from the database (among listed events only, or all for the operator's tools), or 404 NOT_FOUND naming `param`. */
export async function resolveEventId(db: Db, ref: string, param = 'eventId', which: 'listed' | 'all' = 'all'): Promise<string> {
  const named = eventsNamed(ref);
  const [row] = await db
    .select({ id: events.id })
    .from(events)
    .where(which === 'listed' ? and(named.where, eq(events.listing, 'listed')) : named.where)
    .orderBy(...named.order)
    .limit(1);
  if (!row) throw unknownEvent(ref, param);
  return row.id;
}

/**
 * Our id for a customer's filter `ref`: from the current market-data snapshot if there is one, else
 * the database; listed events only either way (the snapshot holds only those).
 */
export function canonicalEventId(services: EventLookup, ref: string, param = 'eventId'): Promise<string> | string {
  const snapshot = services.marketData.fresh();
  return snapshot ? resolveEvent(snapshot.events, ref, param).id : resolveEventId(services.database.db, ref, param, 'listed');
}
