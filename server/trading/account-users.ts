/**
 * The trading users of one account (GET /trading/users): every x-user-id the account has traded
 * for or configured (settings, venue credentials), with how many positions each holds. An account's
 * key or signed-in customer sees its own users only; the dashboard lists them to choose whose
 * positions to show.
 */
import { count, eq, max, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { positions, tradingSettings, venueCredentials } from '../../db/schema.ts';

export interface AccountUser {
  userId: string;
  openPositions: number;
  positions: number;
  /** The last change to one of the user's positions or settings. */
  lastActivityAt: Date | null;
}

export async function accountUsers(db: Db, accountId: string, limit: number): Promise<AccountUser[]> {
  const [held, settings, credentials] = await Promise.all([
    db
      .select({
        userId: positions.userId,
        positions: count(),
        openPositions: sql<number>`count(*) filter (where ${positions.status} in ('open', 'pending'))`.mapWith(Number),
        last: max(positions.updatedAt),
      })
      .from(positions)
      .where(eq(positions.accountId, accountId))
      .groupBy(positions.userId),
    db
      .select({ userId: tradingSettings.userId, last: tradingSettings.updatedAt })
      .from(tradingSettings)
      .where(eq(tradingSettings.accountId, accountId)),
    db.select({ userId: venueCredentials.userId, last: venueCredentials.updatedAt }).from(venueCredentials).where(eq(venueCredentials.accountId, accountId)),
  ]);
  const users = new Map<string, AccountUser>();
  for (const row of held) users.set(row.userId, { userId: row.userId, positions: row.positions, openPositions: row.openPositions, lastActivityAt: row.last });
  for (const row of [...settings, ...credentials]) {
    const known = users.get(row.userId);
    if (!known) users.set(row.userId, { userId: row.userId, positions: 0, openPositions: 0, lastActivityAt: row.last });
    else if (row.last && (!known.lastActivityAt || row.last > known.lastActivityAt)) known.lastActivityAt = row.last;
  }
  const latest = (u: AccountUser) => u.lastActivityAt?.getTime() ?? 0;
  return [...users.values()].sort((a, b) => latest(b) - latest(a) || a.userId.localeCompare(b.userId)).slice(0, limit);
}
