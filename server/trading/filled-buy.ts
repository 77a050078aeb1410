/**
 * The end of a buy whose every order filled, in one statement: the position moves pending → open,
 * position.opened is written with it (the same rows emitAccountEvent writes), and the position's
 * record comes back for the answer. The general way (execution.ts settlePosition, then the record
 * read again for the answer) is nine round trips and a transaction of five statements; a buy that
 * filled is almost every buy.
 *
 * The event's numbers are computed here, by positionStatusData as the general way computes them,
 * from what this buy knows it wrote: its bands' targets and the fills it applied. The statement moves
 * the position only if the stored bands hold exactly those sums, no order of the position is PENDING,
 * and the position is still pending and not failed; otherwise it answers null and the caller settles
 * the general way. Two settlers cannot both announce it: the update's `status = 'pending'` is checked
 * again on the row as it is after any concurrent settleStatus (which locks the row and moves it
 * first), and settleStatus, coming second, finds the status already what the holdings say.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { preparedSql } from '../../db/prepared.ts';
import { newId } from '../lib/ids.ts';
import { accountEventCtes, positionStatusData } from '../notifications/announce.ts';
import type { PlacedOrders } from './execution.ts';
import { positionRecordOf, type BuyIntent, type OrderRow, type PositionRecord, type PositionRecordJson } from './ledger-writes.ts';
import type { TradingUser } from './settings.ts';

/** The opened position's record, or null when this buy did not fill every order itself (or anything differs from what it wrote). */
export async function openFilledBuy(db: Db, user: TradingUser, intent: BuyIntent, orders: OrderRow[], placed: PlacedOrders): Promise<PositionRecord | null> {
  const fills = new Map<number, { shares: number; cost: number }>();
  for (const [i, order] of orders.entries()) {
    const outcome = placed.outcomes[i];
    if (!outcome || !placed.applied.has(order.id) || outcome.status === 'PENDING' || outcome.filledMicros !== order.requestedMicros) return null;
    fills.set(order.bandIndex, { shares: outcome.filledMicros, cost: outcome.notionalMicros + outcome.feesMicros });
  }
  // Each band as applyOrderOutcomes leaves it after this buy's one BUY order on it (or none).
  const bands = intent.bands.map((b) => {
    const fill = fills.get(b.bandIndex) ?? { shares: 0, cost: 0 };
    return { targetMicros: b.targetMicros, sharesMicros: fill.shares, boughtMicros: fill.shares, costMicros: fill.cost, entryCostMicros: fill.cost };
  });
  const sum = (pick: (b: (typeof bands)[number]) => number) => bands.reduce((s, b) => s + pick(b), 0);
  const position = { ...intent.position, accountId: user.accountId, userId: user.userId, status: 'open' as const, buyFailed: false, closeReason: null };
  const data = positionStatusData({ position, bands, realizedPnlMicros: 0 }, 'position.opened');
  const [row] = await preparedSql<PositionRecordJson>(db, 'open_filled_buy', OPEN_FILLED_BUY_SQL).execute({
    positionId: intent.position.id,
    target: sum((b) => b.targetMicros),
    shares: sum((b) => b.sharesMicros),
    bought: sum((b) => b.boughtMicros),
    cost: sum((b) => b.costMicros),
    entryCost: sum((b) => b.entryCostMicros),
    eventId: newId('evt'),
    data: JSON.stringify(data),
  });
  return row ? positionRecordOf(row) : null;
}

const OPEN_FILLED_BUY_SQL = sql`
  with moved as (
    update positions p
       set status = 'open', updated_at = now()
     where p.id = ${sql.placeholder('positionId')}::text and p.status = 'pending' and not p.buy_failed
       -- Counted over the position's orders, not \`not exists (… status = 'PENDING')\`: against that constant the
       -- planner walks the partial index of every PENDING order the user ever had (dead entries until a
       -- vacuum): 1.8 of this statement's 3 ms.
       and (select count(*) filter (where o.status = 'PENDING') from orders o where o.position_id = p.id) = 0
       and (${sql.placeholder('target')}::numeric, ${sql.placeholder('shares')}::numeric, ${sql.placeholder('bought')}::numeric,
            ${sql.placeholder('cost')}::numeric, ${sql.placeholder('entryCost')}::numeric)
         = (select coalesce(sum(b.target_micros), 0), coalesce(sum(b.shares_micros), 0), coalesce(sum(b.bought_micros), 0),
                   coalesce(sum(b.cost_micros), 0), coalesce(sum(b.entry_cost_micros), 0)
              from position_bands b where b.position_id = p.id)
    returning p.*
  ),
  ${accountEventCtes(
    'position',
    sql`select ${sql.placeholder('eventId')}::text as id, m.account_id, m.user_id, 'position.opened'::text as type, ${sql.placeholder('data')}::jsonb as data from moved m`,
  )}
  select to_jsonb(m) as position,
         coalesce((select jsonb_agg(to_jsonb(b) order by b.band_index) from position_bands b where b.position_id = m.id), '[]') as bands,
         coalesce((select jsonb_agg(to_jsonb(o) order by o.created_at, o.band_index) from orders o where o.position_id = m.id), '[]') as orders,
         0 as realized
    from moved m`;
