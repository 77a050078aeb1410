/**
 * Billed requests admitted in batches (group admission). Every billed request debits its account's
 * row, so one account's requests used to queue on that row's lock, one statement and one commit each.
 * Here the requests an instance receives in one turn of its event loop, or while its previous batches
 * are in the database, wait together (lib/batch-queue.ts),
 * and one statement admits them all: it finds each payer (key or session), debits each account once
 * for the requests of the batch that fit, and inserts their usage rows — so an account's row is
 * locked once per batch, not once per request, and a lone request waits no timer.
 *
 * What billing promised before still holds, statement by statement (docs/decisions.md §4, "Group
 * admission"): an account is debited only `WHERE balance >= Σ cost of its admitted requests` (for a
 * metered account, `spent + Σ ≤ cap`), re-checked on the row's latest version after its lock, so no
 * interleaving overdraws; the usage rows are inserted from the accounts the statement debited, in the
 * same statement, so balance = credits − Σ usage and the usage counters hold at every commit; a key is
 * looked up in every batch, so a revocation holds on the next request on every instance; and a
 * request is answered only after its batch committed. The statement also reads the company dataset's
 * version, so the routes that answer from a cache kept per version need no round trip of their own. Within a batch an account's requests are taken
 * in arrival order while their running sum fits the balance the statement saw. If another instance's
 * batch changed the account meanwhile so that the sum no longer fits, none of that account's requests
 * is charged and they go into the next batch, which sees the new balance.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { preparedSql } from '../../db/prepared.ts';
import { isDatabaseUnavailable } from '../errors.ts';
import { BatchQueue, type BatchAnswer } from '../lib/batch-queue.ts';
import { billingMetricsOf } from './billing-metrics.ts';

/** One billed request, as the batch statement needs it. */
export interface QueuedRequest {
  usageId: string;
  /** The SHA-256 of the key, or of the session's cookie token. */
  payer: string;
  bySession: boolean;
  /** 1, or PREMIUM_MULTIPLIER for private-company data. */
  multiplier: number;
  method: string;
  path: string;
  requestId: string;
  /** A provisional unit: refunded unless confirmed within this many seconds (unit-charges.ts); null for an ordinary charge. */
  provisionalSeconds: number | null;
  /** The scope the route needs (scopes.ts); a key without it is not charged. Null: none needed. */
  scope: string | null;
}

/** What the statement says of one request: null when the payer does not exist (unknown key, dead session). */
export interface AdmissionOutcome {
  apiKeyId: string | null;
  accountId: string;
  revoked: boolean;
  stale: boolean;
  costMicros: number;
  rate: number | null;
  charged: boolean;
  metered: boolean;
  monthlyCap: number | null;
  keyCap: number | null;
  capPeriod: 'day' | 'month' | null;
  /**
   * The company dataset's version as the statement saw it (aggregate-cache.ts): answers computed once
   * per version are never older than the request, on any instance, at no extra round trip.
   */
  datasetVersion: number;
  /** The key lacks the route's scope: nothing was charged (403). */
  lacksScope: boolean;
  /** The key's scopes (null: all). */
  keyScopes: string[] | null;
}

interface OutcomeRow {
  ord: number;
  apiKeyId: string | null;
  accountId: string;
  revoked: boolean;
  stale: boolean;
  costMicros: string | number | bigint;
  rate: string | number | bigint | null;
  charged: boolean;
  /** It fitted the balance the statement saw, but its account was changed meanwhile: try again. */
  retry: boolean;
  metered: boolean;
  monthlyCap: string | number | bigint | null;
  keyCap: string | number | bigint | null;
  capPeriod: 'day' | 'month' | null;
  datasetVersion: string | number | bigint;
  lacksScope: boolean;
  keyScopes: string[] | null;
}

const MONTH = sql.raw(`to_char(now() at time zone 'UTC', 'YYYY-MM')`);
const spentThisMonth = sql.raw(`(case when a.metered_month is distinct from to_char(now() at time zone 'UTC', 'YYYY-MM') then 0 else a.metered_spent_micros end)`);

/**
 * The batch statement. `requests` is a JSON array of the batch's requests with their position
 * (`ord`); the answer is one row per request whose payer exists. A capped key's request (key_cap
 * set) is left alone here: it is admitted by its own locking path (billing.ts admitCappedKey).
 */
