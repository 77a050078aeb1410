/**
 * /openapi.json, `webhooks` (OpenAPI 3.1): what the service POSTs to a customer's webhook URL
 * (docs/webhooks.md), one entry per event type — every type of WEBHOOK_EVENT_TYPES (the one list,
 * db/tables/notifications.ts, re-exported by server/webhooks/service.ts) and `webhook.test` — with
 * its body `{id, type, timestamp, data}`, the schema of its `data`, and the Standard Webhooks
 * headers. The data schemas are zod schemas (the enums reused from the routers' outputs), converted
 * with zod's own JSON Schema output, so generated clients (openapi-typescript) get the types.
 *
 * The writers of each `data` are in server/notifications/announce.ts, server/webhooks/balance-low.ts,
 * server/deposits/store.ts and server/webhooks/service.ts (the test event);
 * tests/openapi/openapi.test.ts ("webhooks") checks real deliveries against these schemas. Served by the
 * platform's /openapi.json through server/app.ts, which hands describeWebhooks to it.
 */
import type { OpenAPIObject, PathItemObject, SchemaObject } from 'openapi3-ts/oas31';
import { z } from 'zod';
import { orderStatus, orderSummary, positionStatus } from './trading-outputs.ts';
import { TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES } from '../server/webhooks/service.ts';
import { EXAMPLE_IDS } from '../server/platform/http/openapi-examples.ts';

const usd = (description: string) => z.number().meta({ description: `${description} (USD)` });
const id = (prefix: string, description: string) => z.string().min(1).max(64).meta({ description: `${description} (${prefix}_…)` });
const eventId = () => z.string().min(1).max(200).meta({ description: 'The valuation event (our id, e.g. openai-ipo)' });
const userId = () => z.string().min(1).max(128).meta({ description: 'The trading user it concerns (the x-user-id)' });
const positionSide = z.enum(['LONG', 'SHORT']);

const orderData = z.object({
  orderId: id('ord', 'The order'),
  positionId: id('pos', 'Its position'),
  eventId: eventId(),
  userId: userId(),
  positionSide: positionSide.meta({ description: 'The side of its position' }),
  bandId: z.string().min(1).max(200).meta({ description: 'The band (outcome) traded' }),
  side: orderSummary.shape.side,
  purpose: orderSummary.shape.purpose,
  status: orderStatus,
  size: z.number().meta({ description: 'Shares ordered' }),
  filled: z.number().meta({ description: 'Shares filled' }),
  price: z.number().meta({ description: 'Average fill price per share; the limit price when nothing filled' }),
  amount: usd('Paid (a buy) or received (a sale)'),
  fees: usd('Fees the venue charged'),
  reason: z.string().max(200).nullable().meta({ description: 'Why nothing (or not everything) filled: rejected-by-venue, no-liquidity, never-sent, …' }),
});

const positionData = z.object({
  positionId: id('pos', 'The position'),
  eventId: eventId(),
  userId: userId(),
  side: positionSide,
  status: positionStatus,
  size: z.number().meta({ description: 'Units held' }),
  cost: usd('Cost basis'),
  entryPrice: z.number().meta({ description: 'What one unit cost (USD)' }),
  realizedPnl: usd('Realised profit and loss so far'),
  floorL: z.number().min(0).max(1).meta({ description: 'LONG floor of the position' }),
  floorS: z.number().min(0).max(1).meta({ description: 'SHORT floor of the position' }),
});

