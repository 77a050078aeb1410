/**
 * Metered billing exported to Stripe: each export pass marks the settled, not yet exported
 * metered usage rows with a new batch id (`usage_records.export_batch`) and, in the same transaction,
 * writes their sums per account and minute here (the outbox), one row per (account, minute, batch).
 * Each row is then delivered to Stripe's meter events with its deterministic identifier; `sentAt`
 * marks delivery. A lease on the cursor row lets one instance export at a time.
 */
import { bigint, index, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const meterExports = pgTable(
  'meter_exports',
  {
    accountId: text('account_id').notNull(),
    /** The minute (UTC, start) the value covers. */
    minute: at('minute').notNull(),
    /** The export pass that marked the usage rows summed here ('' for rows written before batches existed). */
    batch: text('batch').notNull(),
    stripeCustomerId: text('stripe_customer_id').notNull(),
    /** Σ cost of the batch's usage rows of the account in that minute, micro-USD. */
    valueMicros: bigint('value_micros', { mode: 'number' }).notNull(),
    /** Stripe's idempotency, from (account, minute, batch): a resend of this row is never counted twice. */
    identifier: text('identifier').notNull(),
    sentAt: at('sent_at'),
    createdAt: at('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.minute, t.batch] }), index('meter_exports_unsent_idx').on(t.sentAt, t.minute)],
);

/** One row ('stripe'): the export lease (who holds it, until when). */
export const meterCursor = pgTable('meter_cursor', {
  id: text('id').primaryKey(),
  leaseOwner: text('lease_owner'),
  leaseUntil: at('lease_until'),
});
