/**
 * The webhook delivery worker (issue #19), in every server instance: every WEBHOOK_INTERVAL_MS it
 * takes the deliveries that are due and sends them.
 *
 *  - Claimed under a lease: one conditional UPDATE … WHERE the lease is free or expired … RETURNING,
 *    so two instances never send one delivery at the same time. A lease lasts one attempt's deadline
 *    (WEBHOOK_TIMEOUT_MS, DNS included) plus LEASE_MARGIN_MS, and a pass claims only as many as it
 *    sends at once, so a lease never runs out before its attempt ends. A process killed mid-delivery
 *    loses nothing: its lease runs out and a later pass (here or on another instance) sends the
 *    delivery again, with the same `webhook-id`.
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
 * `deliverDue` is one pass (tests drive time through `now`); `startWebhookWorker` runs passes (never
 * two at once in one process) and the balance-low check (balance-low.ts).
 */
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { sql } from 'drizzle-orm';
import { resultRows } from '../../db/prepared.ts';
import type { Services } from '../services.ts';
import { checkBalanceLow } from './balance-low.ts';
import { openSecret, signatureHeaders } from './signing.ts';
import { bareHost, resolveTarget, type Lookup } from './ssrf.ts';

/** A lease outlasts its attempt's deadline by this much (the time to record the outcome). */
export const LEASE_MARGIN_MS = 5_000;
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
  /** Deliveries sent at once, and claimed at once (default 8). */
  concurrency?: number;
  /** DNS (tests); the system resolver otherwise. */
  lookup?: Lookup;
  /** Aborted: attempts in flight stop and their leases are released (nothing is recorded for them). */
  signal?: AbortSignal;
  /** Jitter source (tests). */
  random?: () => number;
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

interface ClaimedRow {
  id: string;
  webhook_id: string;
  account_id: string;
  payload: string;
  attempts: number;
  created_at: string | Date;
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_until: string | Date | null;
}

type Outcome =
  | { kind: 'succeeded'; status: number }
  | { kind: 'failed'; status: number | null; error: string }
  | { kind: 'refused'; error: string }
  | { kind: 'stopped' };

const toDate = (v: string | Date) => (v instanceof Date ? v : new Date(v));

/** One pass: claims due deliveries (a few at a time, under a lease), sends them, records each outcome. */
export async function deliverDue(services: Services, options: DeliverOptions = {}): Promise<PassResult> {
  const result: PassResult = { claimed: 0, succeeded: 0, retrying: 0, failed: 0 };
  const owner = options.owner ?? randomUUID();
  const limit = options.limit ?? 1000;
  const concurrency = Math.max(1, options.concurrency ?? 8);
  // The database's clock unless the caller drives time (null: now() in each statement).
  const at = options.now ? options.now.toISOString() : null;
  while (result.claimed < limit && !options.signal?.aborted) {
    const batch = await claim(services, owner, Math.min(concurrency, limit - result.claimed), at);
    result.claimed += batch.length;
    await Promise.all(
      batch.map(async (row) => {
        const outcome = await attempt(services, row, options, options.now ?? new Date());
        const ended = await record(services, owner, row, outcome, at, options.random);
        if (ended) result[ended]++;
      }),
    );
    if (batch.length < Math.min(concurrency, limit)) break;
  }
  return result;
}

/** Takes up to `n` due deliveries of active webhooks whose lease is free or ran out; each is ours until the lease ends. */
async function claim(services: Services, owner: string, n: number, at: string | null): Promise<ClaimedRow[]> {
  const now = sql`coalesce(${at}::timestamptz, now())`;
  const leaseSeconds = (services.config.webhooks.timeoutMs + LEASE_MARGIN_MS) / 1000;
  const free = (d: 'c' | 'd') => sql`(${sql.raw(d)}.lease_until is null or ${sql.raw(d)}.lease_until <= ${now})`;
  return resultRows<ClaimedRow>(
    await services.database.db.execute(sql`
      update webhook_deliveries d
         set lease_owner = ${owner}, lease_until = ${now} + make_interval(secs => ${leaseSeconds})
        from webhooks w
       where d.id in (
               select c.id
                 from webhook_deliveries c join webhooks cw on cw.id = c.webhook_id and cw.status = 'active'
                where c.status = 'pending' and c.next_attempt_at <= ${now} and ${free('c')}
                order by c.next_attempt_at, c.id
                limit ${n}
                  for update of c skip locked)
         and w.id = d.webhook_id and w.status = 'active'
         -- Re-checked on the row as it is now: a concurrent claimer that got it first leaves nothing to take.
         and d.status = 'pending' and ${free('d')}
      returning d.id, d.webhook_id, d.account_id, d.payload, d.attempts, d.created_at,
                w.url, w.secret_sealed, w.previous_secret_sealed, w.previous_secret_until`),
  );
}

