import { asc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { prepared } from '../../db/prepared.ts';
import { eventBands, events } from '../../db/schema.ts';
import { eventsNamed, unknownEvent } from './resolve.ts';

export type EventRow = typeof events.$inferSelect;
export type BandRow = typeof eventBands.$inferSelect;
export type EventWithBands = EventRow & { bands: BandRow[] };

/**
 * The listed events (what customers see), or every event for the operator's tools (`all`), each with
 * its bands (ascending), in a stable order. Two queries, whatever the count.
 */
export async function listEvents(db: Db, which: 'listed' | 'all' = 'listed'): Promise<EventWithBands[]> {
  const rows = await db
    .select()
    .from(events)
    .where(which === 'listed' ? eq(events.listing, 'listed') : undefined)
    .orderBy(asc(events.id));
  if (!rows.length) return [];
  const bands = await db.select().from(eventBands).where(inArray(eventBands.eventId, rows.map((r) => r.id))).orderBy(asc(eventBands.eventId), asc(eventBands.bandIndex));
  return rows.map((e) => ({ ...e, bands: bands.filter((b) => b.eventId === e.id) }));
}

/** One event by any id it answers to (our id, the venue event slug, an alias: resolve.ts). */
export async function findEvent(db: Db, ref: string, param = 'eventId'): Promise<EventWithBands> {
  const named = eventsNamed(ref);
  const [row] = await db
    .select()
    .from(events)
    .where(named.where)
    .orderBy(...named.order)
    .limit(1);
  if (!row) throw unknownEvent(ref, param);
  const bands = await db.select().from(eventBands).where(eq(eventBands.eventId, row.id)).orderBy(asc(eventBands.bandIndex));
  return { ...row, bands };
}

/**
 * An event's status as stored now (undefined for an unknown id; `hidden` or `proposed` for one not
 * listed). Trading reads it from the database at the moment it acts, not from the market-data
 * snapshot (up to MARKET_DATA_TTL_MS old), so a buy or a sale never slips in just after an event
 * stopped trading, resolved or was taken off the list.
 */
export async function currentEventStatus(db: Db, eventId: string): Promise<string | undefined> {
  // Prepared: every quote and buy checks it.
  const statement = prepared(db, 'event_status_of', (d) =>
    d.select({ status: events.status, listing: events.listing }).from(events).where(eq(events.id, sql.placeholder('eventId'))).prepare('event_status_of'),
  );
  const [row] = await statement.execute({ eventId });
  // An event taken off the list since the snapshot does not trade either: its listing stands for its status.
  return row && (row.listing === 'listed' ? row.status : row.listing);
}

/** An event's band labels by band index (for messages that name a band as a customer sees it). */
export async function bandLabels(db: Db, eventId: string): Promise<Map<number, string>> {
  const rows = await db.select({ bandIndex: eventBands.bandIndex, label: eventBands.label }).from(eventBands).where(eq(eventBands.eventId, eventId));
  return new Map(rows.map((r) => [r.bandIndex, r.label]));
}
