/** Reads of a user's settlements (GET /api/trading/settlements). Every query filters by (account, user). */
import { and, count, desc, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { eventBands, settlements } from '../../db/schema.ts';
import { microRatio, microsToUsd } from '../lib/money.ts';
import type { TradingUser } from './settings.ts';

export interface SettlementFilter {
  /** Our event id (the route resolves aliases first). */
  eventId?: string;
  positionId?: string;
  limit: number;
  offset: number;
}

/** A page of the user's settlements, newest first, and a summary of the whole filtered set. */
export async function listSettlements(db: Db, user: TradingUser, filter: SettlementFilter) {
  const where: SQL[] = [eq(settlements.accountId, user.accountId), eq(settlements.userId, user.userId)];
  if (filter.eventId) where.push(eq(settlements.eventId, filter.eventId));
  if (filter.positionId) where.push(eq(settlements.positionId, filter.positionId));
  const condition = and(...where);
  const [rows, [summary]] = await Promise.all([
    db
      .select({ s: settlements, label: eventBands.label })
      .from(settlements)
      .leftJoin(eventBands, eq(eventBands.id, settlements.winningBandId))
      .where(condition)
      .orderBy(desc(settlements.settledAt), desc(settlements.id))
      .limit(filter.limit)
      .offset(filter.offset),
    db
      .select({
        total: count(),
        proceeds: sql<string>`coalesce(sum(${settlements.proceedsMicros}), 0)`,
        pnl: sql<string>`coalesce(sum(${settlements.realizedPnlMicros}), 0)`,
        unpaid: sql<string>`count(*) filter (where ${settlements.paidAt} is null)`,
      })
      .from(settlements)
      .where(condition),
  ]);
  return {
    settlements: rows.map(({ s, label }) => ({
      id: s.id,
      positionId: s.positionId,
      eventId: s.eventId,
      side: s.side,
      outcome: s.outcome,
      winningBandId: s.winningBandId,
      winningBandLabel: label ?? null,
      units: microsToUsd(s.unitsMicros),
      payoutPerUnit: microRatio(s.proceedsMicros, s.unitsMicros),
      proceeds: microsToUsd(s.proceedsMicros),
      realizedPnl: microsToUsd(s.realizedPnlMicros),
      settledAt: s.settledAt.toISOString(),
      paid: s.paidAt !== null,
      paidAt: s.paidAt?.toISOString() ?? null,
      txHash: s.txHash,
      unpaidReason: s.paidAt === null ? s.payError : null,
    })),
    summary: {
      totalSettlements: Number(summary!.total),
      totalProceeds: microsToUsd(Number(summary!.proceeds)),
      realizedPnl: microsToUsd(Number(summary!.pnl)),
      unpaid: Number(summary!.unpaid),
    },
  };
}
