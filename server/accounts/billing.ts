/**
 * Per-request billing. A billed request is admitted by one statement that authenticates its key,
 * debits the balance only `WHERE balance >= cost` and inserts the usage row from the debited row, so concurrent
 * requests can never overdraw and balance = credits − Σ usage holds at every commit; the requests this
 * process admits at the same moment share that statement (admission-queue.ts). If a request then
 * fails, its usage row is deleted and its cost returned, again in one statement: errors cost nothing.
 * The same statements keep the account's usage totals, so balance, totals and rows never disagree.
 *
 * Commit mode: every admission statement updates its accounts' balance rows, so two statements of one
 * account run one after another, each holding the row lock until its commit. Waiting for the WAL
 * flush at each commit caps that at ~1 / flush latency (measured ~1,200 statements/s here). By default these two
 * statements commit asynchronously (`set_config('synchronous_commit', 'off', true)`, for their own
 * transaction only): still atomic, so balance = credits − Σ usage holds at every commit and after any
 * crash of ours; only a crash of PostgreSQL itself can forget the last < 1 s of charges (requests then
 * served free, never charged twice). BILLING_SYNCHRONOUS_COMMIT=true restores the flush wait; the
 * embedded PGlite always waits (it dies with us).
 * Everything else (credits, keys, trades) always commits synchronously.
 */
import { missingScopeMessage, type Scope } from './scopes.ts';
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { preparedSql, resultRows } from '../../db/prepared.ts';
import { admitQueued } from './admission-queue.ts';
import { accounts } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import { LAST_USED_RESOLUTION_MS, touchApiKey, type KeyPrincipal } from './api-keys.ts';
import { microsToUsd } from '../lib/money.ts';
import { billingMetricsOf } from './billing-metrics.ts';
import type { PriceTier } from './price-tier.ts';

export type { PriceTier } from './price-tier.ts';

/**
 * Whether billing statements wait for the WAL flush. Always on the embedded PGlite: it runs inside
 * this process, so a crash of ours is a crash of the database and would forget unflushed charges.
 */
export function billingCommitsSynchronously(configured: boolean, databaseKind: 'postgres' | 'pglite'): boolean {
  return configured || databaseKind === 'pglite';
}
/** Private-company data costs ten times the standard rate (docs/decisions.md §4; docs/api.md "Billing", rule 2). */
export const PREMIUM_MULTIPLIER = 10;

export function priceFor(tier: PriceTier, standardMicros: number): number {
  return tier === 'premium' ? standardMicros * PREMIUM_MULTIPLIER : standardMicros;
}

export interface Charge {
  usageId: string;
  accountId: string;
  costMicros: number;
}

/**
 * Who pays: an API key (by the SHA-256 of the key), or a signed-in customer's live session (by the
 * SHA-256 of its cookie token). A session's call is billed to its account exactly like a key's —
 * same price, balance, monthly cap and usage row (with no key) — so a cookie is never a free key
 * (docs/decisions.md §4). Only keys carry spend caps.
 */
export type Payer = { keyHash: string; sessionHash?: undefined } | { sessionHash: string; keyHash?: undefined };

export type BilledRequest = Payer & {
  tier: PriceTier;
  /** The server's standard rate, for accounts without their own. */
  defaultCostMicros: number;
  method: string;
  path: string;
  requestId: string;
  /** false: commit without waiting for the WAL flush (BILLING_SYNCHRONOUS_COMMIT; see below). */
  synchronousCommit: boolean;
  /** The id the usage row gets (chosen by the caller, so it can refund a charge whose answer was lost). */
  usageId: string;
  /**
   * A unit paid only once its part of the answer is written (unit-charges.ts): the usage row is
   * provisional for this many seconds, refunded unless confirmed by then. Absent: an ordinary charge.
   */
  provisionalSeconds?: number;
  /** Admission batches in the database at once (admission-queue.ts): 1 on PGlite, 2 (the default) on PostgreSQL. */
  concurrentBatches?: number;
  /** The scope the route needs (scopes.ts): a key without it is refused 403 and not charged. */
  scope?: Scope;
};

export interface Admission {
  principal: KeyPrincipal;
  charge: Charge;
  /** The company dataset's version the admission saw (admission-queue.ts); absent on the capped-key path. */
  datasetVersion?: number;
}

