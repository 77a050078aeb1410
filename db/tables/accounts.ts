/**
 * Accounts, API keys, credits and usage: the money side of the platform.
 * Money is integer micro-USD (1 USD = 1,000,000) in bigint columns read as JS numbers:
 * exact below 9e15 micro-USD (9 billion USD per value), far above any balance we hold.
 */
import { sql } from 'drizzle-orm';
import { bigint, check, index, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

const micros = (name: string) => bigint(name, { mode: 'number' });
const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();

/** A customer account: owns API keys, a prepaid balance and (later) trading users. */
export const accounts = pgTable(
  'accounts',
  {
    id: text('id').primaryKey(),
    balanceMicros: micros('balance_micros').notNull().default(0),
    /** Per-account standard rate; null means the server default (COST_PER_REQUEST_USD). */
    costPerRequestMicros: micros('cost_per_request_micros'),
    /** Running totals of the usage rows (kept by the same statements that write them), so the billing summary is O(1). */
    usageCount: micros('usage_count').notNull().default(0),
    usageCostMicros: micros('usage_cost_micros').notNull().default(0),
    /** prepaid: requests are paid from the balance; metered: never refused for balance, usage is exported to Stripe. */
    billingPlan: text('billing_plan', { enum: ['prepaid', 'metered'] }).notNull().default('prepaid'),
    stripeCustomerId: text('stripe_customer_id'),
    /** Metered accounts: refused (402) above this spend in a calendar month (UTC); null = no cap. */
    monthlyCapMicros: micros('monthly_cap_micros'),
    /** Metered spend of the month named by `meteredMonth` ('2026-11'), kept by the admission statement. */
    meteredMonth: text('metered_month'),
    meteredSpentMicros: micros('metered_spent_micros').notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [
    check('accounts_balance_non_negative', sql`${t.balanceMicros} >= 0`),
    check('accounts_rate_non_negative', sql`${t.costPerRequestMicros} >= 0`),
  ],
);

/** API keys are stored only as SHA-256 hex; prefix and last4 exist to build the masked form. */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull().references(() => accounts.id),
    name: text('name').notNull(),
    keyHash: text('key_hash').notNull(),
    keyPrefix: text('key_prefix').notNull(),
    keyLast4: text('key_last4').notNull(),
    createdAt: createdAt(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
    /** Spend cap per `capPeriod`; null = none. */
    spendCapMicros: micros('spend_cap_micros'),
    capPeriod: text('cap_period', { enum: ['day', 'month'] }),
    /** The period `capSpentMicros` counts ('2026-11-24' or '2026-11', UTC), kept by the admission statement. */
    capWindow: text('cap_window'),
    capSpentMicros: micros('cap_spent_micros').notNull().default(0),
    /** What the key may do (server/accounts/scopes.ts); null = every scope. */
    scopes: text('scopes').array(),
  },
  (t) => [uniqueIndex('api_keys_key_hash_idx').on(t.keyHash), index('api_keys_account_idx').on(t.accountId, t.createdAt)],
);

/** Funds added to an account. `reference` makes a credit idempotent per account. */
export const credits = pgTable(
  'credits',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull().references(() => accounts.id),
    amountMicros: micros('amount_micros').notNull(),
    reference: text('reference').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('credits_account_reference_idx').on(t.accountId, t.reference),
    // The balance history's keyset walk: one account's credits, newest first, ties by id (server/accounts/balance-history.ts).
    index('credits_account_time_idx').on(t.accountId, t.createdAt, t.id),
    check('credits_amount_positive', sql`${t.amountMicros} > 0`),
  ],
);

