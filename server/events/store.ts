/** Writing events: an idempotent upsert of events and their bands (keyed by event id and band index). */
import { and, eq, gte, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { eventBands, events } from '../../db/schema.ts';
import { canonicalJson } from '../lib/canonical-json.ts';
import { bandIdOf, type EventRecord } from './event-schema.ts';

export async function upsertEvents(db: Db, records: EventRecord[]): Promise<{ inserted: number; updated: number }> {
  let inserted = 0;
  let updated = 0;
  await db.transaction(async (tx) => {
    for (const e of records) {
      const row = eventRowOf(e);
      const [existing] = await tx.select().from(events).where(eq(events.id, e.id));
      // Once `npm run events:sync` has refreshed an event from the venue, the venue is its source of
      // truth: the seeds no longer overwrite it. Its aliases are ours, not the venue's: they follow the seeds.
      if (existing?.venue.syncedAt) {
        if (canonicalJson(existing.aliases) !== canonicalJson(row.aliases)) {
          updated++;
          await tx.update(events).set({ aliases: row.aliases, updatedAt: sql`now()` }).where(eq(events.id, e.id));
        }
        continue;
      }
      // A resolution is final once made (an operator's, or a settled one): the seeds never reopen it.
      if (existing?.status === 'resolved' && existing.resolvedBandIndex !== null) Object.assign(row, { status: existing.status, resolvedBandIndex: existing.resolvedBandIndex });
      const bands = bandRowsOf(e);
      const currentBands = existing ? await tx.select().from(eventBands).where(eq(eventBands.eventId, e.id)).orderBy(eventBands.bandIndex) : [];
      const same =
        existing !== undefined &&
        canonicalJson(row) === canonicalJson(pick(existing, Object.keys(row))) &&
        canonicalJson(bands) === canonicalJson(currentBands.map((b) => pick(b, Object.keys(bands[0]!))));
      if (same) continue;
      if (existing) {
        updated++;
        await tx.update(events).set({ ...row, updatedAt: sql`now()` }).where(eq(events.id, e.id));
        await tx.delete(eventBands).where(and(eq(eventBands.eventId, e.id), gte(eventBands.bandIndex, bands.length)));
      } else {
        inserted++;
        await tx.insert(events).values(row);
      }
      for (const band of bands) {
        await tx
          .insert(eventBands)
          .values(band)
          // A band's id never changes once it exists: positions refer to it.
          .onConflictDoUpdate({ target: [eventBands.eventId, eventBands.bandIndex], set: { ...band, id: sql`${eventBands.id}` } });
      }
    }
  });
  return { inserted, updated };
}

/**
 * Stops an open event trading (`closed`), as when the venue no longer lists it: never deleted, so its
 * positions, history and settlement stay. A conditional write: a resolved or voided event is left
 * as it is. Answers whether it changed.
 */
export async function closeOpenEvent(db: Db, eventId: string): Promise<boolean> {
  const closed = await db
    .update(events)
    .set({ status: 'closed', updatedAt: sql`now()` })
    .where(and(eq(events.id, eventId), eq(events.status, 'open')))
    .returning({ id: events.id });
  return closed.length > 0;
}

/** A record's event row (its listing and origin are the table's defaults unless the caller adds them). */
export function eventRowOf(e: EventRecord) {
  return {
    id: e.id,
    name: e.name,
    company: e.company,
    companySourceId: e.companySourceId,
    status: e.status,
    resolvedBandIndex: e.resolvedBandIndex,
    endDate: e.endDate ? new Date(e.endDate) : null,
    volumeUsd: e.volumeUsd,
    venue: e.venue,
    aliases: e.aliases ?? [],
  };
}

/** A record's bands as rows: each band's id is its venue token, else a stable paper id. */
export function bandRowsOf(e: EventRecord) {
  return e.bands.map((b, i) => ({
    eventId: e.id,
    bandIndex: i,
    id: bandIdOf(e.id, i, b.venue.tokenId),
    label: b.label,
    minValuation: b.minValuation,
    maxValuation: b.maxValuation,
    seedPrice: b.seedPrice,
    venue: b.venue,
  }));
}

function pick(row: Record<string, unknown>, keys: string[]) {
  return Object.fromEntries(keys.map((k) => [k, row[k]]));
}