/**
 * What pays a request: a prepaid account's balance (`WHERE balance >= cost`), or a metered account's
 * subscription (never refused for balance; refused above its monthly cap, counted in the same row and
 * reset when a new UTC month starts). The month and day are the database's (now(), UTC), the same
 * clock that stamps the usage row, so a refund finds the window its charge counted in.
 */
const MONTH = sql.raw(`to_char(now() at time zone 'UTC', 'YYYY-MM')`);
const DAY = sql.raw(`to_char(now() at time zone 'UTC', 'YYYY-MM-DD')`);
const spentThisMonth = sql.raw(`(case when a.metered_month is distinct from to_char(now() at time zone 'UTC', 'YYYY-MM') then 0 else a.metered_spent_micros end)`);

/**
 * The whole admission of a billed request: its payer found (the key by hash, with its account's rate
 * and plan, or a live session), and unless revoked, its cost debited — from the balance `WHERE
 * balance >= cost`, or for a metered account from its monthly allowance — and its usage row inserted
 * from the debited row, in ONE statement shared with the other billed requests this process is
 * admitting at that moment (admission-queue.ts: group admission). The conditions sit in the account
 * row's UPDATE, so they are re-checked on the row's latest version after its lock: concurrent
 * requests never overdraw. Keys are never cached, so a revocation holds on the very next request on
 * every instance.
 *
 * A key with a spend cap takes a second path (admitCappedKey): its own row is locked first, then the
 * same account debit runs, in one transaction — exact under concurrency, one more round trip, for
 * the keys that chose a cap only.
 *
 * Throws UNAUTHORIZED (unknown or revoked key) or INSUFFICIENT_BALANCE; `onAccount` hears the key's
 * account before a refusal for want of balance (the request log names it).
 */
export async function admitBilledRequest(db: Db, request: BilledRequest, onAccount: (accountId: string) => void = () => {}): Promise<Admission> {
  const bySession = request.sessionHash !== undefined;
  const { usageId } = request;
  const row = await admitQueued(
    db,
    {
      defaultCostMicros: request.defaultCostMicros,
      synchronousCommit: request.synchronousCommit,
      staleSeconds: LAST_USED_RESOLUTION_MS / 1000,
      concurrentBatches: request.concurrentBatches ?? 2,
    },
    {
      usageId,
      payer: request.sessionHash ?? request.keyHash,
      bySession,
      multiplier: request.tier === 'premium' ? PREMIUM_MULTIPLIER : 1,
      method: request.method,
      path: request.path,
      requestId: request.requestId,
      provisionalSeconds: request.provisionalSeconds ?? null,
      scope: request.scope ?? null,
    },
  );
  const metrics = billingMetricsOf(db);
  if (!row || row.revoked) {
    metrics?.refusal('unauthorized');
    if (bySession) throw new ApiError('UNAUTHORIZED', 'Session expired or signed out: sign in again (GET /api/auth/nonce, POST /api/auth/verify)');
    throw new ApiError('UNAUTHORIZED', row ? 'API key has been revoked' : 'Invalid API key');
  }
  onAccount(row.accountId);
  if (row.lacksScope && request.scope) {
    metrics?.refusal('scope');
    throw new ApiError('FORBIDDEN', missingScopeMessage(request.scope, row.keyScopes ?? []));
  }
  // lastUsed is written at most once per resolution, outside the hot statement (it locks the key row).
  if (row.stale && row.apiKeyId !== null) await touchApiKey(db, row.apiKeyId);
  const { costMicros } = row;
  const principal = { apiKeyId: row.apiKeyId, accountId: row.accountId, costPerRequestMicros: row.rate };
  if (row.keyCap !== null && row.apiKeyId !== null) return admitCappedKey(db, request, { principal: { ...principal, apiKeyId: row.apiKeyId }, costMicros, keyCap: row.keyCap, capPeriod: row.capPeriod ?? 'month' });
  if (!row.charged) {
    metrics?.refusal(row.metered ? 'monthly_cap' : 'insufficient_balance');
    throw refusalFor(row.metered, row.monthlyCap);
  }
  metrics?.admission(request.tier, row.metered);
  return { principal, charge: { usageId, accountId: row.accountId, costMicros }, datasetVersion: row.datasetVersion };
}

function refusalFor(metered: boolean, monthlyCap: string | number | bigint | null) {
  return metered
    ? new ApiError('INSUFFICIENT_BALANCE', `This metered account has reached its monthly cap of $${microsToUsd(Number(monthlyCap))}; the cap resets at the start of the next UTC month`)
    : new ApiError('INSUFFICIENT_BALANCE', 'Account balance is below the cost of this request; add funds');
}

