/**
 * The live streams of one set of services (one per process; one per test app): the valuation hub, the
 * account hub (outbox tailer), the leases, the heartbeat, and every open sink, built on first use.
 *
 * Wiring (main.ts): `liftStreamIdleTimeout(request, server)` in the fetch handler, so Bun's idle
 * timeout (10 s by default) does not cut a quiet stream between heartbeats; `await stopStreams(services)`
 * at shutdown, before the server stops (it ends every stream, so clients reconnect elsewhere, and
 * deletes this instance's leases). From then on the streams of these services are *closing*: the
 * requests still arriving until the server stops listening are refused with 503 (and Retry-After),
 * never given a stream nobody would stop, and nothing is built or started again.
 */
import type { StreamHandles } from './handles.ts';
import { ACCOUNT_POLL_MS, AccountHub, GAP_GRACE_MS, GAP_MAX_WAIT_MS } from './account-hub.ts';
import { BILLING_PERIOD_MS, type HeldBilling } from './held-billing.ts';
import { LeaseBook } from './leases.ts';
import { instanceFull, shuttingDown } from './refusals.ts';
import { SseSink, type Sink } from './sinks.ts';
import { ApiError } from '../errors.ts';
import { RESUME_MARGIN_MS, ValuationHub } from './valuation-hub.ts';

/** Stream paths served as server-sent events (besides /trpc subscriptions). */
export const VALUATION_STREAM_PATH = '/api/trading/stream';
export const ACCOUNT_STREAM_PATH = '/api/trading/stream/account';

/** Timings, each defaulting to its documented constant (or config); tests shorten them. */
export interface StreamOptions {
  /** Comment heartbeat period (default STREAM_HEARTBEAT_MS). */
  heartbeatMs?: number;
  /** A held private stream is charged one request per this period (default one minute). */
  billingPeriodMs?: number;
  /** Outbox tail period (default 500 ms). */
  pollMs?: number;
  /** How long a skipped outbox seq is waited for before it is asked about (PostgreSQL) or given up (PGlite) (default 5 s). */
  gapGraceMs?: number;
  /** PostgreSQL: the longest a skipped seq is waited for while a transaction that could insert it runs (default 10 min). */
  gapMaxWaitMs?: number;
  /** Public (valuation) streams this instance holds at most, whatever their addresses (default MAX_PUBLIC_STREAMS). */
  maxPublicStreams?: number;
  /** Lease lifetime without renewal, and renewal period (defaults 60 s, 20 s). */
  leaseTtlMs?: number;
  leaseRenewMs?: number;
  /** Bytes an SSE subscriber may leave unread before it is dropped (default 256 KiB). */
  maxQueuedBytes?: number;
  /** Messages a tRPC subscriber may leave unread before it is dropped (default 1,000). */
  maxQueuedMessages?: number;
  /** Clock skew allowed when resuming a valuation stream from another instance's id (default 5 s). */
  resumeMarginMs?: number;
}

export const MAX_QUEUED_BYTES = 256 * 1024;
export const MAX_QUEUED_MESSAGES = 1_000;
export const LEASE_TTL_MS = 60_000;
export const LEASE_RENEW_MS = 20_000;
/**
 * Public streams one instance holds at most (REST and tRPC together). The per-address limit bounds
 * one client; this bounds them all (each stream costs a socket and a subscriber). Beyond it an open
 * is refused with 503 and Retry-After: another instance, or this one a little later, has room.
 */
export const MAX_PUBLIC_STREAMS = 50_000;

export class Streams {
  readonly valuations: ValuationHub;
  readonly accounts: AccountHub;
  readonly leases: LeaseBook;
  readonly timing: Required<StreamOptions>;
  private sinks = new Set<Sink>();
  private heartbeat?: ReturnType<typeof setInterval>;
  /** stop() began: every open is refused (503) from now on. */
  closing = false;
  /** Public streams open or opening (counted before their lease is taken, so concurrent opens count). */
  private publicStreams = 0;
  /** Billing of the held account streams (and of closed ones whose last charge is still under way). */
  private billings = new Set<HeldBilling>();

  constructor(readonly services: StreamHandles, options: StreamOptions = {}) {
    this.timing = {
      heartbeatMs: options.heartbeatMs ?? services.config.streams.heartbeatMs,
      billingPeriodMs: options.billingPeriodMs ?? BILLING_PERIOD_MS,
      pollMs: options.pollMs ?? ACCOUNT_POLL_MS,
      gapGraceMs: options.gapGraceMs ?? GAP_GRACE_MS,
      gapMaxWaitMs: options.gapMaxWaitMs ?? GAP_MAX_WAIT_MS,
      maxPublicStreams: options.maxPublicStreams ?? MAX_PUBLIC_STREAMS,
      leaseTtlMs: options.leaseTtlMs ?? LEASE_TTL_MS,
      leaseRenewMs: options.leaseRenewMs ?? LEASE_RENEW_MS,
      maxQueuedBytes: options.maxQueuedBytes ?? MAX_QUEUED_BYTES,
      maxQueuedMessages: options.maxQueuedMessages ?? MAX_QUEUED_MESSAGES,
      resumeMarginMs: options.resumeMarginMs ?? RESUME_MARGIN_MS,
    };
    const db = services.database.db;
    this.valuations = new ValuationHub(services.recorder, this.timing.resumeMarginMs);
    this.accounts = new AccountHub(
      db,
      { pollMs: this.timing.pollMs, gapGraceMs: this.timing.gapGraceMs, gapMaxWaitMs: this.timing.gapMaxWaitMs, engine: services.database.kind },
      services.logger,
    );
    this.leases = new LeaseBook(db, { ttlMs: this.timing.leaseTtlMs, renewMs: this.timing.leaseRenewMs }, services.logger);
  }