/** The secrets that sign now: the current one, and the previous one while its overlap lasts. */
function secretsOf(services: Services, row: ClaimedRow, now: Date): string[] {
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
  const text = String(e?.message ?? error).split('\n')[0]!.replace(/\b\w+:\/\/\S+/g, '<url>');
  return (e?.code && !text.includes(e.code) ? `${e.code}: ${text}` : text).slice(0, 300);
}

/** One attempt: DNS and the SSRF check, then one POST to the address checked. Never throws. */
async function attempt(services: Services, row: ClaimedRow, options: DeliverOptions, now: Date): Promise<Outcome> {
  const { timeoutMs, allowPrivateNetworks } = services.config.webhooks;
  const started = Date.now();
  try {
    const url = new URL(row.url);
    const target = await resolveTarget(url, { allowPrivate: allowPrivateNetworks, lookup: options.lookup, timeoutMs });
    if (options.signal?.aborted) return { kind: 'stopped' };
    if (!target.ok) return target.refused ? { kind: 'refused', error: `refused address: ${target.reason}` } : { kind: 'failed', status: null, error: target.reason };
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
      if (left <= 0) return { kind: 'failed', status: null, error: `timeout: no answer within ${timeoutMs} ms` };
      const pinned = new URL(url);
      pinned.hostname = isIP(address) === 6 ? `[${address}]` : address;
      const signal = options.signal ? AbortSignal.any([AbortSignal.timeout(left), options.signal]) : AbortSignal.timeout(left);
      try {
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
        if (options.signal?.aborted) return { kind: 'stopped' };
        lastError = error;
        if (!CONNECT_ERRORS.has(String((error as { code?: string }).code))) break;
      }
    }
    return { kind: 'failed', status: null, error: describeError(lastError, timeoutMs) };
  } catch (error) {
    if (options.signal?.aborted) return { kind: 'stopped' };
    return { kind: 'failed', status: null, error: describeError(error, timeoutMs) };
  }
}

/**
 * Writes an attempt's outcome, if the lease is still ours: succeeded; failed at once for a refused
 * address; otherwise retried after retryDelayMs, no later than the end of the retry window, or failed
 * when that window is over. Answers how the delivery stands, or null when the lease was lost.
 */
async function record(services: Services, owner: string, row: ClaimedRow, outcome: Outcome, at: string | null, random?: () => number): Promise<keyof PassResult | null> {
  const db = services.database.db;
  const ours = sql`d.id = ${row.id} and d.lease_owner = ${owner} and d.status = 'pending'`;
  if (outcome.kind === 'stopped') {
    await db.execute(sql`update webhook_deliveries d set lease_owner = null, lease_until = null where ${ours}`);
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
 * Runs a delivery pass every WEBHOOK_INTERVAL_MS (0: off) — the next pass at once while passes find
 * full batches — and the balance-low check every BALANCE_LOW_CHECK_MS. `stop()` aborts the attempts
 * in flight (their leases are released for another instance) and waits for the pass to end.
 */
export function startWebhookWorker(services: Services, options: { lookup?: Lookup } = {}): { stop(): Promise<void> } {
  const intervalMs = services.config.webhooks.intervalMs;
  if (intervalMs <= 0) return { stop: async () => {} };
  const controller = new AbortController();
  const owner = randomUUID();
  let running: Promise<void> | undefined;
  let balanceCheckedAt = 0;
  const describe = (error: unknown) => String((error as Error)?.message ?? error).split('\n')[0];
  const pass = async () => {
    for (;;) {
      const done = await deliverDue(services, { owner, signal: controller.signal, lookup: options.lookup, limit: 200 });
      if (done.claimed < 200 || controller.signal.aborted) break;
    }
    if (Date.now() - balanceCheckedAt >= BALANCE_LOW_CHECK_MS && !controller.signal.aborted) {
      balanceCheckedAt = Date.now();
      await checkBalanceLow(services).catch((error) => services.logger.warn('balance-low check failed; the next one retries', { error: describe(error) }));
    }
  };
  const timer = setInterval(() => {
    if (running) return;
    running = pass()
      .catch((error) => services.logger.warn('webhook delivery pass failed; the next one retries', { error: describe(error) }))
      .finally(() => (running = undefined));
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      controller.abort();
      await running;
    },
  };
}
