/**
 * The market universe (docs/decisions.md §6, "The market universe"): events discovered among the
 * venue's IPO markets join the list once, and an operator decides what customers see.
 *
 *  - `addDiscoveredEvents` writes the records a discovery pass recognised and the database does not
 *    know yet (by the venue's event id or slug), under one advisory lock, so passes running at once
 *    on several instances list each event once. Each gets an id of its own (unique among every id,
 *    slug and alias) and is `listed` at once (EVENT_AUTO_LIST) or `proposed` for an operator.
 *  - `setListing` lists or hides an event. Listing announces `event.listed` the first time an event
 *    becomes listed, in the same transaction; hiding is refused while positions of it are open or
 *    pending (their holders must be able to see, sell and settle them).
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import type { CompanyForMarket } from './handles.ts';
import { resultRows } from '../../db/prepared.ts';
import { eventBands, events, positions, type EventListing } from '../../db/schema.ts';

/** The listings, for routers and commands (which read no database module). */
export { EVENT_LISTINGS, type EventListing } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import { emitEventListed } from '../notifications/announce.ts';
import { uniqueEventId } from './discovery.ts';
import type { GammaEvent } from './gamma-client.ts';
import { applyEventSync, planEventSync } from './gamma-sync.ts';
import type { EventRecord } from './event-schema.ts';
import { findEvent } from './queries.ts';
import { bandRowsOf, eventRowOf } from './store.ts';

export interface AddedEvent {
  eventId: string;
  venueEventSlug: string | null;
  listing: EventListing;
}

/**
 * The names events answer to now, for placing discovered ones: `known` says whether the venue's event
 * (its Gamma id or slug) is already here; `claim` gives a new event its id, unique among every id,
 * slug and alias, and remembers its names for the next one. One read of the events.
 */
export async function eventNames(db: Db) {
  const rows = await db.select({ id: events.id, venue: events.venue, aliases: events.aliases }).from(events);
  const gammaIds = new Set(rows.map((r) => r.venue.gammaEventId).filter((id) => id !== null));
  const slugs = new Set(rows.map((r) => r.venue.eventSlug).filter((slug) => slug !== null));
  const taken = new Set(rows.flatMap((r) => [r.id, ...r.aliases, ...(r.venue.eventSlug ? [r.venue.eventSlug] : [])]));
  return {
    known: ({ venue }: EventRecord) => (venue.gammaEventId !== null && gammaIds.has(venue.gammaEventId)) || (venue.eventSlug !== null && slugs.has(venue.eventSlug)),
    claim(record: EventRecord): string {
      const id = uniqueEventId(record.id, taken);
      for (const name of [id, record.venue.eventSlug, ...(record.aliases ?? [])]) if (name) taken.add(name);
      if (record.venue.gammaEventId !== null) gammaIds.add(record.venue.gammaEventId);
      if (record.venue.eventSlug !== null) slugs.add(record.venue.eventSlug);
      return id;
    },
  };
}

/** A discovered event: its record, and the Gamma event it was read from (whose venue details the sync maps). */
export interface DiscoveredEvent {
  record: EventRecord;
  gamma?: GammaEvent;
}

export interface DiscoveryWrite {
  added: AddedEvent[];
  /** Venue slugs of events another pass (or the seeds) already wrote. */
  known: string[];
  /** What could not be written whole, and why (a band token another event already trades). */
  skipped: Array<{ slug: string; reason: string }>;
}

/**
 * Writes the discovered events the database does not know yet. Known events (the same venue event id
 * or slug) are left to the sync, which refreshes them. Each new event's venue details (market version,
 * neg-risk flag, tick size, No tokens) are mapped at once by the sync's own plan from its Gamma event,
 * so a listed event trades on the right token ledger from its first order.
 */
