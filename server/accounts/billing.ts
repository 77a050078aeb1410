/**
 * Per-request billing. A billed request is admitted by one statement that authenticates its key,
 * debits the balance only `WHERE balance >= cost` and inserts the usage row from the debited row, so concurrent
 * requests can never overdraw and balance = credits − Σ usage holds at every commit. If the request
 * then fails, the usage row is deleted and its cost returned, again in one statement: errors cost nothing.
 * The same statements keep the account's usage totals, so balance, totals and rows never disagree.
 *
 * Commit mode: every billed request of an account updates that account's balance row, so they run one
 * after another, each holding the row lock until its commit. Waiting for the WAL flush at each commit
 * caps one account at ~1 / flush latency (measured ~1,200 requests/s here). By default these two
 * statements commit asynchronously (`set_config('synchronous_commit', 'off', true)`, for their own
 * transaction only): still atomic, so balance = credits − Σ usage holds at every commit and after any
 * crash of ours; only a crash of PostgreSQL itself can forget the last < 1 s of charges (requests then
 * served free, never charged twice). BILLING_SYNCHRONOUS_COMMIT=true restores the flush wait; the
 * embedded PGlite always waits (it dies with us).
 * Everything else (credits, keys, trades) always commits synchronously.
 */
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { preparedSql } from '../../db/prepared.ts';
import { accounts } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import { LAST_USED_RESOLUTION_MS, touchApiKey, type KeyPrincipal } from './api-keys.ts';

export type PriceTier = 'standard' | 'premium';

/**
 * Whether billing statements wait for the WAL flush. Always on the embedded PGlite: it runs inside
 * this process, so a crash of ours is a crash of the database and would forget unflushed charges.
 */
export function billingCommitsSynchronously(configured: boolean, databaseKind: 'postgres' | 'pglite'): boolean {
  return configured || databaseKind === 'pglite';
}
/** Private-company data costs ten times the standard rate (interface.md, Billing 2). */
export const PREMIUM_MULTIPLIER = 10;

export function priceFor(tier: PriceTier, standardMicros: number): number {
  return tier === 'premium' ? standardMicros * PREMIUM_MULTIPLIER : standardMicros;
}

export interface Charge {
  usageId: string;
  accountId: string;
  costMicros: number;
}

export interface BilledRequest {
  /** SHA-256 hex of the presented API key. */
  keyHash: string;
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
}

export interface Admission {
  principal: KeyPrincipal;
  charge: Charge;
}

interface AdmissionRow {
  apiKeyId: string;
  accountId: string;
  revoked: boolean;
  stale: boolean;
  costMicros: string | number | bigint;
  rate: string | number | bigint | null;
  charged: boolean;
}

/**
 * The whole admission of a billed request in ONE database round trip: find the key (by hash, with
 * its account's rate), and unless it is revoked, debit the cost `WHERE balance >= cost` and insert the
 * usage row from the debited row. Keys are never cached, so a revocation holds on the very next
 * request on every instance. Throws UNAUTHORIZED (unknown or revoked key) or INSUFFICIENT_BALANCE;
 * `onAccount` hears the key's account before a refusal for want of balance (the request log names it).
 */
export async function admitBilledRequest(db: Db, request: BilledRequest, onAccount: (accountId: string) => void = () => {}): Promise<Admission> {
  const statement = preparedSql<AdmissionRow>(
    db,
    'admit_billed_request',
    sql`
      with key as (
        select k.id as api_key_id, k.account_id, k.revoked_at is not null as revoked,
               (k.last_used_at is null or k.last_used_at < now() - make_interval(secs => ${sql.placeholder('staleSeconds')}::int)) as stale,
               a.cost_per_request_micros as rate,
               coalesce(a.cost_per_request_micros, ${sql.placeholder('defaultCost')}::bigint) * ${sql.placeholder('multiplier')}::bigint as cost
          from api_keys k join accounts a on a.id = k.account_id
         where k.key_hash = ${sql.placeholder('keyHash')}::text
      ), debit as (
        update accounts a
           set balance_micros = a.balance_micros - key.cost,
               usage_count = a.usage_count + 1,
               usage_cost_micros = a.usage_cost_micros + key.cost
          from key
         where a.id = key.account_id and not key.revoked and a.balance_micros >= key.cost
        returning a.id
      ), usage as (
        insert into usage_records (id, account_id, api_key_id, method, path, cost_micros, request_id, created_at)
        select ${sql.placeholder('usageId')}::text, key.account_id, key.api_key_id, ${sql.placeholder('method')}::text,
               ${sql.placeholder('path')}::text, key.cost, ${sql.placeholder('requestId')}::text, now()
          from key join debit on debit.id = key.account_id
        returning id
      ), commit_mode as (
        select set_config('synchronous_commit', ${sql.placeholder('synchronousCommit')}::text, true) as mode
      )
      select key.api_key_id as "apiKeyId", key.account_id as "accountId", key.revoked, key.stale,
             key.cost as "costMicros", key.rate, exists (select 1 from usage) as charged, commit_mode.mode
        from key, commit_mode`,
  );
  const { usageId } = request;
  const [row] = await statement.execute({
    keyHash: request.keyHash,
    defaultCost: request.defaultCostMicros,
    multiplier: request.tier === 'premium' ? PREMIUM_MULTIPLIER : 1,
    staleSeconds: LAST_USED_RESOLUTION_MS / 1000,
    usageId,
    method: request.method,
    path: request.path,
    requestId: request.requestId,
    synchronousCommit: request.synchronousCommit ? 'on' : 'off',
  });
  if (!row) throw new ApiError('UNAUTHORIZED', 'Invalid API key');
  if (row.revoked) throw new ApiError('UNAUTHORIZED', 'API key has been revoked');
  onAccount(row.accountId);
  // lastUsed is written at most once per resolution, outside the hot statement (it locks the key row).
  if (row.stale) await touchApiKey(db, row.apiKeyId);
  if (!row.charged) throw new ApiError('INSUFFICIENT_BALANCE', 'Account balance is below the cost of this request; add funds');
  const costMicros = Number(row.costMicros);
  return {
    principal: { apiKeyId: row.apiKeyId, accountId: row.accountId, costPerRequestMicros: row.rate === null ? null : Number(row.rate) },
    charge: { usageId, accountId: row.accountId, costMicros },
  };
}

/**
 * Undoes a reservation: removes its usage row and returns exactly what that row cost (one statement).
 * By usage id alone (server-generated, 128 random bits): a charge whose admission answer was lost is
 * refunded without knowing its account. A second refund of the same charge finds no row and does nothing.
 */
export async function refundCharge(db: Db, charge: Charge, synchronousCommit: boolean): Promise<void> {
  const statement = preparedSql(
    db,
    'refund_charge',
    sql`
      with removed as (
        delete from usage_records
         where id = ${sql.placeholder('usageId')}::text
        returning account_id, cost_micros
      ), commit_mode as (
        select set_config('synchronous_commit', ${sql.placeholder('synchronousCommit')}::text, true) as mode
      )
      update accounts a
         set balance_micros = a.balance_micros + removed.cost_micros,
             usage_count = a.usage_count - 1,
             usage_cost_micros = a.usage_cost_micros - removed.cost_micros
        from removed, commit_mode
       where a.id = removed.account_id`,
  );
  await statement.execute({ usageId: charge.usageId, synchronousCommit: synchronousCommit ? 'on' : 'off' });
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
