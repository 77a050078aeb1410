/**
 * What happened to an account, for the customer's own streams and webhooks.
 *
 * `account_events` is the outbox: a row is written in the same transaction as the change it
 * announces (an order filled, a position settled, a deposit credited…), with a database-wide
 * increasing `seq` that private streams tail and resume from. Each event matching one of the
 * account's webhooks also gets a `webhook_deliveries` row in that same transaction; the delivery
 * worker sends it (at least once, the same `webhook-id` on every retry) under a lease, so several
 * instances never deliver one event twice at the same time and a killed process loses nothing.
 */
import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** The event types a webhook may subscribe to. */
export const WEBHOOK_EVENT_TYPES = [
  'order.filled',
  'order.rejected',
  'position.opened',
  'position.closed',
  'position.settled',
  'event.resolved',
  'event.listed',
  'deposit.credited',
  'balance.low',
] as const;

/** Every event type of the outbox: the webhooks', and balance.changed, which only feeds the private streams. */
export const ACCOUNT_EVENT_TYPES = [...WEBHOOK_EVENT_TYPES, 'balance.changed'] as const;
export type AccountEventType = (typeof ACCOUNT_EVENT_TYPES)[number];

export const accountEvents = pgTable(
  'account_events',
  {
    /** Resume point of the private stream (SSE `id`), increasing across the whole table. */
    seq: bigint('seq', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    /** evt_…: the event's public id (a webhook delivery's payload carries it). */
    id: text('id').notNull(),
    accountId: text('account_id').notNull(),
    /** The trading user (x-user-id) the event concerns; null for account-wide events. */
    userId: text('user_id'),
    type: text('type', { enum: ACCOUNT_EVENT_TYPES }).notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    createdAt: at('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('account_events_id_idx').on(t.id),
    index('account_events_account_seq_idx').on(t.accountId, t.seq),
    // The last balance.low of an account, in one index probe (server/webhooks/balance-low.ts).
    index('account_events_balance_low_idx').on(t.accountId, t.seq).where(sql`${t.type} = 'balance.low'`),
  ],
);

export const webhooks = pgTable(
  'webhooks',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull(),
    url: text('url').notNull(),
    /** The event types it receives. */
    events: jsonb('events').$type<string[]>().notNull(),
    /** whsec_… sealed with the credential cipher (server/lib/credential-cipher.ts): never stored in clear. */
    secretSealed: text('secret_sealed').notNull(),
    /** After a rotation, the previous secret keeps signing beside the new one until this time. */
    previousSecretSealed: text('previous_secret_sealed'),
    previousSecretUntil: at('previous_secret_until'),
    status: text('status', { enum: ['active', 'deleted'] }).notNull().default('active'),
    createdAt: at('created_at').notNull().defaultNow(),
    updatedAt: at('updated_at').notNull().defaultNow(),
  },
  (t) => [index('webhooks_account_idx').on(t.accountId, t.createdAt)],
);

export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    /** msg_…: the `webhook-id` header, the same on every attempt. */
    id: text('id').primaryKey(),
    webhookId: text('webhook_id').notNull(),
    accountId: text('account_id').notNull(),
    eventId: text('event_id').notNull(),
    type: text('type').notNull(),
    /** The body sent, fixed when the event happened (its bytes are what is signed). */
    payload: text('payload').notNull(),
    /** pending (to send or retry) · succeeded · failed (gave up after the retry window). */
    status: text('status', { enum: ['pending', 'succeeded', 'failed'] }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: at('next_attempt_at').notNull().defaultNow(),
    /** An instance sending it holds it until then (a crashed sender's lease runs out). */
    leaseOwner: text('lease_owner'),
    leaseUntil: at('lease_until'),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    createdAt: at('created_at').notNull().defaultNow(),
    completedAt: at('completed_at'),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_once_idx').on(t.webhookId, t.eventId),
    index('webhook_deliveries_due_idx').on(t.status, t.nextAttemptAt),
    index('webhook_deliveries_webhook_idx').on(t.webhookId, t.createdAt),
    check('webhook_deliveries_attempts', sql`${t.attempts} >= 0`),
  ],
);

/**
 * Streams held open, one row per connection, renewed while it lives: how many a key
 * holds across instances (429 beyond the limit) and what each has been billed.
 */
export const streamLeases = pgTable(
  'stream_leases',
  {
    id: text('id').primaryKey(),
    /** The API key holding it (its hash), or null for a public stream (limited per client address). */
    keyHash: text('key_hash'),
    accountId: text('account_id'),
    clientIp: text('client_ip'),
    kind: text('kind', { enum: ['market', 'account'] }).notNull(),
    openedAt: at('opened_at').notNull().defaultNow(),
    /** Renewed by its instance; a lease past this time is a stream that died with its process. */
    expiresAt: at('expires_at').notNull(),
  },
  (t) => [
    index('stream_leases_key_idx').on(t.keyHash, t.expiresAt),
    index('stream_leases_ip_idx').on(t.clientIp, t.expiresAt),
    index('stream_leases_account_idx').on(t.accountId, t.expiresAt),
  ],
);
