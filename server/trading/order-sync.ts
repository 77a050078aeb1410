/**
 * orders/sync (docs/decisions.md §7): asks the venue about every PENDING order of the user, applies what it
 * reports, and settles the positions involved (a buy whose missing outcome turns out unfilled is
 * unwound here). An order the venue never received, older than a grace period, was cut off by a
 * crash before it was sent: it is cancelled at the venue too, so a late arrival can never fill.
 */
import { and, eq } from 'drizzle-orm';
import { positions } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import type { TradingHandles } from './handles.ts';
import { openCredentials } from './credentials.ts';
import { executionOf, settlePosition } from './execution.ts';
import { pendingOrders } from './queries.ts';
import { applyOrderOutcome, outcomeOf, type OrderOutcome, type OrderRow } from './ledger-writes.ts';
import type { TradingUser } from './settings.ts';
import { callVenue } from './venue-calls.ts';
import { errorMessage } from '../lib/error-message.ts';

/** How long an order may be unknown to the venue before it counts as never sent, in venue timeouts. */
const NEVER_SENT_AFTER_TIMEOUTS = 3;

export interface OrderChange {
  id: string;
  previousStatus: OrderRow['status'];
  currentStatus: OrderRow['status'];
}

export async function syncOrders(services: TradingHandles, user: TradingUser) {
  const execution = executionOf(services, user.accountId);
  const pending = await pendingOrders(execution.db, user);
  const stalled = await execution.db
    .select({ id: positions.id })
    .from(positions)
    .where(and(eq(positions.accountId, user.accountId), eq(positions.userId, user.userId), eq(positions.status, 'pending')));
  if (!pending.length && !stalled.length) return { synced: 0, updated: 0, orders: [] as OrderChange[], positions: [] };

  const credentials = await openCredentials(execution.db, services.credentialCipher, user);
  const changes: OrderChange[] = [];
  let unreachable = 0;
  await Promise.all(
    pending.map(async (order) => {
      try {
        let outcome: OrderOutcome | null = null;
        const seen = await callVenue(`the status of order ${order.id}`, execution.timeoutMs, () => execution.venue.getOrder(credentials, order.id));
        if (seen) outcome = outcomeOf(seen);
        else if (order.ageMs > NEVER_SENT_AFTER_TIMEOUTS * execution.timeoutMs) {
          const cancelled = await callVenue(`cancelling order ${order.id}`, execution.timeoutMs, () => execution.venue.cancelOrder(credentials, order.id));
          outcome = cancelled ? outcomeOf(cancelled) : { status: 'CANCELLED', filledMicros: 0, notionalMicros: 0, feesMicros: 0, reason: 'never-sent' };
        }
        if (outcome && (await applyOrderOutcome(execution.db, order, outcome))) {
          changes.push({ id: order.id, previousStatus: 'PENDING', currentStatus: outcome.status });
        }
      } catch (error) {
        // One order's trouble (venue down for it, a report we could not apply) must not block the rest.
        if (!(error instanceof ApiError)) execution.logger.error('order sync failed', { orderId: order.id, error: errorMessage(error) });
        unreachable++;
      }
    }),
  );
  if (pending.length && unreachable === pending.length) {
    throw new ApiError('VENUE_UNAVAILABLE', 'The venue did not answer for any pending order; retry shortly');
  }

  const positionIds = [...new Set([...pending.map((o) => o.positionId), ...stalled.map((p) => p.id)])];
  const settled = [];
  for (const positionId of positionIds) {
    try {
      settled.push({ id: positionId, status: await settlePosition(execution, credentials, positionId) });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      settled.push({ id: positionId, status: 'pending' as const });
    }
  }
  return { synced: pending.length, updated: changes.length, orders: changes, positions: settled };
}