  /** 503 (shutting down) once stop() began. */
  assertOpen(): void {
    if (this.closing) throw shuttingDown();
  }

  /**
   * Counts one more public stream, or 503 when the instance holds MAX_PUBLIC_STREAMS already.
   * Returns the function that uncounts it (idempotent).
   */
  reservePublic(): () => void {
    if (this.publicStreams >= this.timing.maxPublicStreams) throw instanceFull(this.timing.maxPublicStreams);
    this.publicStreams++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.publicStreams--;
    };
  }

  /** Public streams open (or opening) on this instance. */
  get publicOpen(): number {
    return this.publicStreams;
  }

  /** Keeps a held stream's billing (chargeHeldStreams) until it is stopped and its last charge settled. */
  holdBilling(billing: HeldBilling): () => void {
    this.billings.add(billing);
    return () => {
      billing.stop();
      void billing.chargeNow().finally(() => this.billings.delete(billing));
    };
  }

  /**
   * One billing period for every held account stream, now (each charged once; a closed stream's
   * charge still under way is waited for, not repeated). For tests, which must not wait for clocks.
   */
  async chargeHeldStreams(): Promise<void> {
    await Promise.all([...this.billings].map((billing) => billing.chargeNow()));
  }

  /** Tracks an open sink (heartbeats, shutdown) until it closes; a sink arriving after stop() is closed at once. */
  track(sink: Sink) {
    if (this.closing) {
      sink.close(shuttingDown());
      return;
    }
    this.sinks.add(sink);
    sink.onClose(() => this.sinks.delete(sink));
    if (!this.heartbeat) {
      // Without liftStreamIdleTimeout (main.ts), Bun's idle timeout would cut a quiet stream between pings.
      const period = idleTimeoutLifted ? this.timing.heartbeatMs : Math.min(this.timing.heartbeatMs, UNLIFTED_HEARTBEAT_MS);
      this.heartbeat = setInterval(() => {
        for (const open of this.sinks) open.ping();
        if (this.sinks.size === 0) this.stopHeartbeat();
      }, period);
      this.heartbeat.unref?.();
    }
  }

  get open(): number {
    return this.sinks.size;
  }

  /**
   * Ends every stream (clients reconnect, to another instance if this one is going) and stops the
   * hubs, for good: from here on every open is refused with 503.
   */
  async stop(): Promise<void> {
    this.closing = true;
    this.stopHeartbeat();
    // The leases first, in one statement (closing each stream would delete its own, one by one).
    const released = this.leases.releaseAll();
    for (const sink of [...this.sinks]) {
      if (sink instanceof SseSink) sink.closeWithComment('server shutting down; reconnect with Last-Event-ID');
      // A retryable tRPC error: httpSubscriptionLink reconnects (with lastEventId) instead of completing.
      else sink.close(new ApiError('SERVICE_UNAVAILABLE', 'The server is shutting down; resubscribe with lastEventId'));
    }
    this.valuations.stop();
    this.accounts.stop();
    await released;
  }

  private stopHeartbeat() {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }
}

const registry = new WeakMap<StreamHandles, Streams>();

/**
 * The streams of these services, built on first use. After stopStreams they are the stopped ones
 * (closing: every open answers 503), never a fresh set nobody would stop.
 */
export function streamsOf(services: StreamHandles): Streams {
  let streams = registry.get(services);
  if (!streams) registry.set(services, (streams = new Streams(services)));
  return streams;
}

/** Builds the streams with other timings (tests); must come before any stream opens. */
export function configureStreams(services: StreamHandles, options: StreamOptions): Streams {
  if (registry.has(services)) throw new Error('configureStreams: streams of these services are already in use');
  const streams = new Streams(services, options);
  registry.set(services, streams);
  return streams;
}

/**
 * Shutdown: ends every stream of these services and deletes their leases. The stopped streams stay
 * registered (closing), so a request arriving before the server stops listening is refused (503)
 * instead of building a fresh set or attaching to a stopped hub.
 */
export async function stopStreams(services: StreamHandles): Promise<void> {
  let streams = registry.get(services);
  if (!streams) registry.set(services, (streams = new Streams(services)));
  await streams.stop();
}

/**
 * Bun closes a connection after `idleTimeout` (10 s by default) without traffic, a quiet stream
 * included. For a GET that asks for an event stream on a stream route (REST or a /trpc streams.*
 * subscription), the timeout is lifted for this request: the heartbeat keeps proxies and clients
 * aware, and a dead client is noticed when a write fails.
 */
export function liftStreamIdleTimeout(request: Request, server: { timeout(request: Request, seconds: number): void }): void {
  if (request.method !== 'GET' || !request.headers.get('accept')?.includes('text/event-stream')) return;
  const path = pathOf(request.url);
  if (path === VALUATION_STREAM_PATH || path === ACCOUNT_STREAM_PATH || path.startsWith('/trpc/streams.')) {
    server.timeout(request, 0);
    idleTimeoutLifted = true;
  }
}

/**
 * Until a server lifts the idle timeout for stream requests (liftStreamIdleTimeout), pings come at
 * least this often, under Bun's default idleTimeout of 10 s, so a quiet stream is never cut.
 */
export const UNLIFTED_HEARTBEAT_MS = 8_000;
let idleTimeoutLifted = false;

function pathOf(url: string): string {
  const start = url.startsWith('/') ? 0 : url.indexOf('/', url.indexOf('//') + 2);
  if (start < 0) return '/';
  const end = url.indexOf('?', start);
  return end < 0 ? url.slice(start) : url.slice(start, end);
}
