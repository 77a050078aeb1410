/**
 * Claiming due deliveries under a lease, fairly between webhooks and between accounts
 *: one conditional UPDATE … RETURNING, so two instances never send one delivery at once.
 */
import { sql } from 'drizzle-orm';
import { resultRows } from '../../db/prepared.ts';
import type { WebhookHandles } from './handles.ts';

/** A lease outlasts its attempt's deadline by this much (the time to record the outcome). */
export const LEASE_MARGIN_MS = 5_000;

export interface ClaimedRow {
  id: string;
  webhook_id: string;
  account_id: string;
  payload: string;
  attempts: number;
  created_at: string | Date;
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_until: string | Date | null;
}

export interface ClaimLimits {
  /** Deliveries to take at most (the pool's free slots). */
  n: number;
  /** Attempts of one webhook in flight at once, over every instance (counted from the leases). */
  perWebhook: number;
  /** Attempts of one account in flight at once in this pool. */
  perAccount: number;
  /** This pool's attempts in flight per account. */
  busyAccounts: Record<string, number>;
  /** Webhooks this pool leaves aside for now. */
  paused: string[];
}

/**
 * Takes up to `n` due deliveries of active webhooks whose lease is free or ran out; each is ours
 * until the lease ends (WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS, the longest an attempt can take).
 *
 * Fair: a webhook with `perWebhook` leases running (on any instance) gives none, one with fewer only
 * up to that many; an account with `perAccount` attempts in flight in this pool gives none, one with
 * fewer only up to that many — so a tenant's endpoints that hang hold at most `perAccount` slots of
 * each pool, whatever its backlog; `paused` webhooks give none. Those are left out before the window
 * of oldest due rows is cut, so a full account's backlog never fills the window. Within the window,
 * accounts take turns (each one's oldest first, then each one's second …), the oldest due first
 * within a turn. A claim that takes fewer than `n` may have left due rows beyond the window (of
 * accounts that filled up in it): the pool claims again (see DeliveryPool.fill).
 */
export async function claim(services: WebhookHandles, owner: string, at: string | null, limits: ClaimLimits): Promise<ClaimedRow[]> {
  const { n, perWebhook, perAccount } = limits;
  const now = sql`coalesce(${at}::timestamptz, now())`;
  const leaseSeconds = (services.config.webhooks.timeoutMs + LEASE_MARGIN_MS) / 1000;
  const free = (d: 'c' | 'd') => sql`(${sql.raw(d)}.lease_until is null or ${sql.raw(d)}.lease_until <= ${now})`;
  const busy = JSON.stringify(limits.busyAccounts);
  const fullAccounts = JSON.stringify(Object.keys(limits.busyAccounts).filter((a) => limits.busyAccounts[a]! >= perAccount));
  // The due rows looked at: enough for `n` among several webhooks and accounts (an excess is skipped).
  const window = Math.max(4 * n, 32);
  return resultRows<ClaimedRow>(
    await services.database.db.execute(sql`
      with leased as materialized (
        -- Attempts in flight per webhook, on every instance (a leased delivery was due when claimed).
        select l.webhook_id, count(*) as n
          from webhook_deliveries l
         where l.status = 'pending' and l.next_attempt_at <= ${now} and l.lease_until > ${now}
         group by l.webhook_id
      ), candidates as materialized (
        -- Evaluated once (materialized): a LIMIT … SKIP LOCKED subquery evaluated again per row of the
        -- update's join could take more rows than asked for.
        select c.id, c.webhook_id, c.account_id, c.next_attempt_at
          from webhook_deliveries c join webhooks cw on cw.id = c.webhook_id and cw.status = 'active'
         where c.status = 'pending' and c.next_attempt_at <= ${now} and ${free('c')}
           and c.webhook_id not in (select l.webhook_id from leased l where l.n >= ${perWebhook})
           and c.webhook_id not in (select jsonb_array_elements_text(${JSON.stringify(limits.paused)}::jsonb))
           and c.account_id not in (select jsonb_array_elements_text(${fullAccounts}::jsonb))
         order by c.next_attempt_at, c.id
         limit ${window}
           for update of c skip locked
      ), per_webhook as (
        -- Each webhook's rows up to its free leases.
        select r.id, r.account_id, r.next_attempt_at
          from (select k.id, k.account_id, k.next_attempt_at,
                       row_number() over (partition by k.webhook_id order by k.next_attempt_at, k.id)
                         + coalesce((select l.n from leased l where l.webhook_id = k.webhook_id), 0) as slot
                  from candidates k) r
         where r.slot <= ${perWebhook}
      ), chosen as materialized (
        -- Then each account's up to its free slots here, the accounts taking turns.
        select a.id
          from (select p.id, p.account_id, p.next_attempt_at,
                       row_number() over (partition by p.account_id order by p.next_attempt_at, p.id) as turn
                  from per_webhook p) a
         where a.turn + coalesce((${busy}::jsonb ->> a.account_id)::int, 0) <= ${perAccount}
         order by a.turn, a.next_attempt_at, a.id
         limit ${n}
      )
      update webhook_deliveries d
         set lease_owner = ${owner}, lease_until = ${now} + make_interval(secs => ${leaseSeconds})
        from webhooks w
       where d.id in (select id from chosen)
         and w.id = d.webhook_id and w.status = 'active'
         -- Re-checked on the row as it is now: a concurrent claimer that got it first leaves nothing to take.
         and d.status = 'pending' and ${free('d')}
      returning d.id, d.webhook_id, d.account_id, d.payload, d.attempts, d.created_at,
                w.url, w.secret_sealed, w.previous_secret_sealed, w.previous_secret_until`),
  );
}