export async function addDiscoveredEvents(db: Db, discovered: DiscoveredEvent[], policy: { autoList: boolean; companyFor: CompanyForMarket }): Promise<DiscoveryWrite> {
  const result: DiscoveryWrite = { added: [], known: [], skipped: [] };
  if (!discovered.length) return result;
  return db.transaction(async (tx) => {
    // One discovery writer at a time, across instances: the second sees what the first wrote.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext('pre-ipo:event-discovery'))`);
    const names = await eventNames(tx);
    for (const { record, gamma } of discovered) {
      const slug = record.venue.eventSlug ?? record.id;
      if (names.known(record)) {
        result.known.push(slug);
        continue;
      }
      // A band with a venue token is that token, which one event only may trade (a unique index):
      // a clash skips the event, never fails the pass. (A band without one gets a paper id from the
      // event's own, unique, id.)
      const tokens = record.bands.flatMap((b) => (b.venue.tokenId ? [b.venue.tokenId] : []));
      const [clash] = tokens.length ? await tx.select({ id: eventBands.id, eventId: eventBands.eventId }).from(eventBands).where(inArray(eventBands.id, tokens)).limit(1) : [];
      if (clash) {
        result.skipped.push({ slug, reason: `${slug}: band token ${clash.id} already belongs to event ${clash.eventId}` });
        continue;
      }
      const id = names.claim(record);
      // Its company's record: found by name, or created from the market (marked as such).
      const companySourceId = record.companySourceId ?? (await policy.companyFor(tx, { company: record.company, eventId: id, venueEventSlug: record.venue.eventSlug }));
      const event: EventRecord = { ...record, id, companySourceId };
      const listing: EventListing = policy.autoList ? 'listed' : 'proposed';
      await tx.insert(events).values({ ...eventRowOf(event), listing, origin: 'discovered' });
      await tx.insert(eventBands).values(bandRowsOf(event));
      if (gamma) await applyEventSync(tx, planEventSync(await findEvent(tx, id), gamma));
      if (listing === 'listed') await announce(tx, id);
      result.added.push({ eventId: id, venueEventSlug: record.venue.eventSlug, listing });
    }
    return result;
  });
}

/** event.listed for a listed event, from its row (idempotent per account and event). */
async function announce(tx: Db, eventId: string): Promise<number> {
  const event = await findEvent(tx, eventId);
  return emitEventListed(tx, {
    eventId: event.id,
    name: event.name,
    company: event.company,
    structure: event.venue.structure,
    bands: event.bands.length,
    venueEventSlug: event.venue.eventSlug,
    origin: event.origin,
  });
}

export interface ListingChange<L extends EventListing = EventListing> {
  eventId: string;
  listing: L;
  /** false when the event already had this listing. */
  changed: boolean;
  /** Accounts told `event.listed` by this change. */
  announced: number;
}

/** Lists or hides an event (the operator's decision), by any id it answers to. */
export async function setListing<L extends 'listed' | 'hidden'>(db: Db, ref: string, listing: L): Promise<ListingChange<L>> {
  const { id } = await findEvent(db, ref);
  return db.transaction(async (tx) => {
    // The row first, for update: a buy recording its position holds it for share (ledger-writes.ts),
    // so the count below sees every position a buy could still add.
    await tx.select({ id: events.id }).from(events).where(eq(events.id, id)).for('update');
    if (listing === 'hidden') {
      const [held] = await tx
        .select({ n: sql<number>`count(*)::int` })
        .from(positions)
        .where(and(eq(positions.eventId, id), inArray(positions.status, ['open', 'pending'])));
      if ((held?.n ?? 0) > 0) throw new ApiError('BAD_REQUEST', `eventId: ${id} has ${held!.n} open or pending position(s); an event customers hold stays listed until it settles`);
    }
    const changed = resultRows<{ id: string }>(
      await tx.execute(sql`update events set listing = ${listing}, updated_at = now() where id = ${id} and listing <> ${listing} returning id`),
    );
    const announced = changed.length && listing === 'listed' ? await announce(tx, id) : 0;
    return { eventId: id, listing, changed: changed.length > 0, announced };
  });
}

export interface EventListingRow {
  eventId: string;
  name: string;
  company: string;
  companySourceId: string | null;
  listing: EventListing;
  origin: 'seed' | 'discovered';
  status: string;
  structure: 'bands' | 'ladder';
  bands: number;
  venueEventSlug: string | null;
  endDate: Date | null;
  createdAt: Date;
}

/** Every event with its listing (the operator's view), the newest 1,000 first; optionally one listing only. */
export async function listEventListings(db: Db, listing?: EventListing): Promise<EventListingRow[]> {
  const rows = await db
    .select({
      eventId: events.id,
      name: events.name,
      company: events.company,
      companySourceId: events.companySourceId,
      listing: events.listing,
      origin: events.origin,
      status: events.status,
      venue: events.venue,
      endDate: events.endDate,
      createdAt: events.createdAt,
      // Qualified by hand: inside the subquery an unqualified `id` would be the band's.
      bands: sql<number>`(select count(*)::int from event_bands b where b.event_id = "events"."id")`,
    })
    .from(events)
    .where(listing ? eq(events.listing, listing) : undefined)
    .orderBy(sql`${events.createdAt} desc`, events.id)
    // The newest 1,000: the universe grows by a few events a week; an operator's list need not grow with it.
    .limit(1000);
  return rows.map(({ venue, ...row }) => ({ ...row, structure: venue.structure, venueEventSlug: venue.eventSlug }));
}