/**
 * A key with a spend cap (per UTC day or month): in one transaction, the key row is locked and its
 * window's spend checked, then the account is debited as in the one-statement path, then the key's
 * spend is raised. The key row's lock serialises that key's requests, the account's conditional
 * update still guards the balance, and nothing is written when either refuses.
 */
async function admitCappedKey(db: Db, request: BilledRequest, key: { principal: KeyPrincipal & { apiKeyId: string }; costMicros: number; keyCap: number; capPeriod: 'day' | 'month' }): Promise<Admission> {
  const { principal, costMicros } = key;
  const window = key.capPeriod === 'day' ? DAY : MONTH;
  const metrics = billingMetricsOf(db);
  const admission = await db.transaction(async (tx) => {
    if (!request.synchronousCommit) await tx.execute(sql`select set_config('synchronous_commit', 'off', true)`);
    const [capRow] = await tx.execute<{ spent: string | number; revoked: boolean }>(sql`
      select (case when cap_window is distinct from ${window} then 0 else cap_spent_micros end) as spent, revoked_at is not null as revoked
        from api_keys where id = ${principal.apiKeyId} for update`).then(resultRows<{ spent: string | number; revoked: boolean }>);
    if (!capRow || capRow.revoked) {
      metrics?.refusal('unauthorized');
      throw new ApiError('UNAUTHORIZED', 'API key has been revoked');
    }
    if (Number(capRow.spent) + costMicros > key.keyCap) {
      metrics?.refusal('key_cap');
      throw new ApiError('INSUFFICIENT_BALANCE', `This key has reached its spend cap of $${microsToUsd(key.keyCap)} per ${key.capPeriod} (UTC); other keys of the account are not affected`);
    }
    const [debited] = await tx.execute<{ id: string; billing_plan: string; metered: boolean; monthly_cap: string | null }>(sql`
      update accounts a
         set balance_micros = case when a.billing_plan = 'metered' then a.balance_micros else a.balance_micros - ${costMicros} end,
             metered_month = case when a.billing_plan = 'metered' then ${MONTH} else a.metered_month end,
             metered_spent_micros = case when a.billing_plan = 'metered' then ${spentThisMonth} + ${costMicros} else a.metered_spent_micros end,
             usage_count = a.usage_count + 1,
             usage_cost_micros = a.usage_cost_micros + ${costMicros}
       where a.id = ${principal.accountId}
         and (case when a.billing_plan = 'metered'
                   then a.monthly_cap_micros is null or ${spentThisMonth} + ${costMicros} <= a.monthly_cap_micros
                   else a.balance_micros >= ${costMicros} end)
      returning a.id, a.billing_plan`).then(resultRows<{ id: string; billing_plan: string }>);
    if (!debited) {
      const [account] = await tx.execute<{ metered: boolean; monthly_cap: string | null }>(sql`select billing_plan = 'metered' as metered, monthly_cap_micros as monthly_cap from accounts where id = ${principal.accountId}`).then(resultRows<{ metered: boolean; monthly_cap: string | null }>);
      metrics?.refusal(account?.metered ? 'monthly_cap' : 'insufficient_balance');
      throw refusalFor(!!account?.metered, account?.monthly_cap ?? null);
    }
    await tx.execute(sql`
      update api_keys set cap_window = ${window},
             cap_spent_micros = (case when cap_window is distinct from ${window} then 0 else cap_spent_micros end) + ${costMicros}
       where id = ${principal.apiKeyId}`);
    await tx.execute(sql`
      insert into usage_records (id, account_id, api_key_id, method, path, cost_micros, request_id, billed_to, provisional_until, created_at)
      values (${request.usageId}, ${principal.accountId}, ${principal.apiKeyId}, ${request.method}, ${request.path}, ${costMicros}, ${request.requestId},
              ${debited.billing_plan === 'metered' ? 'meter' : 'balance'}, now() + make_interval(secs => ${request.provisionalSeconds ?? null}::int), now())`);
    await tx.execute(sql`
      insert into usage_hours (account_id, hour, key_id, path, requests, cost_micros)
      values (${principal.accountId}, date_trunc('hour', now(), 'UTC'), ${principal.apiKeyId}, ${request.path}, 1, ${costMicros})
      on conflict (account_id, hour, key_id, path)
        do update set requests = usage_hours.requests + 1, cost_micros = usage_hours.cost_micros + excluded.cost_micros`);
    return { admission: { principal, charge: { usageId: request.usageId, accountId: principal.accountId, costMicros } }, metered: debited.billing_plan === 'metered' };
  });
  metrics?.admission(request.tier, admission.metered);
  return admission.admission;
}


