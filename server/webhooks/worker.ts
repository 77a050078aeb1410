/**
 * The webhook delivery worker, in every server instance: a small pool of attempts, kept
 * full — a slot freed by one attempt is refilled at once, and every WEBHOOK_INTERVAL_MS the pool looks
 * for deliveries that became due.
 *
 *  - Claimed under a lease: one conditional UPDATE … WHERE the lease is free or expired … RETURNING,
 *    so two instances never send one delivery at the same time. A lease lasts one attempt's deadline
 *    (WEBHOOK_TIMEOUT_MS, DNS included) plus LEASE_MARGIN_MS, and the pool claims only as many as it
 *    has free slots, so a lease never runs out before its attempt ends. A process killed mid-delivery
 *    loses nothing: its lease runs out and a later claim (here or on another instance) sends the
 *    delivery again, with the same `webhook-id`. A process stopped mid-delivery (graceful shutdown)
 *    aborts the attempt but KEEPS the lease for WEBHOOK_TIMEOUT_MS more (the receiver may still be
 *    working on the request it got), so the delivery is sent again only after that.
 *  - One endpoint cannot hold up the others: at most MAX_IN_FLIGHT_PER_WEBHOOK attempts of one
 *    webhook are in flight at once (counted over every instance's leases), so a receiver that hangs
 *    holds two slots until its deadline while the other slots keep delivering; and a webhook whose
 *    attempts keep failing (PAUSE_AFTER_FAILURES in a row) is left aside by this instance for a short
 *    while (5 s, doubling, at most PAUSE_MAX_MS) — its deliveries wait, nothing is lost or counted.
 *  - One tenant cannot hold up the others: at most WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT
 *    attempts of one account are in flight in a pool, and claims let accounts take turns (claim.ts),
 *    so one account's hanging endpoints or backlog leave the rest of every pool to other accounts; a
 *    webhook that timed out SLOW_AFTER_TIMEOUTS times in a row gets WEBHOOK_SLOW_TIMEOUT_MS until it
 *    answers again (endpoint-health.ts), so hanging endpoints free their slots sooner.
 *  - Sent as the Standard Webhooks specification says: the body fixed when the event happened,
 *    `webhook-id` (the delivery id, the same on every attempt), `webhook-timestamp` (this attempt)
 *    and `webhook-signature` (signing.ts; both secrets during a rotation's overlap).
 *  - Checked against SSRF again after DNS (ssrf.ts) and connected to the very address checked: the
 *    URL's host is replaced by that address, with the original Host header and, for https, the
 *    original name for SNI and certificate verification. A refused address fails the delivery at once
 *    ("refused address …") without sending anything. Redirects are never followed (a 3xx fails the attempt).
 *  - A 2xx answer within WEBHOOK_TIMEOUT_MS succeeds it. Anything else is retried after
 *    5 s × 2^(attempts − 1) (±20% jitter, at most 1 h), until WEBHOOK_RETRY_HOURS after the event;
 *    an attempt failing after that marks it failed.
 *
 * `deliverDue` is one pass (tests drive time through `now`): the pool run until nothing more is due;
 * `startWebhookWorker` keeps one pool running, and runs the balance-low check (balance-low.ts).
 */
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { sql } from 'drizzle-orm';
import { resultRows } from '../../db/prepared.ts';
import { startJob } from '../lib/jobs.ts';
import type { WebhookHandles } from './handles.ts';
import { checkBalanceLow } from './balance-low.ts';
import { claim, type ClaimedRow } from './claim.ts';
import { EndpointHealth, type Verdict } from './endpoint-health.ts';
import { openSecret, signatureHeaders } from './signing.ts';
import { bareHost, localReceiversOf, resolveTarget, type Lookup } from './ssrf.ts';
import { errorFirstLine, errorSummary } from '../lib/error-message.ts';

export { LEASE_MARGIN_MS } from './claim.ts';
export { PAUSE_AFTER_FAILURES, PAUSE_MAX_MS, SLOW_AFTER_TIMEOUTS } from './endpoint-health.ts';
/** Attempts of one webhook in flight at once, over every instance (so one slow endpoint cannot take every slot). */
export const MAX_IN_FLIGHT_PER_WEBHOOK = 2;
/** Attempts sent at once by one pool (one instance). */
export const DEFAULT_CONCURRENCY = 8;
const FIRST_RETRY_MS = 5_000;
const MAX_RETRY_MS = 3_600_000;
/** How often the worker looks for balances that fell under BALANCE_LOW_USD. */
export const BALANCE_LOW_CHECK_MS = 30_000;
const USER_AGENT = 'Pre-IPO-API-Webhooks/1.0';

