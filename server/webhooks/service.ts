/**
 * Webhooks of an account: register, list, delete, rotate the secret, send a test event,
 * read the deliveries. Every statement filters by the caller's account, so another account's webhook
 * id is simply not found (404). Secrets are shown once (creation, rotation) and stored sealed.
 */
import { and, count, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { resultRows } from '../../db/prepared.ts';
import { webhookDeliveries, webhooks } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import { newId } from '../lib/ids.ts';
import type { WebhookHandles } from './handles.ts';
import { newWebhookSecret, sealSecret } from './signing.ts';
import { isLocalReceiver, isLoopbackHost, localReceiversOf, resolveTarget, type LocalReceivers, type Lookup } from './ssrf.ts';
import { WEBHOOK_EVENT_TYPES } from '../../db/schema.ts';

/** The event types a webhook may subscribe to (one list, beside the outbox's: db/tables/notifications.ts). */
export { WEBHOOK_EVENT_TYPES };
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The type of the event POST /api/webhooks/{id}/test sends (to that webhook only, whatever it subscribes to). */
export const TEST_EVENT_TYPE = 'webhook.test';

export const MAX_WEBHOOKS_PER_ACCOUNT = 10;
export const MAX_URL_LENGTH = 2048;
/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export type WebhookRow = typeof webhooks.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

export interface LookupOption {
  /** DNS for the SSRF check (tests); the system resolver otherwise. */
  lookup?: Lookup;
}

/**
 * What a refusal of a loopback URL adds: on a development server, how to allow a receiver on this
 * machine; where WEBHOOK_LOCAL_RECEIVERS is set but not applied, why. Nothing for other URLs, nor on a
 * production server that does not set it.
 */
function localHint(services: WebhookHandles, url: URL, local: LocalReceivers): string {
  if (!isLoopbackHost(url)) return '';
  if (local.ignoredBecause) return ` (WEBHOOK_LOCAL_RECEIVERS is not applied: ${local.ignoredBecause})`;
  if (services.config.nodeEnv === 'production') return '';
  return local.receivers.length
    ? ` (WEBHOOK_LOCAL_RECEIVERS allows ${local.receivers.join(', ')} only)`
    : ' (to try webhooks with a receiver on this machine, list its host:port in WEBHOOK_LOCAL_RECEIVERS: docs/webhooks.md, "Trying webhooks locally")';
}

/**
 * The URL as stored (WHATWG-normalised), or a 400 naming the rule it breaks: https (http only for a
 * local receiver, ssrf.ts's localReceiversOf, or when WEBHOOK_ALLOW_PRIVATE_NETWORKS=true), no
 * credentials in it, at most MAX_URL_LENGTH characters, and a host that resolves only to public
 * addresses (a local receiver: only to loopback ones).
 */
export async function checkedUrl(services: WebhookHandles, text: string, options: LookupOption = {}): Promise<string> {
  const { allowPrivateNetworks, timeoutMs } = services.config.webhooks;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ApiError('BAD_REQUEST', 'url: must be an absolute URL, e.g. https://example.com/webhooks');
  }
  const local = localReceiversOf(services.config);
  const httpAllowed = allowPrivateNetworks || isLocalReceiver(url, local.receivers);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && httpAllowed)) {
    throw new ApiError('BAD_REQUEST', `url: must use https${httpAllowed ? ' or http' : ''} (got ${url.protocol.replace(/:$/, '')})${localHint(services, url, local)}`);
  }
  if (url.username || url.password) throw new ApiError('BAD_REQUEST', 'url: must not contain a user name or password; authenticate deliveries by their signature');
  if (!url.hostname) throw new ApiError('BAD_REQUEST', 'url: needs a host');
  url.hash = '';
  if (url.href.length > MAX_URL_LENGTH) throw new ApiError('BAD_REQUEST', `url: must be at most ${MAX_URL_LENGTH} characters`);
  const target = await resolveTarget(url, { allowPrivate: allowPrivateNetworks, localReceivers: local.receivers, lookup: options.lookup, timeoutMs: Math.min(timeoutMs, 5_000) });
  if (!target.ok) {
    throw new ApiError(
      'BAD_REQUEST',
      target.refused
        ? `url: refused: ${target.reason}; webhooks are delivered only to public internet addresses${localHint(services, url, local)}`
        : `url: ${target.reason}; a webhook URL's host must resolve to a public address`,
    );
  }
  return url.href;
}

export interface CreatedWebhook {
  id: string;
  url: string;
  events: WebhookEventType[];
  secret: string;
  createdAt: Date;
}

/** A new webhook and its secret (returned only here). At most MAX_WEBHOOKS_PER_ACCOUNT active ones per account. */
/** `options.db`: the transaction to write in (the audit log's, server/audit/log.ts); the service's database otherwise. */
export async function createWebhook(services: WebhookHandles, accountId: string, input: { url: string; events: WebhookEventType[] }, options: LookupOption & { db?: Db } = {}): Promise<CreatedWebhook> {
  const url = await checkedUrl(services, input.url, options);
  const events = WEBHOOK_EVENT_TYPES.filter((type) => input.events.includes(type));
  const id = newId('wh');
  const secret = newWebhookSecret();
  const secretSealed = sealSecret(services.credentialCipher, secret, accountId, id);
  const db = options.db ?? services.database.db;
  const row = await db.transaction(async (tx) => {
    // One creation at a time per account, so the limit holds under concurrent requests.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`webhooks:${accountId}`}, 0))`);
    const [existing] = await tx.select({ n: count() }).from(webhooks).where(and(eq(webhooks.accountId, accountId), eq(webhooks.status, 'active')));
    if ((existing?.n ?? 0) >= MAX_WEBHOOKS_PER_ACCOUNT) {
      throw new ApiError('BAD_REQUEST', `An account may have at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks; delete one first (DELETE /api/webhooks/{id})`);
    }
    const [inserted] = await tx.insert(webhooks).values({ id, accountId, url, events, secretSealed }).returning();
    return inserted!;
  });
  return { id, url, events, secret, createdAt: row.createdAt };
}

