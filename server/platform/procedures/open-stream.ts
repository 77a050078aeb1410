/**
 * Opening a stream, for the routers (routers/streams.ts). Each route has three forms over one
 * resolver, so every rule (authentication, billing, input, 404) is the procedure's own:
 *  - REST with `Accept: text/event-stream` (rest.ts): the REST handler marks the request context as
 *    a stream opening, runs the procedure, and serves the SSE sink the resolver opened;
 *  - REST otherwise, and the same procedure on /trpc: JSON, what the stream would open with (the
 *    catch-up from `lastEventId`) and the id to resume from;
 *  - the tRPC subscriptions (`streams.valuation`, `streams.account`): the same messages as
 *    `tracked(id, data)`.
 * Everything that can refuse (404, 400, 429 for the limits, 503) happens before a stream is handed
 * out, so REST answers it as a status in our error shape before any event. 503 with Retry-After
 * also answers every form once the instance shuts down (stopStreams) — checked on entry and again
 * after the last wait (the lease), so a stream can never open on streams being stopped — and a
 * public open past the instance's MAX_PUBLIC_STREAMS.
 */
import { publicErrorOf } from './trpc-errors.ts';
import { tracked } from '@trpc/server';
import type { KeyPrincipal } from '../../accounts/api-keys.ts';
import { hashApiKey } from '../../accounts/api-keys.ts';
import type { Payer } from '../../accounts/billing.ts';
import { standardCostOf } from '../../accounts/modes.ts';
import { sessionToken, sessionTokenHash } from '../../auth/sessions.ts';
import { ApiError } from '../../errors.ts';
import type { RequestContext } from './context.ts';
import { AccountSubscriber, type AccountEventMessageData } from '../../streams/account-hub.ts';
import { chargeWhileHeld } from '../../streams/held-billing.ts';
import { parseAccountId, parseValuationId } from '../../streams/ids.ts';
import { INSTANCE_RETRY_AFTER_S, shuttingDown } from '../../streams/refusals.ts';
import { streamsOf, type Streams } from '../../streams/registry.ts';
import { QueueSink, SseSink, type Sink, type StreamMessage } from '../../streams/sinks.ts';
import type { EventValuation } from '../../market/recorder.ts';
import { errorMessage } from '../../lib/error-message.ts';

/** A REST request that asked for an event stream: the resolver leaves its sink here. */
export interface Opening {
  sink?: SseSink;
}

/**
 * Keyed by the request's `resHeaders` object: middlewares hand the resolver a copy of the context
 * (`next({ ctx })` spreads it), but its members are the same objects for the whole request.
 */
const openingsByRequest = new WeakMap<object, Opening>();
const openings = { get: (ctx: RequestContext) => openingsByRequest.get(ctx.resHeaders) };

export function beginOpening(ctx: RequestContext): Opening {
  const opening: Opening = {};
  openingsByRequest.set(ctx.resHeaders, opening);
  return opening;
}

/** Rows per JSON answer of the account route. */
export const ACCOUNT_PAGE_LIMIT = 500;

/** The streams of this request's services, or 503 (with Retry-After) if they are shutting down. */
function openStreams(ctx: RequestContext): Streams {
  const streams = streamsOf(ctx.services);
  instanceRefusal(ctx, () => streams.assertOpen());
  return streams;
}

/** Runs `check`; a 503 it throws (this instance, not the caller) gets a Retry-After. */
function instanceRefusal<T>(ctx: RequestContext, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof ApiError && error.apiCode === 'SERVICE_UNAVAILABLE') ctx.resHeaders['Retry-After'] = String(INSTANCE_RETRY_AFTER_S);
    throw error;
  }
}

/** After the lease (the open's last wait): if shutdown began meanwhile, the lease goes and the open is a 503. */
async function stillOpen(ctx: RequestContext, streams: Streams, lease: string, uncount?: () => void): Promise<void> {
  if (!streams.closing) return;
  uncount?.();
  await streams.leases.release(lease);
  instanceRefusal(ctx, () => {
    throw shuttingDown();
  });
}