export interface DeliverOptions {
  /**
   * The clock for scheduling (due times, leases, backoff, the retry window): default the database's
   * own clock, the one that stamped the deliveries. Signatures always carry the real time.
   */
  now?: Date;
  /** This worker's lease owner id (default: a new one per pass). */
  owner?: string;
  /** Most deliveries this pass sends (default 1000). */
  limit?: number;
  /** Attempts in flight at once: the pool's slots (default DEFAULT_CONCURRENCY). */
  concurrency?: number;
  /** Attempts of one webhook in flight at once, over every instance (default MAX_IN_FLIGHT_PER_WEBHOOK). */
  perWebhook?: number;
  /** Attempts of one account in flight at once in this pool (default WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT). */
  perAccount?: number;
  /** DNS (tests); the system resolver otherwise. */
  lookup?: Lookup;
  /**
   * Aborted: attempts in flight stop and nothing is recorded for them; a lease whose request may
   * have reached the receiver is kept for WEBHOOK_TIMEOUT_MS more, any other is released.
   */
  signal?: AbortSignal;
  /** Jitter source (tests). */
  random?: () => number;
  /** The clock of the per-webhook pause after repeated failures (tests); real time otherwise. */
  clock?: () => number;
}

export interface PassResult {
  claimed: number;
  succeeded: number;
  /** Failed attempts that will be retried. */
  retrying: number;
  /** Deliveries that ended failed (refused address, or the retry window is over). */
  failed: number;
}

/** The wait after the `attempts`-th failed attempt: 5 s, 10 s, 20 s … with ±20% jitter, at most 1 h. */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const base = Math.min(FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1), MAX_RETRY_MS);
  return Math.round(Math.min(MAX_RETRY_MS, base * (0.8 + 0.4 * random())));
}

type Outcome =
  | { kind: 'succeeded'; status: number }
  /** `timeout`: no answer within the deadline (endpoint-health.ts counts those in a row). */
  | { kind: 'failed'; status: number | null; error: string; timeout?: boolean }
  | { kind: 'refused'; error: string }
  /** Aborted by stop(); `sent`: the request may have reached the receiver. */
  | { kind: 'stopped'; sent: boolean };

const toDate = (v: string | Date) => (v instanceof Date ? v : new Date(v));

/**
 * One pass: the pool (DeliveryPool) run until nothing more is due — every slot refilled as soon as
 * its attempt ends — then answers what happened. Throws (after the attempts in flight end) when the
 * database fails.
 */
export async function deliverDue(services: WebhookHandles, options: DeliverOptions = {}): Promise<PassResult> {
  const pool = new DeliveryPool(services, { ...options, limit: options.limit ?? 1000 });
  pool.kick();
  await pool.settled();
  if (pool.error !== undefined) throw pool.error;
  return pool.result;
}

/**
 * Attempts in flight, at most `concurrency` at once, `perWebhook` per webhook and `perAccount` per
 * account: each one that ends (recorded) frees its slot and asks for a claim, so one slow attempt
 * never holds back the others. Claims are made one at a time (a request made during a claim runs
 * right after it). In a pass (`deliverDue`) the first database failure stops the claims and is
 * rethrown; in the worker (`onError`) it is reported and the next kick tries again.
 */
export class DeliveryPool {
  readonly result: PassResult = { claimed: 0, succeeded: 0, retrying: 0, failed: 0 };
  error: unknown;
  private readonly owner: string;
  private readonly limit: number;
  private readonly concurrency: number;
  private readonly perWebhook: number;
  private readonly perAccount: number;
  private readonly at: string | null;
  /** The attempts in flight, by delivery id. */
  private readonly inFlight = new Map<string, ClaimedRow>();
  private claiming: Promise<void> | null = null;
  private again = false;
  private waiters: Array<() => void> = [];
  /** Failures and timeouts in a row per webhook: pauses and short deadlines. */
  private readonly health: EndpointHealth;

