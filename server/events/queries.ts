import { asc, eq, inArray, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { eventBands, events } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';

export type EventRow = typeof events.$inferSelect;
export type BandRow = typeof eventBands.$inferSelect;
export type EventWithBands = EventRow & { bands: BandRow[] };

/** Every event with its bands (ascending), in a stable order. Two queries, whatever the count. */
export async function listEvents(db: Db): Promise<EventWithBands[]> {
  const rows = await db.select().from(events).orderBy(asc(events.id));
  if (!rows.length) return [];
  const bands = await db.select().from(eventBands).where(inArray(eventBands.eventId, rows.map((r) => r.id))).orderBy(asc(eventBands.eventId), asc(eventBands.bandIndex));
  return rows.map((e) => ({ ...e, bands: bands.filter((b) => b.eventId === e.id) }));
}

/** One event by our id, or by its venue event slug. */
export async function findEvent(db: Db, slug: string): Promise<EventWithBands> {
  const [row] = await db
    .select()
    .from(events)
    .where(or(eq(events.id, slug), sql`${events.venue}->>'eventSlug' = ${slug}`))
    .limit(1);
  if (!row) throw new ApiError('NOT_FOUND', `No event ${slug}`);
  const bands = await db.select().from(eventBands).where(eq(eventBands.eventId, row.id)).orderBy(asc(eventBands.bandIndex));
  return { ...row, bands };
}