/** The `data` of each event type. */
export const WEBHOOK_DATA = {
  'order.filled': orderData.meta({ description: 'An order filled, in full or in part (MATCHED; a sale partly filled, the rest cancelled)' }),
  'order.rejected': orderData.meta({ description: 'An order ended with nothing filled (REJECTED, or CANCELLED empty)' }),
  'position.opened': positionData.meta({ description: 'A buy\'s position became open (every band filled)' }),
  'position.closed': positionData
    .extend({
      closeReason: z.enum(['sold', 'tokens-gone', 'buy-failed']).meta({ description: 'sold: sold to nothing; tokens-gone: positions/sync found the tokens gone; buy-failed: a buy that did not fill every band, sold back' }),
    })
    .meta({ description: 'A position holds nothing any more' }),
  'position.settled': z
    .object({
      settlementId: id('stl', 'The settlement'),
      positionId: id('pos', 'The position'),
      eventId: eventId(),
      userId: userId(),
      side: positionSide,
      outcome: z.enum(['resolved', 'voided']),
      winningBandId: z.string().max(200).nullable().meta({ description: 'The band that won; null when the event was voided' }),
      units: z.number().meta({ description: 'Units settled' }),
      payoutPerUnit: z.number().meta({ description: 'What one unit paid (USD)' }),
      proceeds: usd('Paid out'),
      realizedPnl: usd('Realised profit and loss of the position'),
    })
    .meta({ description: 'A position\'s settlement at its event\'s resolution (as GET /api/trading/settlements)' }),
  'event.resolved': z
    .object({
      eventId: eventId(),
      status: z.enum(['resolved', 'voided']),
      winningBandId: z.string().max(200).nullable().meta({ description: 'The band that won; null when voided' }),
      winningBandLabel: z.string().max(200).nullable().meta({ description: 'Its label; null when voided' }),
      userId: userId(),
      openPositions: z.number().int().min(0).meta({ description: 'This user\'s open or pending positions of the event at that moment' }),
    })
    .meta({ description: 'An event resolved, was voided, or its resolution corrected: one per (account, trading user) holding an open or pending position of it' }),
  'event.listed': z
    .object({
      eventId: eventId(),
      name: z.string().min(1).max(300).meta({ description: 'The event\'s name' }),
      company: z.string().min(1).max(200).meta({ description: 'The company whose IPO it is about' }),
      structure: z.enum(['bands', 'ladder']).meta({ description: 'bands: exclusive valuation bands; ladder: "above $X" markets, traded as the bands between thresholds' }),
      bands: z.number().int().min(1).meta({ description: 'How many bands it has' }),
      venueEventSlug: z.string().max(300).nullable().meta({ description: 'The venue\'s event slug (also an id of the event here)' }),
      origin: z.enum(['seed', 'discovered']).meta({ description: 'discovered: found among the venue\'s IPO markets; seed: from the service\'s seed file' }),
    })
    .meta({ description: 'A new event is listed for trading (discovered and listed at once, or approved by an operator): one per account with a webhook subscribed to it' }),
  'deposit.credited': z
    .object({
      depositId: id('dep', 'The deposit'),
      chainId: z.number().int().min(1).meta({ description: 'EIP-155 chain id (137: Polygon)' }),
      txHash: z.string().regex(/^0x[0-9a-fA-F]{64}$/).meta({ description: 'The transfer\'s transaction' }),
      logIndex: z.number().int().min(0).meta({ description: 'The Transfer log\'s index in its block' }),
      token: z.string().regex(/^0x[0-9a-fA-F]{40}$/).meta({ description: 'The stablecoin contract' }),
      from: z.string().regex(/^0x[0-9a-fA-F]{40}$/).meta({ description: 'The sending wallet' }),
      amount: usd('Credited (6 decimals, exact)'),
    })
    .meta({ description: 'A stablecoin deposit was credited (once)' }),
  'balance.low': z
    .object({
      balance: usd('The prepaid balance now'),
      threshold: usd('BALANCE_LOW_USD'),
    })
    .meta({ description: 'The prepaid balance fell under BALANCE_LOW_USD (once per crossing)' }),
  [TEST_EVENT_TYPE]: z
    .object({
      webhookId: id('wh', 'The webhook tested'),
      message: z.string().max(200),
    })
    .meta({ description: 'POST /api/webhooks/{id}/test (to that webhook only, whatever it subscribes to)' }),
} as const satisfies Record<(typeof WEBHOOK_EVENT_TYPES)[number] | typeof TEST_EVENT_TYPE, z.ZodObject>;

export type WebhookType = keyof typeof WEBHOOK_DATA;
export const WEBHOOK_TYPES = Object.keys(WEBHOOK_DATA) as WebhookType[];

/** The delivery body of one event type, as a zod schema (for tests and the document alike). */
export function webhookBody(type: WebhookType) {
  return z.strictObject({
    id: id('evt', 'The event\'s id: the same in every attempt, and on the private stream'),
    type: z.literal(type),
    timestamp: z.string().max(64).meta({ format: 'date-time', description: 'When the event happened (ISO 8601, UTC)' }),
    data: WEBHOOK_DATA[type],
  });
}

const schemaName = (type: string) => `Webhook_${type.replace(/\./g, '_')}`;

/** A zod schema as OpenAPI 3.1 JSON Schema (draft 2020-12, which 3.1 uses), without its $schema. */
function jsonSchema(schema: z.ZodType): SchemaObject {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output', unrepresentable: 'throw' }) as Record<string, unknown>;
  return rest as SchemaObject;
}

