/**
 * Settlement, exactly once: every open position of a resolved event is paid its winning
 * shares × $1 (the winning band's token, or a ladder's threshold tokens on the winner's side:
 * valuation/ladder.ts `tokenPays`) (of a voided event: every share $0.50, Polymarket's 50-50 for a cancelled market), and
 * its remaining cost basis is released as realised P&L.
 *
 * Two steps, so that retries, two instances settling at once and a crash in between all pay once:
 *  1. the intent: in ONE transaction, with the position row locked, the position moves open →
 *     settled, its holdings go to zero, a SETTLE trade and a `settlements` row (unique per position)
 *     are written. A second settler finds the position no longer open (or the unique row) and stops.
 *  2. the payment: each settlement whose `paidAt` is null is paid by the venue keyed by the settlement
 *     id (the paper ledger's paper_payouts row is unique per settlement), then marked paid. A crash
 *     between payment and mark leaves `paidAt` null; the next run asks the venue again, which finds
 *     its own record and pays nothing more.
 * A position with a sale still PENDING is left open for now: the next run (after orders/sync has
 * settled the sale) settles what it then holds.
 */
import { and, asc, eq, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { eventBands, events, orders, positionBands, positions, settlements, trades } from '../../db/schema.ts';
import { newId } from '../lib/ids.ts';
import { MICROS_PER_USD_BIGINT } from '../lib/money.ts';
import type { TradingHandles } from './handles.ts';
import { openCredentials } from './credentials.ts';
import { emitPositionSettled } from '../notifications/announce.ts';
import { errorSummary } from '../lib/error-message.ts';
import { tokenPays } from '../valuation/index.ts';
import { venueOf } from './venue-of.ts';

/** The SETTLE trade's bandId when a voided event paid every band. */
export const VOIDED_BAND_ID = '*';
const settlementId = () => newId('stl');

export type SettlementRow = typeof settlements.$inferSelect;

export interface SettlementRun {
  /** Positions moved to settled by this run. */
  settled: number;
  /** Settlements the venue paid during this run (including earlier ones left unpaid). */
  paid: number;
  /** Settlements still unpaid (the venue cannot pay them yet, or failed; the next run retries). */
  unpaid: number;
  /** Open positions left for a later run (a sale of theirs is still PENDING). */
  deferred: number;
}

/** What a share of a band pays, in micro-USD: $1 for the winner (0 for the others), $0.50 for every band of a voided event. */
export const VOIDED_PAYOUT_MICROS = 500_000;

/** Settles every open position of a resolved or voided event, then pays every unpaid settlement of that event. */
export async function settleEvent(services: TradingHandles, eventId: string): Promise<SettlementRun> {
  const db = services.database.db;
  const open = await db
    .select({ id: positions.id })
    .from(positions)
    .where(and(eq(positions.eventId, eventId), eq(positions.status, 'open')))
    .orderBy(asc(positions.createdAt));
  let settled = 0;
  let deferred = 0;
  for (const { id } of open) {
    const outcome = await recordSettlement(db, id);
    if (outcome === 'settled') settled++;
    if (outcome === 'deferred') deferred++;
  }
  const { paid, unpaid } = await payUnpaidSettlements(services, eventId);
  return { settled, paid, unpaid, deferred };
}

/** Step 1 for one position: the intent, the SETTLE trade and the position's new status, atomically. */
async function recordSettlement(db: Db, positionId: string): Promise<'settled' | 'deferred' | 'skipped'> {
  return db.transaction(async (tx) => {
    // The lock serialises two settlers (and a concurrent sale's outcome) on this position.
    const [position] = await tx.select().from(positions).where(eq(positions.id, positionId)).for('update');
    if (!position || position.status !== 'open') return 'skipped';
    // The outcome is read under a share lock: a correction (which locks the event row for update and
    // refuses once any settlement exists) cannot slip in between reading it and settling on it.
    const [event] = await tx
      .select({ status: events.status, bandIndex: events.resolvedBandIndex })
      .from(events)
      .where(eq(events.id, position.eventId))
      .for('share');
    const voided = event?.status === 'voided';
    if (!voided && (event?.status !== 'resolved' || event.bandIndex === null)) return 'skipped';
    const [pending] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(orders)
      .where(and(eq(orders.positionId, positionId), eq(orders.status, 'PENDING')));
    const bands = await tx.select().from(positionBands).where(eq(positionBands.positionId, positionId)).orderBy(asc(positionBands.bandIndex));
    if (Number(pending!.n) > 0 || bands.some((b) => b.reservedMicros > 0)) return 'deferred';

    const target = bands.reduce((s, b) => s + BigInt(b.targetMicros), 0n);
    const held = bands.reduce((s, b) => s + BigInt(b.sharesMicros), 0n);
    // Units scale with the shares held, as the position answers compute them (answers.ts `figures`).
    const unitsMicros = target === 0n ? 0 : Number((BigInt(position.unitsMicros) * held) / target);
    const winningBandIndex = voided ? null : event!.bandIndex;
    const eventBandRows = await tx.select({ id: eventBands.id, bandIndex: eventBands.bandIndex }).from(eventBands).where(eq(eventBands.eventId, position.eventId));
    const indexOf = new Map(eventBandRows.map((b) => [b.id, b.bandIndex]));
    const winningBand = eventBandRows.find((b) => b.bandIndex === winningBandIndex);
    // Which tokens pay $1: the winning band's (band events), or each ladder threshold token on the winner's side.
    const pays = (tokenId: string) => winningBandIndex !== null && tokenPays(tokenId, winningBandIndex, (id) => indexOf.get(id)) === 1;
    const winningShares = voided ? 0 : bands.reduce((s, b) => s + (pays(b.bandId) ? b.sharesMicros : 0), 0);
    // A winning share pays $1 (micro-shares × $1 = micro-USD); a voided event's shares $0.50 each, rounded down per band.
    const proceedsMicros = voided ? bands.reduce((s, b) => s + Number((BigInt(b.sharesMicros) * BigInt(VOIDED_PAYOUT_MICROS)) / MICROS_PER_USD_BIGINT), 0) : winningShares;
    const costMicros = bands.reduce((s, b) => s + b.costMicros, 0);
    const realizedPnlMicros = proceedsMicros - costMicros;
    const id = settlementId();
    // What the settlement row records and position.settled announces, stated once.
    const settled = {
      accountId: position.accountId,
      userId: position.userId,
      positionId,
      eventId: position.eventId,
      side: position.side,
      outcome: voided ? ('voided' as const) : ('resolved' as const),
      winningBandId: winningBand?.id ?? null,
      unitsMicros,
      proceedsMicros,
      realizedPnlMicros,
    };
    const [written] = await tx
      .insert(settlements)
      .values({
        id,
        ...settled,
        winningBandIndex,
        winningSharesMicros: winningShares,
        costMicros,
        holdings: bands.filter((b) => b.sharesMicros > 0).map((b) => ({ tokenId: b.bandId, sharesMicros: b.sharesMicros, pays: voided || pays(b.bandId) })),
      })
      .onConflictDoNothing()
      .returning({ id: settlements.id });
    if (!written) return 'skipped';
    await tx.insert(trades).values({
      id: newId('trd'),
      accountId: position.accountId,
      userId: position.userId,
      positionId,
      eventId: position.eventId,
      orderId: id,
      bandId: winningBand?.id ?? VOIDED_BAND_ID,
      side: position.side,
      action: 'SETTLE',
      sharesMicros: voided ? Number(held) : winningShares,
      amountMicros: proceedsMicros,
      feesMicros: 0,
      realizedPnlMicros,
    });
    await tx.update(positionBands).set({ sharesMicros: 0, costMicros: 0 }).where(eq(positionBands.positionId, positionId));
    await tx
      .update(positions)
      .set({ status: 'settled', closeReason: 'settled', closedAt: sql`now()`, updatedAt: sql`now()` })
      .where(eq(positions.id, positionId));
    await emitPositionSettled(tx, { settlementId: id, ...settled });
    return 'settled';
  });
}

/**
 * How long one payer holds a settlement before another instance may take it over (a crashed payer's
 * lease runs out): longer than one payment can take — a handful of venue calls, each up to
 * VENUE_TIMEOUT_MS, and the redeemer's wait for the relayer — and at least two minutes.
 */
const payLeaseMs = (services: TradingHandles) => Math.max(120_000, services.config.venueTimeoutMs * 8 + 30_000);

/**
 * Step 2: asks the venue to pay every unpaid settlement (of one event, or all), then records the
 * payment. Safe to run any number of times, anywhere: each settlement is taken under a lease (one
 * conditional write) so two instances do not pay it at once, and the venue pays each settlement id
 * once whatever happens (the paper ledger's unique payout row; on chain, redeemer.ts).
 */
export async function payUnpaidSettlements(services: TradingHandles, eventId?: string): Promise<{ paid: number; unpaid: number }> {
  const db = services.database.db;
  const where = eventId ? and(isNull(settlements.paidAt), eq(settlements.eventId, eventId)) : isNull(settlements.paidAt);
  const due = await db.select().from(settlements).where(where).orderBy(asc(settlements.settledAt));
  let paid = 0;
  for (const s of due) {
    // A test side's settlements are paid by the paper venue (venue-of.ts).
    const venue = venueOf(services, s.accountId);
    if (!venue.redeem) continue;
    // The lease's expiry doubles as its owner's token: only the payer that wrote it may clear it.
    const [claimed] = await db
      .update(settlements)
      // Truncated to milliseconds, so the value read back into JavaScript compares equal to the stored one.
      .set({ payingUntil: sql`date_trunc('milliseconds', now() + make_interval(secs => ${payLeaseMs(services) / 1000}))` })
      .where(and(eq(settlements.id, s.id), isNull(settlements.paidAt), or(isNull(settlements.payingUntil), lt(settlements.payingUntil, sql`now()`))))
      .returning({ lease: settlements.payingUntil });
    if (!claimed) continue; // another payer holds it
    const ours = and(eq(settlements.id, s.id), eq(settlements.payingUntil, claimed.lease!));
    let payError: string | null = null;
    try {
      const owner = { accountId: s.accountId, userId: s.userId };
      const credentials = () => openCredentials(db, services.credentialCipher, owner);
      // Holdings recorded before `pays` existed held band tokens only: the winning band's paid.
      const payingTokenIds = s.outcome === 'voided' ? s.holdings.map((h) => h.tokenId) : s.holdings.filter((h) => h.pays ?? h.tokenId === s.winningBandId).map((h) => h.tokenId);
      const { txHash } = await venue.redeem({ settlementId: s.id, owner, holdings: s.holdings, payingTokenIds, payoutMicros: s.proceedsMicros }, credentials);
      // Recorded whoever holds the lease now (the venue paid this id once, whoever asked); never twice.
      const marked = await db
        .update(settlements)
        .set({ paidAt: sql`now()`, txHash, payingUntil: null, payError: null })
        .where(and(eq(settlements.id, s.id), isNull(settlements.paidAt)))
        .returning({ id: settlements.id });
      if (marked.length) paid++;
    } catch (error) {
      // Left unpaid: the next run retries (the venue's own record keeps it from paying twice).
      // First line only, addresses of RPC endpoints and the like cut out (an RPC URL can carry an API key): it is shown to the user.
      payError = errorSummary(error).slice(0, 300);
      const pending = (error as Error)?.name === 'RedemptionPending';
      services.logger[pending ? 'info' : 'warn'](pending ? 'settlement payment in progress; the next run finishes it' : 'settlement payment failed; it will be retried', { settlementId: s.id, error: payError });
    }
    if (payError !== null) await db.update(settlements).set({ payingUntil: null, payError }).where(and(ours, isNull(settlements.paidAt)));
  }
  return { paid, unpaid: due.length - paid };
}