const BATCH_SQL = sql`
  with req as (
    select * from jsonb_to_recordset(${sql.placeholder('requests')}::jsonb)
      as r(ord int, usage_id text, payer text, by_session boolean, multiplier int, method text, path text, request_id text, provisional int, scope text)
  ), payer as (
    -- A key without the route's scope is found (403, naming it) but never charged; a session holds every scope.
    select r.*, k.id as api_key_id, k.account_id, k.revoked_at is not null as revoked,
           (k.last_used_at is null or k.last_used_at < now() - make_interval(secs => ${sql.placeholder('staleSeconds')}::int)) as stale,
           k.spend_cap_micros as key_cap, k.cap_period,
           (r.scope is not null and k.scopes is not null and not (r.scope = any(k.scopes))) as lacks_scope, k.scopes as key_scopes
      from req r join api_keys k on not r.by_session and k.key_hash = r.payer
    union all
    select r.*, null::text, s.account_id, false, false, null::bigint, null::text, false, null::text[]
      from req r join auth_sessions s on r.by_session and s.token_hash = r.payer and s.revoked_at is null and s.expires_at > now()
  ), priced as (
    select p.*, a.cost_per_request_micros as rate, a.billing_plan = 'metered' as metered, a.monthly_cap_micros as monthly_cap,
           coalesce(a.cost_per_request_micros, ${sql.placeholder('defaultCost')}::bigint) * p.multiplier as cost,
           a.balance_micros as balance, ${spentThisMonth} as spent
      from payer p join accounts a on a.id = p.account_id
  ), fits as (
    select * from (
      select q.*, sum(q.cost) over (partition by q.account_id order by q.ord) as running
        from priced q where not q.revoked and not q.lacks_scope and q.key_cap is null
    ) w
     where case when w.metered then w.monthly_cap is null or w.spent + w.running <= w.monthly_cap else w.running <= w.balance end
  ), totals as (
    select account_id, sum(cost) as total, count(*) as requests from fits group by account_id
  ), locked as (
    -- The accounts' rows locked in id order, whatever order the update below visits them in: two
    -- batches that share accounts then wait for each other instead of deadlocking.
    select a.id from accounts a where a.id in (select account_id from totals) order by a.id for update
  ), debit as (
    update accounts a
       set balance_micros = case when a.billing_plan = 'metered' then a.balance_micros else a.balance_micros - t.total end,
           metered_month = case when a.billing_plan = 'metered' then ${MONTH} else a.metered_month end,
           metered_spent_micros = case when a.billing_plan = 'metered' then ${spentThisMonth} + t.total else a.metered_spent_micros end,
           usage_count = a.usage_count + t.requests,
           usage_cost_micros = a.usage_cost_micros + t.total
      from totals t join locked l on l.id = t.account_id
     where a.id = t.account_id
       and (case when a.billing_plan = 'metered'
                 then a.monthly_cap_micros is null or ${spentThisMonth} + t.total <= a.monthly_cap_micros
                 else a.balance_micros >= t.total end)
    returning a.id, a.billing_plan
  ), usage as (
    insert into usage_records (id, account_id, api_key_id, method, path, cost_micros, request_id, billed_to, provisional_until, created_at)
    select f.usage_id, f.account_id, f.api_key_id, f.method, f.path, f.cost, f.request_id,
           case when d.billing_plan = 'metered' then 'meter' else 'balance' end,
           now() + make_interval(secs => f.provisional), now()
      from fits f join debit d on d.id = f.account_id
    returning id
  ), hours as (
    -- The rows' cells (db/tables/accounts.ts usage_hours), after their accounts' locks: rows of the
    -- same cell come from batches of the same account, which take its lock first.
    insert into usage_hours (account_id, hour, key_id, path, requests, cost_micros)
    select f.account_id, date_trunc('hour', now(), 'UTC'), coalesce(f.api_key_id, ''), f.path, count(*), sum(f.cost)
      from fits f join debit d on d.id = f.account_id
     group by 1, 2, 3, 4
    on conflict (account_id, hour, key_id, path)
      do update set requests = usage_hours.requests + excluded.requests, cost_micros = usage_hours.cost_micros + excluded.cost_micros
  ), commit_mode as (
    select set_config('synchronous_commit', ${sql.placeholder('synchronousCommit')}::text, true) as mode
  )
  select p.ord, p.api_key_id as "apiKeyId", p.account_id as "accountId", p.revoked, p.stale, p.cost as "costMicros", p.rate,
         p.usage_id in (select id from usage) as charged,
         p.usage_id in (select usage_id from fits) and p.account_id not in (select id from debit) as retry,
         p.metered, p.monthly_cap as "monthlyCap", p.key_cap as "keyCap", p.cap_period as "capPeriod", commit_mode.mode,
         p.lacks_scope as "lacksScope", p.key_scopes as "keyScopes",
         coalesce((select version from company_dataset_state where id = 1), 0) as "datasetVersion"
    from priced p, commit_mode`;