const EXAMPLES: Record<WebhookType, Record<string, unknown>> = {
  'order.filled': {
    orderId: EXAMPLE_IDS.order, positionId: EXAMPLE_IDS.position, eventId: 'openai-ipo', userId: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', positionSide: 'LONG',
    bandId: 'paper-openai-ipo-0', side: 'BUY', purpose: 'open', status: 'MATCHED', size: 50, filled: 50, price: 0.42, amount: 21, fees: 0, reason: null,
  },
  'order.rejected': {
    orderId: EXAMPLE_IDS.order, positionId: EXAMPLE_IDS.position, eventId: 'openai-ipo', userId: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', positionSide: 'LONG',
    bandId: 'paper-openai-ipo-0', side: 'SELL', purpose: 'close', status: 'CANCELLED', size: 50, filled: 0, price: 0.4, amount: 0, fees: 0, reason: 'no-liquidity',
  },
  'position.opened': {
    positionId: EXAMPLE_IDS.position, eventId: 'openai-ipo', userId: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', side: 'LONG', status: 'open',
    size: 120.5, cost: 100, entryPrice: 0.829875, realizedPnl: 0, floorL: 0.25, floorS: 0.15,
  },
  'position.closed': {
    positionId: EXAMPLE_IDS.position, eventId: 'openai-ipo', userId: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', side: 'LONG', status: 'closed',
    size: 0, cost: 100, entryPrice: 0.829875, realizedPnl: 4.2, floorL: 0.25, floorS: 0.15, closeReason: 'sold',
  },
  'position.settled': {
    settlementId: 'stl_6Yb2Lq8VnR3xKt7WcP9mHd', positionId: EXAMPLE_IDS.position, eventId: 'openai-ipo', userId: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', side: 'LONG',
    outcome: 'resolved', winningBandId: 'paper-openai-ipo-0', units: 291.449999, payoutPerUnit: 0.2, proceeds: 58.28, realizedPnl: -41.71584,
  },
  'event.resolved': { eventId: 'openai-ipo', status: 'resolved', winningBandId: 'paper-openai-ipo-0', winningBandLabel: '< $300B', userId: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', openPositions: 1 },
  'event.listed': {
    eventId: 'spacex-ipo-closing-market-cap-above', name: 'SpaceX IPO closing market cap', company: 'SpaceX', structure: 'ladder', bands: 9,
    venueEventSlug: 'spacex-ipo-closing-market-cap-above', origin: 'discovered',
  },
  'deposit.credited': {
    depositId: 'dep_2Nc7Vx4KqT9mRb3LwY8pZe', chainId: 137, txHash: `0x${'ab'.repeat(32)}`, logIndex: 3,
    token: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', from: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', amount: 250,
  },
  'balance.low': { balance: 0.84, threshold: 1 },
  'webhook.test': { webhookId: EXAMPLE_IDS.webhook, message: 'A test event from POST /api/webhooks/{id}/test' },
};

function signatureHeader(name: string, description: string, schema: SchemaObject, example: string) {
  return { in: 'header' as const, name, required: true, description, schema, example };
}

const HEADERS = [
  signatureHeader('webhook-id', 'The delivery\'s id: the same on every attempt of this event to this URL. Deduplicate by it', { type: 'string', minLength: 1, maxLength: 64 }, 'msg_5d0c7e7b8f1a4c2a9e3b6d10'),
  signatureHeader('webhook-timestamp', 'When this attempt was sent (Unix seconds); reject one more than 5 minutes from now', { type: 'string', pattern: '^[0-9]{1,12}$', maxLength: 12 }, '1795548948'),
  signatureHeader(
    'webhook-signature',
    'Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` under your secret (two during a secret rotation). Verify the raw body with the Standard Webhooks library (`standardwebhooks`)',
    { type: 'string', pattern: '^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$', maxLength: 1024 },
    'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  ),
];

/** Adds `webhooks` and the payload schemas to the document. */
export function describeWebhooks(doc: OpenAPIObject): void {
  doc.components ??= {};
  doc.components.schemas ??= {};
  const webhooks: Record<string, PathItemObject> = {};
  for (const type of WEBHOOK_TYPES) {
    const name = schemaName(type);
    doc.components.schemas[name] = jsonSchema(webhookBody(type));
    const data = WEBHOOK_DATA[type] as z.ZodObject;
    webhooks[type] = {
      post: {
        operationId: `webhook_${type.replace(/\./g, '_')}`,
        summary: `${type} event`,
        description: `${z.globalRegistry.get(data)?.description ?? type}. POSTed to each active webhook of the account subscribed to \`${type}\`${type === TEST_EVENT_TYPE ? ' (here: the webhook tested)' : ''}, signed by the Standard Webhooks scheme and retried until a 2xx (docs/webhooks.md).`,
        tags: ['Webhooks'],
        security: [],
        parameters: HEADERS,
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { $ref: `#/components/schemas/${name}` },
              example: { id: 'evt_4xT8Qm2VbN7kRc3LpW9yZd', type, timestamp: '2026-11-24T10:15:42.117Z', data: EXAMPLES[type] },
            },
          },
        },
        responses: {
          '2XX': { description: 'Acknowledged: answer any 2xx within WEBHOOK_TIMEOUT_MS (10 s); the body is ignored' },
          default: { description: 'Any other answer, a redirect, a timeout or a broken connection is a failed attempt: the delivery is retried (5 s, doubling, at most an hour apart, for 24 hours)' },
        },
      },
    };
  }
  doc.webhooks = webhooks;
}