// --- valuation -----------------------------------------------------------------------------------

export async function valuationCatchUp(ctx: RequestContext, input: { eventSlug: string[]; lastEventId?: string }) {
  const streams = openStreams(ctx);
  const recording = await streams.valuations.ready();
  const eventIds = streams.valuations.resolve(recording, input.eventSlug);
  parseValuationId(input.lastEventId);
  const opening = openings.get(ctx);
  if (opening) {
    opening.sink = await openValuationSink(ctx, eventIds, input.lastEventId, () => new SseSink(streams.timing.maxQueuedBytes, ctx.requestId));
    return { messages: [], lastEventId: input.lastEventId ?? null };
  }
  const messages = streams.valuations.catchUp(eventIds, input.lastEventId);
  return {
    messages: messages.map((m) => ({ id: m.id, data: m.data })),
    lastEventId: messages.at(-1)?.id ?? input.lastEventId ?? null,
  };
}

/**
 * A subscription's messages as tRPC sends resumable events: `tracked(id, data)`, so its SSE writer
 * sends each id and httpSubscriptionLink sends the last one back as `lastEventId`. (The type the
 * subscriptions declare is what the typed client receives for such an event: `{ id, data }`.)
 */
async function* trackedMessages(messages: AsyncGenerator<StreamMessage>) {
  for await (const message of messages) yield tracked(message.id, message.data);
}

export async function valuationSubscription(ctx: RequestContext, input: { eventSlugs: string[]; lastEventId?: string | null }, signal: AbortSignal | undefined) {
  const streams = openStreams(ctx);
  const recording = await streams.valuations.ready();
  const eventIds = streams.valuations.resolve(recording, input.eventSlugs);
  parseValuationId(input.lastEventId);
  const sink = await openValuationSink(ctx, eventIds, input.lastEventId, () => new QueueSink(streams.timing.maxQueuedMessages));
  return trackedMessages(sink.messages(signal)) as AsyncGenerator<{ id: string; data: EventValuation }>;
}

async function openValuationSink<S extends Sink>(ctx: RequestContext, eventIds: string[], lastEventId: string | null | undefined, make: () => S): Promise<S> {
  const streams = openStreams(ctx);
  // Counted on this instance first (synchronously: concurrent opens see each other), then per address.
  const uncount = instanceRefusal(ctx, () => streams.reservePublic());
  let lease: string;
  try {
    lease = await streams.leases.acquire({ kind: 'market', clientIp: ctx.clientIp() }, ctx.services.config.streams).catch(limited(ctx));
  } catch (error) {
    uncount();
    throw error;
  }
  await stillOpen(ctx, streams, lease, uncount);
  const sink = make();
  sink.onClose(() => {
    uncount();
    void streams.leases.release(lease);
  });
  streams.track(sink);
  streams.valuations.attach(eventIds, sink, lastEventId);
  return sink;
}

// --- account -------------------------------------------------------------------------------------

interface AccountCaller {
  principal: KeyPrincipal;
  user: { accountId: string; userId: string };
}

export async function accountCatchUp(ctx: RequestContext & AccountCaller, input: { lastEventId?: string }): Promise<{ events: AccountEventMessageData[]; lastEventId: string }> {
  const streams = openStreams(ctx);
  const resume = parseAccountId(input.lastEventId);
  const opening = openings.get(ctx);
  if (!opening) return streams.accounts.page(ctx.user.accountId, ctx.user.userId, resume, ACCOUNT_PAGE_LIMIT);
  const sink = await openAccountSink(ctx, resume, () => new SseSink(streams.timing.maxQueuedBytes, ctx.requestId), { method: 'GET', path: ctx.path });
  opening.sink = sink;
  return { events: [], lastEventId: input.lastEventId ?? '' };
}

