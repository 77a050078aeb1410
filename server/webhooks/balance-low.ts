/**
 * balance.low: a prepaid account's balance fell under BALANCE_LOW_USD. Announced once per
 * crossing by a periodic check (the webhook worker runs it every BALANCE_LOW_CHECK_MS), not by the
 * billing hot path, which stays one statement per request.
 *
 * No state of its own: the crossing is read from the ledger. An account is announced when its
 * balance is under the threshold now and, since its last balance.low event (or ever, for the first),
 * some credit left its balance at or above the threshold — the balance right after a credit is
 * today's balance less the credits since plus the usage since (balance = Σ credits − Σ usage, at
 * every commit). So an account never funded to the threshold is never announced, one that stays
 * under it is announced once, and a credit that brings it back above re-arms the check.
 *
 * Several instances may run the check at once: the event id is derived from the account and its
 * previous balance.low event, so one crossing is one event (emitAccountEvent ignores a repeated id).
 *
 * Cost: only funded prepaid accounts under the threshold are examined (balanceLowCrossingsSql); the
 * arming check sums the usage since each credit made after the last balance.low, which is at most
 * one refill's worth of usage, once per crossing (afterwards no credit is newer than the event).
 */
import { createHash } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import { resultRows } from '../../db/prepared.ts';
import { microsToUsd } from '../lib/money.ts';
import { emitAccountEvent } from '../notifications/emit.ts';
import type { WebhookHandles } from './handles.ts';

interface CrossingRow {
  account_id: string;
  balance_micros: string | number;
  last_low_id: string | null;
}

/** The event id of the crossing after `previous` (null: the account's first). */
export function balanceLowEventId(accountId: string, previous: string | null): string {
  return 'evt_' + createHash('sha256').update(`balance.low\n${accountId}\n${previous ?? ''}`).digest('base64url').slice(0, 22);
}

/**
 * The accounts whose balance crossed under the threshold since their last balance.low, with the id
 * of that last event. Only prepaid accounts under the threshold that were ever funded (a credit
 * exists: a top-up or a credited deposit) are looked at — a plain comparison and one probe of the
 * credits index per account, over a materialised list — so the many unfunded $0 accounts cost
 * nothing more. For each of those few, the last balance.low is one `order by seq desc limit 1` walk
 * back along the (account_id, seq) index: it reads the account's events since its last balance.low
 * (all of them for an account never announced — a low balance keeps that short). `type =
 * 'balance.low'` is written as a constant so that a partial index (account_id, seq) where type =
 * 'balance.low', if one is added, turns the walk into a single probe.
 */
export function balanceLowCrossingsSql(thresholdMicros: number): SQL {
  return sql`
      with funded_low as materialized (
        select a.id as account_id, a.balance_micros
          from accounts a
         where a.billing_plan = 'prepaid' and a.balance_micros < ${thresholdMicros}
           and exists (select 1 from credits c where c.account_id = a.id)
      ), low as materialized (
        select f.account_id, f.balance_micros, last.id as last_low_id, last.created_at as last_low_at
          from funded_low f
          left join lateral (
            select e.id, e.created_at from account_events e
             where e.account_id = f.account_id and e.type = 'balance.low'
             order by e.seq desc limit 1
          ) last on true
      )
      select l.account_id, l.balance_micros, l.last_low_id
        from low l
       where exists (
               select 1 from credits c
                where c.account_id = l.account_id
                  and (l.last_low_at is null or c.created_at > l.last_low_at)
                  and l.balance_micros
                      - coalesce((select sum(c2.amount_micros) from credits c2 where c2.account_id = l.account_id and c2.created_at > c.created_at), 0)
                      + coalesce((select sum(u.cost_micros) from usage_records u
                                   where u.account_id = l.account_id and u.billed_to = 'balance' and u.created_at > c.created_at), 0)
                      >= ${thresholdMicros})
       order by l.account_id`;
}

/** One check over the funded prepaid accounts under the threshold; answers the accounts announced. */
export async function checkBalanceLow(services: WebhookHandles): Promise<string[]> {
  const threshold = services.config.balanceLowMicros;
  const db = services.database.db;
  const rows = resultRows<CrossingRow>(await db.execute(balanceLowCrossingsSql(threshold)));
  for (const row of rows) {
    await emitAccountEvent(
      db,
      {
        accountId: row.account_id,
        userId: null,
        type: 'balance.low',
        data: { balance: microsToUsd(Number(row.balance_micros)), threshold: microsToUsd(threshold) },
      },
      balanceLowEventId(row.account_id, row.last_low_id),
    );
  }
  if (rows.length) services.logger.info('balance.low announced', { accounts: rows.length });
  return rows.map((r) => r.account_id);
}
