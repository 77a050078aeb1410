/** Trading settings of a user: floors and wallet, with defaults for users who never set them. */
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { prepared } from '../../db/prepared.ts';
import { tradingSettings } from '../../db/schema.ts';
import { DEFAULT_FLOORS } from '../valuation/index.ts';

export interface TradingUser {
  accountId: string;
  userId: string;
}

export interface Settings {
  floorL: number;
  floorS: number;
  walletAddress: string | null;
}

export async function getSettings(db: Db, user: TradingUser): Promise<Settings> {
  // Prepared: every quote, buy and sale reads it.
  const statement = prepared(db, 'trading_settings_of', (d) =>
    d
      .select({ floorL: tradingSettings.floorL, floorS: tradingSettings.floorS, walletAddress: tradingSettings.walletAddress })
      .from(tradingSettings)
      .where(and(eq(tradingSettings.accountId, sql.placeholder('accountId')), eq(tradingSettings.userId, sql.placeholder('userId'))))
      .prepare('trading_settings_of'),
  );
  const [row] = await statement.execute({ accountId: user.accountId, userId: user.userId });
  return {
    floorL: row?.floorL ?? DEFAULT_FLOORS.floorL,
    floorS: row?.floorS ?? DEFAULT_FLOORS.floorS,
    walletAddress: row?.walletAddress ?? null,
  };
}

/** Changes only the fields given (`walletAddress: null` clears it); one upsert. */
export async function updateSettings(db: Db, user: TradingUser, change: Partial<Settings>): Promise<Settings> {
  const set: Record<string, unknown> = { updatedAt: sql`now()` };
  for (const key of ['floorL', 'floorS', 'walletAddress'] as const) if (change[key] !== undefined) set[key] = change[key];
  await db
    .insert(tradingSettings)
    .values({ ...user, floorL: change.floorL ?? null, floorS: change.floorS ?? null, walletAddress: change.walletAddress ?? null })
    .onConflictDoUpdate({ target: [tradingSettings.accountId, tradingSettings.userId], set });
  return getSettings(db, user);
}
