/**
 * The audit log: security-relevant changes, who made them, when and from where (server/audit/).
 * Append-only: a trigger of the migration that creates it refuses every UPDATE and DELETE, so not
 * even a bug of ours can rewrite history. Each entry is written in the transaction of the change it
 * records, so a change and its entry commit together or not at all (exactly once).
 */
import { bigint, index, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const AUDIT_ACTOR_KINDS = ['key', 'session', 'operator', 'system'] as const;
export type AuditActorKind = (typeof AUDIT_ACTOR_KINDS)[number];

export const auditLog = pgTable(
  'audit_log',
  {
    /** The order of the log, and its paging cursor. */
    seq: bigint('seq', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    /** aud_…: the entry's public id. */
    id: text('id').notNull(),
    /** The account the change concerns (a test side's changes are its own account's); null: the service (an event resolved). */
    accountId: text('account_id'),
    actorKind: text('actor_kind', { enum: AUDIT_ACTOR_KINDS }).notNull(),
    /** The key's id, the session's wallet address, the operator's name, or the command. */
    actorId: text('actor_id').notNull(),
    action: text('action').notNull(),
    /** What was changed: a key, webhook or event id, a trading user. */
    targetId: text('target_id'),
    details: jsonb('details').$type<Record<string, unknown>>().notNull(),
    clientIp: text('client_ip'),
    requestId: text('request_id'),
    createdAt: at('created_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('audit_log_id_idx').on(t.id), index('audit_log_account_seq_idx').on(t.accountId, t.seq)],
);