  constructor(
    private readonly services: WebhookHandles,
    private readonly options: DeliverOptions = {},
    private readonly onError?: (error: unknown, during: 'claim' | 'record') => void,
  ) {
    this.owner = options.owner ?? randomUUID();
    this.limit = options.limit ?? Number.POSITIVE_INFINITY;
    this.concurrency = Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY);
    this.perWebhook = Math.max(1, options.perWebhook ?? MAX_IN_FLIGHT_PER_WEBHOOK);
    this.perAccount = Math.max(1, options.perAccount ?? services.config.webhooks.maxInFlightPerAccount);
    // The database's clock unless the caller drives time (null: now() in each statement).
    this.at = options.now ? options.now.toISOString() : null;
    const { timeoutMs, slowTimeoutMs } = services.config.webhooks;
    this.health = new EndpointHealth(options.clock ?? Date.now, timeoutMs, slowTimeoutMs);
  }

  /** Fills the free slots with due deliveries (after the claim under way, if there is one); a failure goes to onError. */
  kick(): void {
    this.claim().catch((error) => this.fail(error, 'claim'));
  }

  /**
   * Fills the free slots and resolves when that claim has ended (rejects with its error): the
   * worker's timed look. A call during a claim joins it and makes it look once more.
   */
  claim(): Promise<void> {
    if (this.claiming) {
      this.again = true;
      return this.claiming;
    }
    this.claiming = this.fill().finally(() => {
      this.claiming = null;
      this.wake();
    });
    return this.claiming;
  }

  /** Resolves once nothing is in flight and no claim is under way. */
  async settled(): Promise<void> {
    while (this.claiming || this.inFlight.size) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private halted(): boolean {
    return Boolean(this.options.signal?.aborted) || (!this.onError && this.error !== undefined) || this.result.claimed >= this.limit;
  }

  private async fill(): Promise<void> {
    let more = false;
    do {
      this.again = false;
      if (this.halted()) return;
      const free = Math.min(this.concurrency - this.inFlight.size, this.limit - this.result.claimed);
      if (free <= 0) return;
      const busyAccounts: Record<string, number> = {};
      for (const row of this.inFlight.values()) busyAccounts[row.account_id] = (busyAccounts[row.account_id] ?? 0) + 1;
      const rows = await claim(this.services, this.owner, this.at, { n: free, perWebhook: this.perWebhook, perAccount: this.perAccount, busyAccounts, paused: this.health.paused() });
      this.result.claimed += rows.length;
      for (const row of rows) this.start(row);
      // Fewer than asked, but some: the window may have been filled by accounts that are now at their
      // limit (left out of the next claim), so look again rather than wait for the next tick.
      more = rows.length > 0 && rows.length < free;
    } while (this.again || more);
  }

  private start(row: ClaimedRow): void {
    this.inFlight.set(row.id, row);
    void (async () => {
      try {
        const outcome = await attempt(this.services, row, this.options, this.options.now ?? new Date(), this.health.timeoutFor(row.webhook_id));
        this.health.note(row.webhook_id, verdictOf(outcome));
        const ended = await record(this.services, this.owner, row, outcome, this.at, this.options.random);
        if (ended) this.result[ended]++;
      } catch (error) {
        // The outcome could not be written: the lease runs out and the delivery is tried again.
        this.fail(error, 'record');
      } finally {
        this.inFlight.delete(row.id);
        this.kick();
        this.wake();
      }
    })();
  }

  private fail(error: unknown, during: 'claim' | 'record'): void {
    if (this.onError) this.onError(error, during);
    else this.error ??= error;
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }
}

/** What an outcome says of the endpoint: a stop or a refused address says nothing. */
function verdictOf(outcome: Outcome): Verdict {
  if (outcome.kind === 'succeeded') return 'succeeded';
  if (outcome.kind === 'failed') return outcome.timeout ? 'timeout' : 'failed';
  return 'neutral';
}

/** The secrets that sign now: the current one, and the previous one while its overlap lasts. */
function secretsOf(services: WebhookHandles, row: ClaimedRow, now: Date): string[] {
  const open = (sealed: string) => openSecret(services.credentialCipher, sealed, row.account_id, row.webhook_id);
  const secrets = [open(row.secret_sealed)];
  if (row.previous_secret_sealed && row.previous_secret_until && toDate(row.previous_secret_until) > now) secrets.push(open(row.previous_secret_sealed));
  return secrets;
}

const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'ConnectionRefused']);

function describeError(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; code?: string; message?: string };
  if (e?.name === 'TimeoutError') return `timeout: no answer within ${timeoutMs} ms`;
  if (e?.code === 'ECONNREFUSED' || e?.code === 'ConnectionRefused') return 'connection refused';
  if (e?.code === 'ECONNRESET') return 'connection reset';
  // The first line, addresses cut out (they are the customer's own URL, but logs need not repeat it).
  const text = errorSummary(error);
  return (e?.code && !text.includes(e.code) ? `${e.code}: ${text}` : text).slice(0, 300);
}

