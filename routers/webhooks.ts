/**
 * Signed webhooks: an account registers URLs that receive its events, signed as the
 * Standard Webhooks specification says. Key routes, billed at the standard rate, and open to the
 * account owner's session for the dashboard, billed like a key's call (docs/decisions.md §4). The domain is server/webhooks/; docs/webhooks.md
 * is the user documentation.
 */
import { z } from 'zod';
import { router } from '../server/platform/procedures/trpc.ts';
import { apiKeyProcedure } from '../server/platform/procedures/base.ts';
import {
  createWebhook,
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  MAX_URL_LENGTH,
  MAX_WEBHOOKS_PER_ACCOUNT,
  rotateWebhookSecret,
  sendTestEvent,
  TEST_EVENT_TYPE,
  WEBHOOK_EVENT_TYPES,
  type DeliveryRow,
  type WebhookRow,
} from '../server/webhooks/service.ts';
import { iso, isoOrNull, isoString, optionalParams, wholeNumber } from './params.ts';
import { pageFields, pageOffset } from './trading-paging.ts';
import { webhookEventsInput } from '../server/webhooks/input.ts';
import { audited } from '../server/audit/log.ts';
import { auditActorOf } from '../server/platform/procedures/audit-actor.ts';

const TAG = ['Webhooks'];
const DOCS = 'docs/webhooks.md';

const eventType = z.enum(WEBHOOK_EVENT_TYPES);
const webhookId = () => z.string().min(1).max(64).meta({ description: 'The webhook id (wh_…, from GET /api/webhooks)', example: 'wh_4Fk8NpQ2vRm7XcT9bLy3Wd' });
const secret = () => z.string().meta({ description: 'whsec_ + base64 of 32 random bytes: the Standard Webhooks signing secret. Shown only in this answer; store it now', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' });

const webhook = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(eventType),
  createdAt: isoString(),
  previousSecretExpiresAt: isoString().nullable().meta({ description: 'After a rotation, the previous secret keeps signing beside the new one until then; null otherwise' }),
});
const webhookView = (w: WebhookRow) => ({
  id: w.id,
  url: w.url,
  events: w.events.filter((e): e is (typeof WEBHOOK_EVENT_TYPES)[number] => (WEBHOOK_EVENT_TYPES as readonly string[]).includes(e)),
  createdAt: iso(w.createdAt),
  previousSecretExpiresAt: w.previousSecretUntil && w.previousSecretUntil > new Date() ? iso(w.previousSecretUntil) : null,
});

const delivery = z.object({
  id: z.string().meta({ description: 'The webhook-id header: the same on every attempt (dedupe by it)' }),
  eventId: z.string().meta({ description: 'The event (evt_…): the body\'s id' }),
  type: z.string().meta({ description: `The event type, or ${TEST_EVENT_TYPE} for a test` }),
  status: z.enum(['pending', 'succeeded', 'failed']).meta({ description: 'pending: to send or to retry; succeeded: a 2xx answer; failed: refused address, webhook deleted, or the retry window ended' }),
  attempts: z.number().int(),
  lastStatusCode: z.number().int().nullable().meta({ description: "The receiver's HTTP status at the last attempt; null when it did not answer" }),
  lastError: z.string().nullable(),
  nextAttemptAt: isoString().nullable().meta({ description: 'When a pending delivery is tried next; null once it ended' }),
  createdAt: isoString(),
  completedAt: isoString().nullable(),
});
const deliveryView = (d: DeliveryRow) => ({
  id: d.id,
  eventId: d.eventId,
  type: d.type,
  status: d.status,
  attempts: d.attempts,
  lastStatusCode: d.lastStatusCode,
  lastError: d.lastError,
  nextAttemptAt: d.status === 'pending' ? iso(d.nextAttemptAt) : null,
  createdAt: iso(d.createdAt),
  completedAt: isoOrNull(d.completedAt),
});

