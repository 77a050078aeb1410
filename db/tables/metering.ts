/**
 * Metered billing exported to Stripe (issue #17): each closed minute's usage of every metered account
 * is written here (the outbox) in the same transaction that advances the cursor, then delivered to
 * Stripe's meter events with the row's deterministic identifier; `sentAt` marks delivery. A lease on
 * the cursor row lets one instance export at a time.
 */
import { bigint, index, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const meterExports = pgTable(
  'meter_exports',
  {
    accountId: text('account_id').notNull(),
    /** The minute (UTC, start) the value covers. */
    minute: at('minute').notNull(),
    stripeCustomerId: text('stripe_customer_id').notNull(),
    /** Σ usage cost of the account in that minute, micro-USD. */
    valueMicros: bigint('value_micros', { mode: 'number' }).notNull(),
    /** Stripe's idempotency: the same (account, minute) is never counted twice. */
    identifier: text('identifier').notNull(),
    sentAt: at('sent_at'),
    createdAt: at('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.minute] }), index('meter_exports_unsent_idx').on(t.sentAt, t.minute)],
);

/** One row ('stripe'): every minute before `exportedThrough` is in meter_exports; the lease names its holder. */
export const meterCursor = pgTable('meter_cursor', {
  id: text('id').primaryKey(),
  exportedThrough: at('exported_through').notNull(),
  leaseOwner: text('lease_owner'),
  leaseUntil: at('lease_until'),
});