export async function accountSubscription(ctx: RequestContext & AccountCaller, input: { lastEventId?: string | null }, signal: AbortSignal | undefined, procedurePath: string) {
  const streams = openStreams(ctx);
  const resume = parseAccountId(input.lastEventId);
  const sink = await openAccountSink(ctx, resume, () => new QueueSink(streams.timing.maxQueuedMessages), { method: ctx.method, path: `/trpc/${procedurePath}` });
  return trackedMessages(sink.messages(signal)) as AsyncGenerator<{ id: string; data: AccountEventMessageData | { type: 'ready'; lastEventId: string } }>;
}

async function openAccountSink<S extends Sink>(
  ctx: RequestContext & AccountCaller,
  resume: ReturnType<typeof parseAccountId>,
  make: () => S,
  usage: { method: string; path: string },
): Promise<S> {
  const { services } = ctx;
  const streams = openStreams(ctx);
  // The tailer first: a database that does not answer is a 503 before the stream opens.
  await streams.accounts.ensureStarted().catch((error) => instanceRefusal(ctx, () => {
    throw error;
  }));
  const holder = holderOf(ctx);
  // Counted per credential, per account (every key and session of it) and per client address.
  const lease = await streams.leases
    .acquire({ kind: 'account', keyHash: holder.leaseKey, accountId: ctx.user.accountId, clientIp: ctx.clientIp() }, services.config.streams)
    .catch(limited(ctx));
  await stillOpen(ctx, streams, lease);
  const sink = make();
  sink.onClose(() => void streams.leases.release(lease));
  // Billed per period held whoever holds it: a key, or a session (a dead session's next charge is a 401).
  const billing = chargeWhileHeld(services, { payer: holder.payer, ...usage, requestId: ctx.requestId, defaultCostMicros: holder.costMicros }, streams.timing.billingPeriodMs, (error) => sink.close(error));
  sink.onClose(streams.holdBilling(billing));
  streams.track(sink);
  const subscriber = new AccountSubscriber(ctx.user.accountId, ctx.user.userId, sink, resume);
  streams.accounts.attach(subscriber, resume).catch((error) => {
    const body = publicErrorOf(error, ctx.requestId);
    if (body.status >= 500) services.logger.error('account stream catch-up failed', { requestId: ctx.requestId, error: errorMessage(error) });
    sink.close(error instanceof ApiError ? error : new ApiError(body.code === 'INTERNAL_ERROR' ? 'SERVICE_UNAVAILABLE' : body.code, body.code === 'INTERNAL_ERROR' ? 'The stream could not catch up; reconnect with Last-Event-ID' : body.message));
  });
  return sink;
}

/**
 * Who holds the stream, counted and billed: the API key presented, or else the session cookie's
 * session. Decided as the gate decides (procedures/access.ts: a key presented — x-api-key, else
 * ?apiKey= — wins over a cookie), from the request itself, not from the principal, whose apiKeyId is
 * null for a session.
 */
function holderOf(ctx: RequestContext & AccountCaller): { leaseKey: string; payer: Payer; costMicros: number } {
  const key = ctx.headers.get('x-api-key') ?? ctx.query().get('apiKey');
  const costMicros = standardCostOf(ctx.services.config, key);
  if (key !== null) {
    const keyHash = hashApiKey(key);
    return { leaseKey: keyHash, payer: { keyHash }, costMicros };
  }
  const sessionHash = sessionTokenHash(sessionToken(ctx.headers.get('cookie')) ?? '');
  return { leaseKey: `session:${sessionHash}`, payer: { sessionHash }, costMicros };
}

/** A refused lease is a 429 with Retry-After (a slot frees when a stream closes, or its lease expires); a 503 gets one too. */
function limited(ctx: RequestContext) {
  return (error: unknown): never => {
    if (error instanceof ApiError && error.apiCode === 'RATE_LIMITED') ctx.resHeaders['Retry-After'] = '5';
    return instanceRefusal(ctx, () => {
      throw error;
    });
  };
}
