/**
 * Live streams (docs/streams.md). Two streams, each in three forms over one resolver
 * (server/platform/procedures/open-stream.ts):
 *  - GET /api/trading/stream?eventSlug=… (public) and GET /api/trading/stream/account (key + user, or
 *    a session): server-sent events with `Accept: text/event-stream` (server/platform/http/stream-routes.ts), else
 *    JSON — the catch-up a stream would open with, and the id to resume from (also on /trpc as the
 *    queries `streams.valuationCatchUp` and `streams.accountCatchUp`);
 *  - the tRPC subscriptions `streams.valuation` and `streams.account` (httpSubscriptionLink), whose
 *    messages are `tracked(id, data)`, so a reconnecting client resumes with `lastEventId`.
 */
import { z } from 'zod';
import { ACCOUNT_EVENT_TYPES } from '../server/notifications/emit.ts';
import { ACCOUNT_ID_RULE, accountCursorOf } from '../server/streams/ids.ts';
import { accountCatchUp, accountSubscription, valuationCatchUp, valuationSubscription } from '../server/platform/procedures/open-stream.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { publicProcedure, userProcedure } from '../server/platform/procedures/base.ts';
import { isoString, optionalParams } from './params.ts';
import { valuationAnswer } from './trading-market.ts';

const TAGS = ['Live streams'];
/** Events one stream may follow. */
export const MAX_STREAM_EVENTS = 50;


const slug = () => z.string().min(1).max(200);
const lastEventIdParam = (example: string) =>
  z
    .string()
    .max(1000)
    .meta({ description: 'Resume after this message id (what the stream sent as `id:`); the Last-Event-ID header wins over it', example });

/** The account stream's resume id, checked with the input: a bad one is a 400 before the charge. */
const accountResumeProblem = ({ lastEventId }: { lastEventId?: string | null }) =>
  accountCursorOf(lastEventId) === null ? { parameter: 'lastEventId' as const, rule: ACCOUNT_ID_RULE } : null;

/** On REST a single `events` parameter is a list of one (server/platform/http/rest-input.ts). */
const eventSlugs = z
  .array(slug())
  .min(1)
  .max(MAX_STREAM_EVENTS)
  .meta({
    description: `The events, each by our id, the venue's event slug or an alias (as /trading/valuation); repeat the parameter for several (at most ${MAX_STREAM_EVENTS})`,
    example: ['openai-ipo', 'anthropic-ipo'],
  });

const accountEvent = z.object({
  seq: z.number().int().meta({ description: 'Outbox position (ids and resumes are built from it); dedupe by it' }),
  id: z.string().meta({ description: 'evt_…: the event\'s public id (webhook deliveries of the event carry it too)' }),
  type: z.enum(ACCOUNT_EVENT_TYPES),
  userId: z.string().nullable().meta({ description: 'The trading user it concerns; null for the account as a whole (balance, deposits)' }),
  data: z.record(z.string(), z.unknown()),
  timestamp: isoString(),
});

export const streamsRouter = router({
  valuationCatchUp: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/trading/stream',
        tags: TAGS,
        summary: 'Live valuations of events (server-sent events)',
        description:
          'With `Accept: text/event-stream`: a stream of server-sent events. On connect, the current /trading/valuation object of each event (or, with Last-Event-ID, of each event that changed since), then one message per market snapshot that changes an event, each with an `id:`; a `: ping` comment every STREAM_HEARTBEAT_MS (15 s). Public, unbilled; at most STREAM_MAX_PER_IP streams open per client address, account streams included (an IPv6 client counts by its /64; 429), and at most 50,000 public streams per instance (503). Without that Accept: the same opening messages as JSON. See docs/streams.md.',
        errorResponses: [404, 503],
      },
    })
    .input(optionalParams({ eventSlug: eventSlugs, lastEventId: lastEventIdParam('1764000000123-0-k3x9q1').optional() }))
    .output(
      z.object({
        messages: z.array(z.object({ id: z.string(), data: valuationAnswer })).meta({ description: 'Oldest first: what a stream would send on connect' }),
        lastEventId: z.string().nullable().meta({ description: 'Resume from here (null: nothing to resume from yet)' }),
      }),
    )
    .query(({ ctx, input }) => valuationCatchUp(ctx, input)),

  accountCatchUp: userProcedure
    .meta({
      session: true,
      openapi: {
        method: 'GET',
        path: '/trading/stream/account',
        tags: TAGS,
        summary: 'The user\'s own order, position, settlement and balance events (server-sent events)',
        description:
          'With `Accept: text/event-stream`: a stream of server-sent events — the events of this user and the account-wide ones (balance, deposits), each with an `id:`; a `ready` event carrying the resume id once caught up; `: ping` every STREAM_HEARTBEAT_MS. Resume with Last-Event-ID. Billed, with a key or a session alike: one standard request to open, one more per full minute held (the stream ends with an `error` event when a charge is refused, or the session has ended); at most STREAM_MAX_PER_KEY open per API key or session, STREAM_MAX_PER_ACCOUNT per account (all its keys and sessions together) and STREAM_MAX_PER_IP per client address, public streams included (429). Without that Accept: up to 500 events after lastEventId as JSON, and the id to resume from. See docs/streams.md.',
        errorResponses: [503],
      },
    })
    .input(optionalParams({ lastEventId: lastEventIdParam('41').optional() }, { check: accountResumeProblem }))
    .output(z.object({ events: z.array(accountEvent).meta({ description: 'Oldest first' }), lastEventId: z.string().meta({ description: 'Resume from here' }) }))
    .query(({ ctx, input }) => accountCatchUp(ctx, input)),

  /** The valuation stream as a tRPC subscription (httpSubscriptionLink): `tracked(id, valuation)`. */
  valuation: publicProcedure
    .input(z.strictObject({ eventSlugs: z.array(slug()).min(1).max(MAX_STREAM_EVENTS), lastEventId: z.string().max(1000).nullish() }))
    .subscription(({ ctx, input, signal }) => valuationSubscription(ctx, input, signal)),

  /** The account stream as a tRPC subscription: `tracked(id, event)`, first any catch-up, then `{type: 'ready'}`, then live events. */
  account: userProcedure
    .meta({ session: true })
    .input(optionalParams({ lastEventId: z.string().max(1000).nullish() }, { check: accountResumeProblem }))
    .subscription(({ ctx, input, signal, path }) => accountSubscription(ctx, input, signal, path)),
});
