/**
 * A test key's fresh start (docs/accounts.md, "Test mode"): every trading record of the user on the
 * account's test side — positions, their bands and orders, trades, settlements, idempotency keys and
 * running totals — is removed, and the user's paper account starts again with the starting balance.
 * Only a test side's records can be removed: a live key is refused (403), so no call can erase live
 * history. Refused while one of the user's orders is still PENDING (the venue has not answered), so
 * nothing lands on the ledger after it was emptied. Records first, then the paper account: a crash in
 * between leaves the paper account as it was, and the next reset finishes it.
 */
import { and, count, eq } from 'drizzle-orm';
import { idempotencyKeys, orders, positionBands, positions, settlements, trades, tradingTotals } from '../../db/schema.ts';
import { isTestSide } from '../accounts/modes.ts';
import { ApiError } from '../errors.ts';
import type { TradingHandles } from './handles.ts';
import type { TradingUser } from './settings.ts';
import { venueOf } from './venue-of.ts';

export async function resetTestUser(services: TradingHandles, user: TradingUser) {
  if (!isTestSide(user.accountId)) throw new ApiError('FORBIDDEN', 'Only a test key (pipo_test_…) can reset its paper account: live records are never erased');
  const venue = venueOf(services, user.accountId);
  const mine = <T extends { accountId: unknown; userId: unknown }>(table: T) => and(eq(table.accountId as never, user.accountId), eq(table.userId as never, user.userId));
  const removed = await services.database.db.transaction(async (tx) => {
    // The user's positions locked first: a sale or settlement of one waits, then finds it gone.
    const held = await tx.select({ id: positions.id }).from(positions).where(mine(positions)).for('update');
    const [pending] = await tx.select({ n: count() }).from(orders).where(and(mine(orders), eq(orders.status, 'PENDING')));
    if (pending!.n > 0) throw new ApiError('ORDER_REJECTED', `${pending!.n} order(s) of this user are still PENDING; POST /api/trading/orders/sync settles them, then reset`);
    for (const { id } of held) {
      await tx.delete(positionBands).where(eq(positionBands.positionId, id));
      await tx.delete(settlements).where(eq(settlements.positionId, id));
    }
    await tx.delete(orders).where(mine(orders));
    await tx.delete(trades).where(mine(trades));
    await tx.delete(idempotencyKeys).where(mine(idempotencyKeys));
    await tx.delete(positions).where(mine(positions));
    await tx.delete(tradingTotals).where(mine(tradingTotals));
    return held.length;
  });
  const { collateralMicros } = venue.reset ? await venue.reset(user) : { collateralMicros: 0 };
  return { positionsRemoved: removed, collateralMicros };
}