/** Requests in one statement, at most: ~200 bytes of JSON each. */
const MAX_BATCH = 256;

const toNumber = (v: string | number | bigint | null) => (v === null ? null : Number(v));

/** What every request of a batch shares: the process's standard rate and commit mode. */
export interface BatchTerms {
  defaultCostMicros: number;
  synchronousCommit: boolean;
  /** lastUsedAt older than this is reported `stale` (written outside the hot statement). */
  staleSeconds: number;
  /**
   * Batches in the database at once, at most: 1 on PGlite, which runs one statement at a time anyway;
   * 2 on PostgreSQL, so a connection works on one while the other's answer travels back.
   */
  concurrentBatches: number;
}

/** One batch statement: each request's outcome, null for a payer that does not exist, or `again`. */
async function admitBatch(db: Db, terms: BatchTerms, requests: QueuedRequest[]): Promise<Array<BatchAnswer<AdmissionOutcome | null>>> {
  const metrics = billingMetricsOf(db);
  metrics?.batch(requests.length);
  const statement = preparedSql<OutcomeRow>(db, 'admit_billed_batch', BATCH_SQL);
  const rows = await statement.execute({
    requests: JSON.stringify(
      requests.map((r, ord) => ({
        ord,
        usage_id: r.usageId,
        payer: r.payer,
        by_session: r.bySession,
        multiplier: r.multiplier,
        method: r.method,
        path: r.path,
        request_id: r.requestId,
        provisional: r.provisionalSeconds,
        scope: r.scope,
      })),
    ),
    defaultCost: terms.defaultCostMicros,
    staleSeconds: terms.staleSeconds,
    synchronousCommit: terms.synchronousCommit ? 'on' : 'off',
  });
  const byOrd = new Map(rows.map((row) => [Number(row.ord), row]));
  return requests.map((_, ord) => {
    const row = byOrd.get(ord);
    if (!row) return { value: null };
    if (row.retry) {
      // Its account moved under this batch (another instance's batch): the next one sees the new balance.
      metrics?.retry();
      return { again: true };
    }
    return {
      value: {
        apiKeyId: row.apiKeyId,
        accountId: row.accountId,
        revoked: row.revoked,
        stale: row.stale,
        costMicros: Number(row.costMicros),
        rate: toNumber(row.rate),
        charged: row.charged,
        metered: row.metered,
        monthlyCap: toNumber(row.monthlyCap),
        keyCap: toNumber(row.keyCap),
        capPeriod: row.capPeriod,
        datasetVersion: Number(row.datasetVersion),
        lacksScope: row.lacksScope,
        keyScopes: row.keyScopes,
      },
    };
  });
}

const queues = new WeakMap<Db, Map<string, BatchQueue<QueuedRequest, AdmissionOutcome | null>>>();

/** Admits a billed request through its database's queue (one per process, database and terms); resolves once its batch has committed. */
export function admitQueued(db: Db, terms: BatchTerms, request: QueuedRequest): Promise<AdmissionOutcome | null> {
  let byTerms = queues.get(db);
  if (!byTerms) queues.set(db, (byTerms = new Map()));
  const key = `${terms.defaultCostMicros}:${terms.synchronousCommit}:${terms.staleSeconds}:${terms.concurrentBatches}`;
  let queue = byTerms.get(key);
  if (!queue) {
    // Unreachable database: the requests waiting behind a batch would each wait out the same connect
    // timeout (a request's latency was two of them); they fail at once, as fast as a request that
    // finds the database down (503, retry).
    queue = new BatchQueue((requests) => admitBatch(db, terms, requests), { concurrent: terms.concurrentBatches, max: MAX_BATCH, failsEveryone: isDatabaseUnavailable });
    byTerms.set(key, queue);
  }
  return queue.add(request);
}