/**
 * One attempt within `timeoutMs` (WEBHOOK_TIMEOUT_MS, or the short deadline of an endpoint that keeps
 * timing out): DNS and the SSRF check, then one POST to the address checked. Never throws.
 */
async function attempt(services: WebhookHandles, row: ClaimedRow, options: DeliverOptions, now: Date, timeoutMs: number): Promise<Outcome> {
  const { allowPrivateNetworks } = services.config.webhooks;
  const started = Date.now();
  // A failure that used up the deadline (no answer, or DNS that never answered) counts as a timeout.
  const failed = (error: string, status: number | null = null): Outcome => ({ kind: 'failed', status, error, timeout: Date.now() - started >= timeoutMs });
  // Whether a request may have reached the receiver (a stop after that keeps the lease).
  let sent = false;
  try {
    const url = new URL(row.url);
    const target = await resolveTarget(url, { allowPrivate: allowPrivateNetworks, localReceivers: localReceiversOf(services.config).receivers, lookup: options.lookup, timeoutMs });
    if (options.signal?.aborted) return { kind: 'stopped', sent };
    if (!target.ok) return target.refused ? { kind: 'refused', error: `refused address: ${target.reason}` } : failed(target.reason);
    let secrets: string[];
    try {
      secrets = secretsOf(services, row, now);
    } catch {
      return { kind: 'failed', status: null, error: 'the signing secret cannot be opened (was TRADING_ENCRYPTION_KEY changed without listing the old key in TRADING_ENCRYPTION_PREVIOUS_KEYS?)' };
    }
    const host = bareHost(url);
    let lastError: unknown;
    // Each address the name resolved to (all checked), in order, until one accepts the connection.
    for (const address of target.addresses) {
      const left = timeoutMs - (Date.now() - started);
      if (left <= 0) return { kind: 'failed', status: null, error: `timeout: no answer within ${timeoutMs} ms`, timeout: true };
      const pinned = new URL(url);
      pinned.hostname = isIP(address) === 6 ? `[${address}]` : address;
      const signal = options.signal ? AbortSignal.any([AbortSignal.timeout(left), options.signal]) : AbortSignal.timeout(left);
      try {
        if (options.signal?.aborted) return { kind: 'stopped', sent };
        sent = true;
        const response = await fetch(pinned, {
          method: 'POST',
          body: row.payload,
          redirect: 'manual',
          signal,
          headers: {
            host: url.host,
            'content-type': 'application/json',
            'user-agent': USER_AGENT,
            ...signatureHeaders(row.id, new Date(), row.payload, secrets),
          },
          // The certificate is checked against the URL's name, not the address connected to.
          ...(url.protocol === 'https:' && !isIP(host) ? { tls: { serverName: host } } : {}),
        });
        await response.body?.cancel().catch(() => {});
        if (response.status >= 200 && response.status < 300) return { kind: 'succeeded', status: response.status };
        const redirect = response.status >= 300 && response.status < 400 ? ' (redirects are not followed)' : '';
        return { kind: 'failed', status: response.status, error: `HTTP ${response.status}${redirect}` };
      } catch (error) {
        if (options.signal?.aborted) return { kind: 'stopped', sent };
        lastError = error;
        if (!CONNECT_ERRORS.has(String((error as { code?: string }).code))) break;
      }
    }
    return failed(describeError(lastError, timeoutMs));
  } catch (error) {
    if (options.signal?.aborted) return { kind: 'stopped', sent };
    return failed(describeError(error, timeoutMs));
  }
}

/**
 * Writes an attempt's outcome, if the lease is still ours: succeeded; failed at once for a refused
 * address; otherwise retried after retryDelayMs, no later than the end of the retry window, or failed
 * when that window is over. Answers how the delivery stands, or null when the lease was lost.
 *
 * An attempt stopped (stop(), a graceful shutdown) records nothing. If its request may have reached
 * the receiver, the lease is KEPT until at least WEBHOOK_TIMEOUT_MS from now: the receiver may still
 * be working on it, and releasing the lease would let another instance send the same delivery at
 * the same time. It is sent again (same webhook-id) once the lease ends. If nothing was sent, the
 * lease is released.
 */