/** The account's active webhooks, oldest first. */
export function listWebhooks(db: Db, accountId: string): Promise<WebhookRow[]> {
  return db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.accountId, accountId), eq(webhooks.status, 'active')))
    .orderBy(webhooks.createdAt, webhooks.id);
}

const notFound = (id: string) => new ApiError('NOT_FOUND', `id: no webhook ${id}; GET /api/webhooks lists yours`);

/** The account's active webhook `id`, or 404. */
export async function getWebhook(db: Db, accountId: string, id: string): Promise<WebhookRow> {
  const [row] = await db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.id, id), eq(webhooks.accountId, accountId), eq(webhooks.status, 'active')));
  if (!row) throw notFound(id);
  return row;
}

/**
 * Deletes a webhook: it receives nothing more, and its pending deliveries stop (marked failed,
 * "webhook deleted"; one already being sent finishes). Deleting it again answers the same.
 */
/** `changed`: false when it was already deleted (a repeated delete answers the same and changes nothing). */
export async function deleteWebhook(db: Db, accountId: string, id: string): Promise<{ id: string; deletedAt: Date; changed: boolean }> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .select({ status: webhooks.status, updatedAt: webhooks.updatedAt })
      .from(webhooks)
      .where(and(eq(webhooks.id, id), eq(webhooks.accountId, accountId)))
      .for('update');
    if (!row) throw notFound(id);
    if (row.status === 'deleted') return { id, deletedAt: row.updatedAt, changed: false };
    const [deleted] = await tx
      .update(webhooks)
      .set({ status: 'deleted', previousSecretSealed: null, previousSecretUntil: null, updatedAt: sql`now()` })
      .where(eq(webhooks.id, id))
      .returning({ updatedAt: webhooks.updatedAt });
    await tx
      .update(webhookDeliveries)
      .set({ status: 'failed', lastError: 'webhook deleted', completedAt: sql`now()`, leaseOwner: null, leaseUntil: null })
      .where(and(eq(webhookDeliveries.webhookId, id), eq(webhookDeliveries.status, 'pending')));
    return { id, deletedAt: deleted!.updatedAt, changed: true };
  });
}

/**
 * A new secret, returned only here. The one it replaces keeps signing beside it (both signatures in
 * `webhook-signature`) for ROTATION_OVERLAP_MS; a second rotation within that time drops the oldest.
 */
export async function rotateWebhookSecret(services: WebhookHandles, accountId: string, id: string, db: Db = services.database.db): Promise<{ id: string; secret: string; previousSecretExpiresAt: Date }> {
  const secret = newWebhookSecret();
  const sealed = sealSecret(services.credentialCipher, secret, accountId, id);
  const [row] = await db
    .update(webhooks)
    .set({
      previousSecretSealed: sql`${webhooks.secretSealed}`,
      previousSecretUntil: sql`date_trunc('milliseconds', now() + make_interval(secs => ${ROTATION_OVERLAP_MS / 1000}))`,
      secretSealed: sealed,
      updatedAt: sql`now()`,
    })
    .where(and(eq(webhooks.id, id), eq(webhooks.accountId, accountId), eq(webhooks.status, 'active')))
    .returning({ until: webhooks.previousSecretUntil });
  if (!row) throw notFound(id);
  return { id, secret, previousSecretExpiresAt: row.until! };
}

/**
 * Queues a `webhook.test` event for this webhook only; the worker delivers it like any other (same
 * signing, retries and record). Its body: {id, type: "webhook.test", timestamp, data: {webhookId, message}}.
 */
export async function sendTestEvent(db: Db, accountId: string, id: string): Promise<DeliveryRow> {
  const eventId = newId('evt');
  const timestamp = new Date();
  const payload = JSON.stringify({ id: eventId, type: TEST_EVENT_TYPE, timestamp: timestamp.toISOString(), data: { webhookId: id, message: 'A test event from POST /api/webhooks/{id}/test' } });
  const [row] = await db.execute(sql`
    insert into webhook_deliveries (id, webhook_id, account_id, event_id, type, payload)
    select ${newId('msg')}, w.id, w.account_id, ${eventId}, ${TEST_EVENT_TYPE}, ${payload}
      from webhooks w
     where w.id = ${id} and w.account_id = ${accountId} and w.status = 'active'
    returning id`).then((r) => resultRows<{ id: string }>(r));
  if (!row) throw notFound(id);
  const [delivery] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, row.id));
  return delivery!;
}

export type DeliveryStatus = DeliveryRow['status'];

/** A webhook's deliveries, newest first; `total` counts the filtered set. */
export async function listDeliveries(
  db: Db,
  accountId: string,
  id: string,
  page: { limit: number; offset: number; status?: DeliveryStatus },
): Promise<{ deliveries: DeliveryRow[]; total: number }> {
  await getWebhook(db, accountId, id);
  const where = and(eq(webhookDeliveries.webhookId, id), eq(webhookDeliveries.accountId, accountId), page.status ? eq(webhookDeliveries.status, page.status) : undefined);
  const [rows, [total]] = await Promise.all([
    db.select().from(webhookDeliveries).where(where).orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id)).limit(page.limit).offset(page.offset),
    db.select({ n: count() }).from(webhookDeliveries).where(where),
  ]);
  return { deliveries: rows, total: total?.n ?? 0 };
}
