/**
 * The audit log (db/tables/audit.ts; docs/accounts.md, "Audit log"): every security-relevant change —
 * keys, credentials, webhooks, credits, prices and plans, event resolutions and listings, sign-ins —
 * with its actor (key, session, operator or command), the account it concerns, when and from which
 * address. `audited` runs the change and writes its entry in one transaction, so each change is
 * recorded exactly once: a crash, a failed change or a retry that changed nothing writes none.
 */
import { and, desc, eq, inArray, lt, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { auditLog, type AuditActorKind } from '../../db/schema.ts';
import { newId } from '../lib/ids.ts';

export const AUDIT_ACTIONS = [
  'key.created',
  'key.revoked',
  'credentials.stored',
  'credentials.deleted',
  'webhook.created',
  'webhook.deleted',
  'webhook.secret_rotated',
  'account.credited',
  'account.rate_set',
  'account.plan_set',
  'event.resolved',
  'event.listing_set',
  'session.signed_in',
  'session.signed_out',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who made a change, and from where. */
export interface AuditActor {
  kind: AuditActorKind;
  id: string;
  clientIp: string | null;
  requestId: string | null;
}

export interface AuditEntry {
  action: AuditAction;
  accountId: string | null;
  targetId?: string | null;
  details?: Record<string, unknown>;
}

/** Writes one entry; `db` is the transaction of the change it records. */
export async function recordAudit(db: Db, actor: AuditActor, entry: AuditEntry): Promise<void> {
  await db.insert(auditLog).values({
    id: newId('aud'),
    accountId: entry.accountId,
    actorKind: actor.kind,
    actorId: actor.id,
    action: entry.action,
    targetId: entry.targetId ?? null,
    details: entry.details ?? {},
    clientIp: actor.clientIp,
    requestId: actor.requestId,
  });
}

/**
 * Runs `change` in a transaction and records what it did in the same one: `entryOf` says, from the
 * change's result, what to record (null: nothing changed, nothing recorded — a repeated credit, a
 * deletion of nothing).
 */
export async function audited<T>(db: Db, actor: AuditActor, change: (tx: Db) => Promise<T>, entryOf: (result: T) => AuditEntry | null): Promise<T> {
  return db.transaction(async (tx) => {
    const result = await change(tx);
    const entry = entryOf(result);
    if (entry) await recordAudit(tx, actor, entry);
    return result;
  });
}

export type AuditRow = typeof auditLog.$inferSelect;

/**
 * Entries newest first, `limit` at a time from a cursor (the last seq seen): one index walk however
 * long the log. `accountIds` limits them to those accounts (an account and its test side); absent:
 * every entry (operators).
 */
export async function listAudit(db: Db, input: { accountIds?: string[]; limit: number; before?: number; action?: AuditAction }) {
  const where: (SQL | undefined)[] = [
    input.accountIds ? inArray(auditLog.accountId, input.accountIds) : undefined,
    input.before !== undefined ? lt(auditLog.seq, input.before) : undefined,
    input.action ? eq(auditLog.action, input.action) : undefined,
  ];
  const rows = await db
    .select()
    .from(auditLog)
    .where(and(...where))
    .orderBy(desc(auditLog.seq))
    .limit(input.limit + 1);
  const page = rows.slice(0, input.limit);
  return { entries: page, nextCursor: rows.length > input.limit ? String(page.at(-1)!.seq) : null };
}