async function record(services: WebhookHandles, owner: string, row: ClaimedRow, outcome: Outcome, at: string | null, random?: () => number): Promise<keyof PassResult | null> {
  const db = services.database.db;
  const ours = sql`d.id = ${row.id} and d.lease_owner = ${owner} and d.status = 'pending'`;
  if (outcome.kind === 'stopped') {
    const timeoutSeconds = services.config.webhooks.timeoutMs / 1000;
    await db.execute(
      outcome.sent
        ? sql`update webhook_deliveries d
                 set lease_until = greatest(d.lease_until, coalesce(${at}::timestamptz, now()) + make_interval(secs => ${timeoutSeconds}))
               where ${ours}`
        : sql`update webhook_deliveries d set lease_owner = null, lease_until = null where ${ours}`,
    );
    return null;
  }
  const code = outcome.kind === 'succeeded' || outcome.kind === 'failed' ? outcome.status : null;
  const error = outcome.kind === 'succeeded' ? null : outcome.error;
  const delaySeconds = retryDelayMs(row.attempts + 1, random) / 1000;
  const deadline = sql`(d.created_at + make_interval(hours => ${services.config.webhooks.retryHours}))`;
  const status = sql`(case when ${outcome.kind} = 'succeeded' then 'succeeded'
                           when ${outcome.kind} = 'refused' or t.now >= ${deadline} then 'failed'
                           else 'pending' end)`;
  const [updated] = resultRows<{ status: 'succeeded' | 'pending' | 'failed'; next_attempt_at: string | Date }>(
    await db.execute(sql`
      update webhook_deliveries d
         set status = ${status}, attempts = d.attempts + 1, last_status_code = ${code}, last_error = ${error},
             next_attempt_at = case when ${status} = 'pending' then least(t.now + make_interval(secs => ${delaySeconds}), ${deadline}) else t.now end,
             completed_at = case when ${status} = 'pending' then null else t.now end,
             lease_owner = null, lease_until = null
        from (select coalesce(${at}::timestamptz, now()) as now) t
       where ${ours}
      returning d.status, d.next_attempt_at`),
  );
  // Lost the lease (it ran out and another worker took the delivery, or the webhook was deleted): theirs to record.
  if (!updated) return null;
  const log = { deliveryId: row.id, webhookId: row.webhook_id, accountId: row.account_id, attempts: row.attempts + 1, error };
  if (updated.status === 'failed') services.logger.warn('webhook delivery failed; not retried', log);
  else if (updated.status === 'pending') services.logger.debug('webhook delivery attempt failed; retrying', { ...log, nextAttemptAt: toDate(updated.next_attempt_at).toISOString() });
  return updated.status === 'succeeded' ? 'succeeded' : updated.status === 'failed' ? 'failed' : 'retrying';
}

/**
 * Keeps one DeliveryPool running (0: off): each attempt that ends refills its slot, and a job
 * (server/lib/jobs.ts) looks for deliveries that became due every WEBHOOK_INTERVAL_MS; another runs
 * the balance-low check every BALANCE_LOW_CHECK_MS (its first one after one WEBHOOK_INTERVAL_MS).
 * `stop()` stops both jobs, aborts the attempts in flight (a lease whose request may have reached the
 * receiver is kept for WEBHOOK_TIMEOUT_MS; see record) and waits for them to end.
 */
export function startWebhookWorker(services: WebhookHandles, options: { lookup?: Lookup; concurrency?: number } = {}): { stop(): Promise<void> } {
  const intervalMs = services.config.webhooks.intervalMs;
  if (intervalMs <= 0) return { stop: async () => {} };
  const { logger } = services;
  const controller = new AbortController();
  // Claims made when a slot frees (not by the job) report here; the job logs its own.
  const pool = new DeliveryPool(services, { owner: randomUUID(), signal: controller.signal, lookup: options.lookup, concurrency: options.concurrency }, (error, during) =>
    logger.warn(during === 'claim' ? 'webhook delivery claim failed; the next one retries' : 'webhook delivery outcome not recorded; its lease runs out and it is retried', {
      error: errorFirstLine(error),
    }),
  );
  const jobs = [
    startJob({ name: 'webhook_delivery', intervalMs, logger, metrics: services.metrics.jobs, run: () => pool.claim() }),
    startJob({ name: 'balance_low', intervalMs: Math.max(intervalMs, BALANCE_LOW_CHECK_MS), firstRunMs: intervalMs, logger, metrics: services.metrics.jobs, run: () => checkBalanceLow(services) }),
  ];
  return {
    async stop() {
      controller.abort();
      await Promise.all(jobs.map((job) => job.stop()));
      await pool.settled();
    },
  };
}