/**
 * One row per billed request that succeeded (rows of failed requests are removed with their charge).
 * Invariant: accounts.balance = Σ credits − Σ usage_records.cost, at every commit.
 *
 * No foreign keys, on purpose: this is the hottest insert of the service (one per billed request),
 * and its two FK triggers were ~25% of the admission statement's database time. The statement that
 * inserts a row takes account_id and api_key_id from the key and account rows it has just joined and
 * debited, and accounts and keys are never deleted (a key is revoked, not removed), so a reference
 * cannot dangle. tests/harness/ledger.ts checks every usage row against its account and key.
 */
export const usageRecords = pgTable(
  'usage_records',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull(),
    /** The key that made the request; null for a signed-in customer's session (billed like a key: docs/decisions.md §4). */
    apiKeyId: text('api_key_id'),
    method: text('method').notNull(),
    path: text('path').notNull(),
    costMicros: micros('cost_micros').notNull(),
    requestId: text('request_id').notNull(),
    /** Who pays it: the prepaid balance, or the metered subscription (exported to Stripe). */
    billedTo: text('billed_to', { enum: ['balance', 'meter'] }).notNull().default('balance'),
    /** A metered row: the meter export batch that sent it to Stripe (null: not exported yet; see server/billing/meter-export.ts). */
    exportBatch: text('export_batch'),
    /**
     * A unit of a call priced in units that is paid only once its rows are written (the company
     * export): until the stream confirms it (null), it is refunded when this lapses, by the stream
     * as it ends or after a crash by the lapsed-units job (server/billing/lapsed-units.ts). Null for
     * every other charge.
     */
    provisionalUntil: timestamp('provisional_until', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [
    index('usage_records_account_time_idx').on(t.accountId, t.createdAt, t.id),
    // The lapsed-units job's work list: provisional rows only (a confirmed or ordinary row is not in it).
    index('usage_records_provisional_idx').on(t.provisionalUntil).where(sql`${t.provisionalUntil} is not null`),
    // The meter exporter's work list: metered rows not exported yet (exported rows leave the index).
    index('usage_records_metered_unexported_idx').on(t.createdAt).where(sql`${t.billedTo} = 'meter' and ${t.exportBatch} is null`),
  ],
);

/**
 * The usage rows summed per account, UTC hour, key ('' for a signed-in session's calls) and path, in
 * the same statements that insert and delete the rows (the admission, a capped key's admission, a
 * refund). Usage totals over a filtered range and the usage summary read these cells for the whole
 * hours of the range and the rows themselves only for its partial first and last hours, so their cost
 * grows with the span and the number of keys and paths, not with the rows (server/accounts/usage.ts).
 * Invariant: for every account, Σ requests and Σ cost_micros of its cells = the count and Σ cost of
 * its usage rows, per hour, key and path, at every commit.
 */
export const usageHours = pgTable(
  'usage_hours',
  {
    accountId: text('account_id').notNull(),
    hour: timestamp('hour', { withTimezone: true, mode: 'date' }).notNull(),
    keyId: text('key_id').notNull(),
    path: text('path').notNull(),
    requests: bigint('requests', { mode: 'number' }).notNull(),
    costMicros: micros('cost_micros').notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.hour, t.keyId, t.path] })],
);

/**
 * The hourly cells summed per UTC day (the day's midnight), kept by a trigger on usage_hours
 * (migration 0032), so every statement that writes an hour cell keeps its day in the same
 * transaction. A summary by day, or a total, over a long range reads a cell per day, key and path for
 * its whole days, hour cells only for its partial first and last days, and rows only for its partial
 * first and last hours (server/accounts/usage.ts). Invariant: Σ of an account's day cells = Σ of its
 * hour cells, per day, key and path, at every commit.
 */
export const usageDays = pgTable(
  'usage_days',
  {
    accountId: text('account_id').notNull(),
    day: timestamp('day', { withTimezone: true, mode: 'date' }).notNull(),
    keyId: text('key_id').notNull(),
    path: text('path').notNull(),
    requests: bigint('requests', { mode: 'number' }).notNull(),
    costMicros: micros('cost_micros').notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.day, t.keyId, t.path] })],
);