/**
 * Undoes a reservation: removes its usage row and returns exactly what that row cost, to what paid
 * it — the balance, or the metered month it counted in — and lowers its key's capped spend if that
 * window is still current (one statement). A metered row the Stripe export has already taken (a
 * refund later than the export's settle time, e.g. retried after a database outage) is left as billed. By usage id alone (server-generated, 128 random bits): a
 * charge whose admission answer was lost is refunded without knowing its account. A second refund of
 * the same charge finds no row and does nothing. `onlyIfLapsed`: only a provisional unit whose time
 * has passed (the lapsed-units job; a unit its stream confirmed meanwhile stays charged).
 */
export async function refundCharge(db: Db, charge: Charge, synchronousCommit: boolean, options: { onlyIfLapsed?: boolean } = {}): Promise<void> {
  const statement = preparedSql(
    db,
    'refund_charge',
    sql`
      with removed as (
        -- A metered row already exported to Stripe (export_batch set: billed there) stays, and so does
        -- what it counted: our records keep agreeing with what the customer was charged.
        delete from usage_records
         where id = ${sql.placeholder('usageId')}::text and export_batch is null
           and (not ${sql.placeholder('onlyIfLapsed')}::boolean or provisional_until < now())
        returning account_id, api_key_id, path, cost_micros, billed_to, date_trunc('hour', created_at, 'UTC') as hour,
                  to_char(created_at at time zone 'UTC', 'YYYY-MM') as month, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day
      ), key_refund as (
        update api_keys k
           set cap_spent_micros = greatest(0, k.cap_spent_micros - removed.cost_micros)
          from removed
         where k.id = removed.api_key_id and k.spend_cap_micros is not null
           and k.cap_window = (case when k.cap_period = 'day' then removed.day else removed.month end)
        returning k.id
      ), commit_mode as (
        select set_config('synchronous_commit', ${sql.placeholder('synchronousCommit')}::text, true) as mode
      ), account as (
        -- Rows locked in the order every admission takes them — key (a capped key's), account, cell —
        -- so a refund and an admission of the same account wait for each other, never deadlock: each
        -- step reads the one before it.
        update accounts a
           set balance_micros = case when removed.billed_to = 'meter' then a.balance_micros else a.balance_micros + removed.cost_micros end,
               metered_spent_micros = case when removed.billed_to = 'meter' and a.metered_month = removed.month
                                           then greatest(0, a.metered_spent_micros - removed.cost_micros) else a.metered_spent_micros end,
               usage_count = a.usage_count - 1,
               usage_cost_micros = a.usage_cost_micros - removed.cost_micros
          from removed cross join commit_mode left join key_refund on true
         where a.id = removed.account_id
        returning a.id
      )
      update usage_hours h
         set requests = h.requests - 1, cost_micros = h.cost_micros - removed.cost_micros
        from removed join account on account.id = removed.account_id
       where h.account_id = removed.account_id and h.hour = removed.hour
         and h.key_id = coalesce(removed.api_key_id, '') and h.path = removed.path`,
  );
  await statement.execute({ usageId: charge.usageId, synchronousCommit: synchronousCommit ? 'on' : 'off', onlyIfLapsed: options.onlyIfLapsed ?? false });
}

/** O(1): the account row carries its usage totals, kept by reserve and refund. */
export async function billingSummary(db: Db, accountId: string) {
  const [account] = await db
    .select({
      balanceMicros: accounts.balanceMicros,
      costPerRequestMicros: accounts.costPerRequestMicros,
      usageCount: accounts.usageCount,
      usageCostMicros: accounts.usageCostMicros,
    })
    .from(accounts)
    .where(eq(accounts.id, accountId));
  return {
    usageCount: account?.usageCount ?? 0,
    usageCostMicros: account?.usageCostMicros ?? 0,
    balanceMicros: account?.balanceMicros ?? 0,
    costPerRequestMicros: account?.costPerRequestMicros ?? null,
  };
}