export const webhooksRouter = router({
  create: apiKeyProcedure
    .meta({
      scope: 'account:write',
      session: true,
      successStatus: 201,
      openapi: {
        method: 'POST',
        path: '/webhooks',
        tags: TAG,
        summary: 'Register a webhook: its events are POSTed to the URL, signed (Standard Webhooks); the secret is returned only here',
        description: `At most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks per account. The URL must be https and resolve to public addresses only (loopback, private, link-local and metadata addresses are refused). See ${DOCS}.`,
      },
    })
    .input(
      z.strictObject({
        url: z.string().min(1).max(MAX_URL_LENGTH).meta({ description: `Where events are POSTed: https, at most ${MAX_URL_LENGTH} characters`, example: 'https://example.com/hooks/pre-ipo' }),
        events: webhookEventsInput().meta({ example: ['order.filled', 'position.settled', 'balance.low'] }),
      }),
    )
    .output(webhook.omit({ previousSecretExpiresAt: true }).extend({ secret: secret() }))
    .mutation(async ({ ctx, input }) => {
      const accountId = ctx.principal.accountId;
      const created = await audited(ctx.services.database.db, await auditActorOf(ctx), (tx) => createWebhook(ctx.services, accountId, input, { db: tx }), (w) => ({
        action: 'webhook.created',
        accountId,
        targetId: w.id,
        details: { url: w.url, events: w.events },
      }));
      return { id: created.id, url: created.url, events: created.events, secret: created.secret, createdAt: iso(created.createdAt) };
    }),

  list: apiKeyProcedure
    .meta({
      scope: 'account:read',
      session: true,
      openapi: {
        method: 'GET',
        path: '/webhooks',
        tags: TAG,
        summary: "The account's webhooks (never their secrets)",
        description: `Every webhook of the calling account: its URL, the event types it receives, when it was created and, after a secret rotation, until when the previous secret still signs. Secrets are shown only when created or rotated. See ${DOCS}.`,
      },
    })
    .input(optionalParams({}))
    .output(z.object({ webhooks: z.array(webhook) }))
    .query(async ({ ctx }) => ({ webhooks: (await listWebhooks(ctx.services.database.db, ctx.principal.accountId)).map(webhookView) })),

  delete: apiKeyProcedure
    .meta({
      scope: 'account:write',
      session: true,
      openapi: {
        method: 'DELETE',
        path: '/webhooks/{id}',
        tags: TAG,
        summary: 'Delete a webhook: it receives nothing more and its pending deliveries stop',
        description: 'Deletes the webhook at once: no new event is sent to it, and its pending deliveries end as failed. 404 when the account has no such webhook.',
        errorResponses: [404],
      },
    })
    .input(z.strictObject({ id: webhookId() }))
    .output(z.object({ id: z.string(), status: z.literal('deleted'), deletedAt: isoString() }))
    .mutation(async ({ ctx, input }) => {
      const accountId = ctx.principal.accountId;
      const deleted = await audited(ctx.services.database.db, await auditActorOf(ctx), (tx) => deleteWebhook(tx, accountId, input.id), (d) => (d.changed ? { action: 'webhook.deleted', accountId, targetId: d.id } : null));
      return { id: deleted.id, status: 'deleted' as const, deletedAt: iso(deleted.deletedAt) };
    }),

  test: apiKeyProcedure
    .meta({
      scope: 'account:write',
      session: true,
      successStatus: 202,
      openapi: {
        method: 'POST',
        path: '/webhooks/{id}/test',
        tags: TAG,
        summary: `Send a ${TEST_EVENT_TYPE} event to this webhook only, through the normal delivery (signed, retried, recorded)`,
        description: `Queues a ${TEST_EVENT_TYPE} event for this webhook alone and answers 202 with its delivery, before it is sent: check your receiver, or GET /api/webhooks/{id}/deliveries for the outcome. It is signed and retried like any event.`,
        errorResponses: [404],
      },
    })
    .input(z.strictObject({ id: webhookId() }))
    .output(delivery)
    .mutation(async ({ ctx, input }) => deliveryView(await sendTestEvent(ctx.services.database.db, ctx.principal.accountId, input.id))),

  rotateSecret: apiKeyProcedure
    .meta({
      scope: 'account:write',
      session: true,
      openapi: {
        method: 'POST',
        path: '/webhooks/{id}/rotate-secret',
        tags: TAG,
        summary: 'A new signing secret, returned only here; the previous one keeps signing beside it for 24 hours',
        description:
          'Replaces the signing secret. For 24 hours every delivery carries both signatures (the webhook-signature header lists both), so a receiver can switch to the new secret without missing a delivery; then only the new one signs.',
        errorResponses: [404],
      },
    })
    .input(z.strictObject({ id: webhookId() }))
    .output(z.object({ id: z.string(), secret: secret(), previousSecretExpiresAt: isoString() }))
    .mutation(async ({ ctx, input }) => {
      const accountId = ctx.principal.accountId;
      const rotated = await audited(ctx.services.database.db, await auditActorOf(ctx), (tx) => rotateWebhookSecret(ctx.services, accountId, input.id, tx), (r) => ({
        action: 'webhook.secret_rotated',
        accountId,
        targetId: r.id,
      }));
      return { id: rotated.id, secret: rotated.secret, previousSecretExpiresAt: iso(rotated.previousSecretExpiresAt) };
    }),

  deliveries: apiKeyProcedure
    .meta({
      scope: 'account:read',
      session: true,
      openapi: {
        method: 'GET',
        path: '/webhooks/{id}/deliveries',
        tags: TAG,
        summary: "A webhook's deliveries, newest first: status, attempts, the last answer or error",
        description: `The deliveries of one webhook, newest first: the event, its status (pending, succeeded, failed), how many attempts, the receiver's last HTTP status or error, and when a pending one is tried next. Filter by status; page with limit and offset. See ${DOCS} for the retry schedule.`,
        errorResponses: [404],
      },
    })
    .input(
      z.strictObject({
        id: webhookId(),
        // The description sits inside optional(): the OpenAPI generator documents an optional query parameter by its inner schema.
        status: z.enum(['pending', 'succeeded', 'failed']).meta({ description: 'Only deliveries in this state', example: 'failed' }).optional(),
        limit: wholeNumber({ min: 1, max: 200 }).default(50).meta({ description: 'Items per page, 1 to 200, default 50', example: 20 }),
        offset: pageOffset(),
      }),
    )
    .output(z.object({ deliveries: z.array(delivery), ...pageFields }))
    .query(async ({ ctx, input }) => {
      const page = await listDeliveries(ctx.services.database.db, ctx.principal.accountId, input.id, { limit: input.limit, offset: input.offset, status: input.status });
      return { deliveries: page.deliveries.map(deliveryView), total: page.total, limit: input.limit, offset: input.offset };
    }),
});
