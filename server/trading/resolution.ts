/**
 * An operator resolves an event (POST /api/events/{eventId}/resolution, `cli resolve-event`): the
 * event becomes `resolved` with its winning band, or `voided` (cancelled: every band's shares pay
 * $0.50, Polymarket's 50-50 for a cancelled market), and its open positions settle at once
 * (server/trading/settlement.ts). Resolving again to the same outcome settles and pays whatever is
 * still outstanding and pays nothing twice. A correction (another outcome) is accepted until the
 * first position of the event has settled; after that it is refused (400 BAD_REQUEST, naming the
 * outcome it settled on): money has moved.
 */
import { eq, sql } from 'drizzle-orm';
import { events, settlements } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import type { TradingHandles } from './handles.ts';
import { settleEvent, type SettlementRun } from './settlement.ts';
import { findEvent } from '../events/queries.ts';
import { resolveEventId } from '../events/resolve.ts';
import { emitEventResolved } from '../notifications/announce.ts';
import { recordAudit, type AuditActor } from '../audit/log.ts';

/** A winning band, or a void. */
export type EventOutcome = { winningBandId: string } | { voided: true };

export interface ResolutionOutcome extends SettlementRun {
  eventId: string;
  status: 'resolved' | 'voided';
  winningBandId: string | null;
  winningBandLabel: string | null;
  /** Whether this call changed the event (false: it already had this outcome). */
  changed: boolean;
}

/** `actor`: who resolved it, recorded in the audit log with the change (server/audit/log.ts). */
export async function resolveEventOutcome(services: TradingHandles, eventRef: string, outcome: EventOutcome, actor?: AuditActor): Promise<ResolutionOutcome> {
  const db = services.database.db;
  const eventId = await resolveEventId(db, eventRef);
  const event = await findEvent(db, eventId);
  const status = 'voided' in outcome ? ('voided' as const) : ('resolved' as const);
  const bandIndex = 'voided' in outcome ? null : event.bands.findIndex((b) => b.id === outcome.winningBandId);
  if (bandIndex === -1) {
    const { winningBandId } = outcome as { winningBandId: string };
    throw new ApiError('BAD_REQUEST', `winningBandId: ${winningBandId} is not a band of ${eventId}; its bands are ${event.bands.map((b) => `${b.id} (${b.label})`).join(', ')}`);
  }
  const describe = (s: string, i: number | null) => (s === 'voided' ? 'voided' : `resolved to ${event.bands[i ?? -1]?.id ?? 'a band'}`);
  const changed = await db.transaction(async (tx) => {
    // The event row's lock orders a correction against settlements, which read the outcome under it.
    const [row] = await tx.select({ status: events.status, band: events.resolvedBandIndex }).from(events).where(eq(events.id, eventId)).for('update');
    if (row!.status === status && row!.band === bandIndex) return false;
    const [settled] = await tx.select({ id: settlements.id }).from(settlements).where(eq(settlements.eventId, eventId)).limit(1);
    if (settled) {
      throw new ApiError('BAD_REQUEST', `${'voided' in outcome ? 'voided' : 'winningBandId'}: ${eventId} is ${describe(row!.status, row!.band)} and its positions have settled; a settled outcome cannot be changed`);
    }
    await tx.update(events).set({ status, resolvedBandIndex: bandIndex, updatedAt: sql`now()` }).where(eq(events.id, eventId));
    const band = bandIndex === null ? undefined : event.bands[bandIndex];
    await emitEventResolved(tx, { eventId, status, winningBandId: band?.id ?? null, winningBandLabel: band?.label ?? null });
    if (actor) await recordAudit(tx, actor, { action: 'event.resolved', accountId: null, targetId: eventId, details: { status, winningBandId: band?.id ?? null, winningBandLabel: band?.label ?? null } });
    return true;
  });
  const run = await settleEvent(services, eventId);
  const band = bandIndex === null ? undefined : event.bands[bandIndex];
  return { eventId, status, winningBandId: band?.id ?? null, winningBandLabel: band?.label ?? null, changed, ...run };
}
