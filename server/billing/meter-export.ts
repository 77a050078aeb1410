/**
 * Metered usage exported to Stripe Billing Meter Events (issue #17). Usage rows billed to the meter
 * (`usage_records.billed_to = 'meter'`) are summed per account and minute (UTC) into an outbox
 * (`meter_exports`), then each outbox row is sent as ONE meter event: payload {stripe_customer_id,
 * value = Σ cost in micro-USD}, timestamp = the minute, and an identifier derived from (account,
 * minute) alone, so a resend is deduplicated by Stripe (identifiers are unique for ≥ 24 h; the same
 * value is also sent as the request's Idempotency-Key).
 *
 * One pass (exportMeteredUsage):
 *  1. Lease: one conditional upsert of the cursor row takes it when it is free, expired, or ours; a
 *     pass that does not get it does nothing (another instance is exporting). The lease lasts
 *     LEASE_MS and is renewed while the pass runs, so a crashed holder blocks others for ≤ LEASE_MS.
 *  2. Close minutes: every minute from the cursor to the last closed minute goes into the outbox, one
 *     minute per transaction that also advances the cursor (only if we still hold the lease and the
 *     cursor is where we read it) — a crash leaves the outbox and the cursor in step. Minutes with no
 *     metered usage are skipped in one step. A minute is closed GRACE_MS after it ends: a usage row's
 *     created_at is its admission statement's now(), and an admission commits within moments, so
 *     after the grace no new row can appear in that minute (see the refund caveat below).
 *  3. Deliver every unsent outbox row, oldest first, and stamp sent_at. 429, 5xx and network errors
 *     are retried with exponential backoff (ATTEMPTS per row); if a row still fails, Stripe is taken to
 *     be down and the pass stops: the rest waits for the next pass. Any other 4xx is logged and
 *     reported (`failed`) and the pass goes on with the next row; the row stays unsent, so each later
 *     pass tries it once more (e.g. after an operator fixed the customer id). 401/403 stop the pass.
 *
 * Where a fresh cursor starts: at the minute of the earliest metered usage row (nothing metered is
 * ever skipped), or at the current minute when there is none.
 * Clock: the database's (the clock that stamps created_at), unless a test injects `now`.
 * A crash between Stripe's answer and the sent_at update resends the row on the next pass: the
 * identifier makes that harmless while it is within Stripe's 24 h window.
 * Caveat: a request refunded after its minute was exported (its usage row deleted late) stays billed
 * on Stripe; admissions that fail are refunded within their request, normally well inside the grace.
 */
import { hostname } from 'node:os';
import { sql, type SQL } from 'drizzle-orm';
import type Stripe from 'stripe';
import type { Services } from '../services.ts';
import { createStripeClient, deliverRows, redact, rowsOf, type MeterExportFailure } from './meter-delivery.ts';

export { createStripeClient, type MeterExportFailure } from './meter-delivery.ts';

export const CURSOR_ID = 'stripe';
/** A minute closes this long after it ends (in-flight admissions commit; small clock differences). */
export const GRACE_MS = 5_000;
/** How long a lease holds without renewal: the longest a crashed exporter blocks the others. */
export const LEASE_MS = 60_000;
const MINUTE_MS = 60_000;

export interface MeterExportSummary {
  /** Minutes the cursor moved over in this pass (empty ones included). */
  minutesClosed: number;
  /** Outbox rows written (one per account with metered usage in a closed minute). */
  rowsWritten: number;
  delivered: number;
  /** Rows Stripe refused (4xx), or whose retries ran out (Stripe down): still unsent. */
  failed: number;
  /** Outbox rows still unsent after the pass. */
  pending: number;
  /** Another exporter held the lease: this pass wrote and sent nothing. */
  busy: boolean;
  failures: MeterExportFailure[];
}

export interface MeterExportOptions {
  /** The clock (tests); default: the database's clock. */
  now?: () => Date;
  /** A Stripe client; default: one built from config.stripe. */
  stripe?: Stripe;
  /** The lease holder's name; default: a new one per call (so two calls never share a lease). */
  owner?: string;
  /** Aborting stops the pass after the rows in flight (shutdown); the lease is released. */
  signal?: AbortSignal;
  /** Tuning for tests: attempts per row (default 4), first backoff in ms (default 500), rows in flight (default 4). */
  attempts?: number;
  backoffMs?: number;
  concurrency?: number;
}

/** A lease holder's name: where it runs, for an operator reading meter_cursor. */
export function exporterName(): string {
  return `${hostname()}/${process.pid}/${crypto.randomUUID().slice(0, 8)}`;
}

const iso = (d: Date) => d.toISOString();
const floorMinute = (ms: number) => Math.floor(ms / MINUTE_MS) * MINUTE_MS;

/** The database's clock, read once and followed locally for the pass. */
async function databaseClock(services: Services): Promise<() => Date> {
  const [row] = await rowsOf<{ ms: string | number }>(services.database.db.execute(sql`select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms`));
  const offset = Number(row!.ms) - Date.now();
  return () => new Date(Date.now() + offset);
}

export async function exportMeteredUsage(services: Services, options: MeterExportOptions = {}): Promise<MeterExportSummary> {
  const { db } = services.database;
  const config = services.config.stripe;
  const now = options.now ?? (await databaseClock(services));
  const owner = options.owner ?? exporterName();
  const summary: MeterExportSummary = { minutesClosed: 0, rowsWritten: 0, delivered: 0, failed: 0, pending: 0, busy: false, failures: [] };
  const leaseUntil = () => iso(new Date(now().getTime() + LEASE_MS));

  // 1. The lease, in one statement: a first pass creates the cursor (with its starting minute).
  const start = sql`coalesce(date_trunc('minute', (select min(created_at) from usage_records where billed_to = 'meter'), 'UTC'),
                             date_trunc('minute', ${iso(now())}::timestamptz, 'UTC'))`;
  const [lease] = await rowsOf<{ through: string | number }>(
    db.execute(sql`
      insert into meter_cursor (id, exported_through, lease_owner, lease_until)
      values (${CURSOR_ID}, ${start}, ${owner}, ${leaseUntil()}::timestamptz)
      on conflict (id) do update set lease_owner = excluded.lease_owner, lease_until = excluded.lease_until
       where meter_cursor.lease_owner is null or meter_cursor.lease_owner = excluded.lease_owner
          or meter_cursor.lease_until < ${iso(now())}::timestamptz
      returning (extract(epoch from exported_through) * 1000)::bigint as through`),
  );
  if (!lease) {
    summary.busy = true;
    summary.pending = await countPending(services);
    return summary;
  }

  /** Extends our lease; false when another exporter has taken it (we stalled past LEASE_MS). */
  const renew = async () =>
    (await rowsOf(db.execute(sql`update meter_cursor set lease_until = ${leaseUntil()}::timestamptz where id = ${CURSOR_ID} and lease_owner = ${owner} returning id`))).length > 0;
  const stillOurs = (update: SQL) => sql`${update} where id = ${CURSOR_ID} and lease_owner = ${owner}`;

  try {
    // 2. Close minutes.
    let cursor = Number(lease.through);
    const closeThrough = floorMinute(now().getTime() - GRACE_MS);
    while (cursor < closeThrough && !options.signal?.aborted) {
      const [next] = await rowsOf<{ first: string | number | null }>(
        db.execute(sql`select (extract(epoch from min(created_at)) * 1000)::bigint as first from usage_records
                        where billed_to = 'meter' and created_at >= ${iso(new Date(cursor))}::timestamptz and created_at < ${iso(new Date(closeThrough))}::timestamptz`),
      );
      const minute = next?.first == null ? null : floorMinute(Number(next.first));
      const through = minute === null ? closeThrough : minute + MINUTE_MS;
      const written = await db.transaction(async (tx) => {
        const rows = minute === null ? [] : await rowsOf(tx.execute(aggregateMinute(minute)));
        const moved = await rowsOf(
          tx.execute(sql`${stillOurs(sql`update meter_cursor set exported_through = ${iso(new Date(through))}::timestamptz, lease_until = ${leaseUntil()}::timestamptz`)}
                          and exported_through = ${iso(new Date(cursor))}::timestamptz returning id`),
        );
        if (moved.length === 0) throw new LeaseLost();
        return rows.length;
      });
      summary.rowsWritten += written;
      summary.minutesClosed += (through - cursor) / MINUTE_MS;
      cursor = through;
    }

    // 3. Deliver (without a key there is no client: such a pass, never run by our callers, only fills the outbox).
    if (config.secretKey || options.stripe) {
      const stripe = options.stripe ?? createStripeClient(config);
      const outcome = await deliverRows(services, stripe, { ...options, now, renew, renewEveryMs: LEASE_MS / 4, eventName: config.meterEventName });
      summary.delivered = outcome.delivered;
      summary.failed = outcome.failures.length;
      summary.failures = outcome.failures;
    }
  } catch (error) {
    if (!(error instanceof LeaseLost)) throw error;
    services.logger.warn('metered usage export: another exporter took the lease; this pass stopped', { owner });
  } finally {
    await db.execute(stillOurs(sql`update meter_cursor set lease_owner = null, lease_until = null`)).catch(() => {});
  }
  summary.pending = await countPending(services);
  return summary;
}

class LeaseLost extends Error {}

/**
 * One minute's outbox rows: Σ metered cost per account (accounts with a zero sum send nothing).
 * The identifier depends on (account, minute) only. An account without a Stripe customer id gets ''
 * here: its usage is kept, and delivery uses the id the account has by then (or reports it missing).
 */
function aggregateMinute(minuteMs: number): SQL {
  const from = iso(new Date(minuteMs));
  const to = iso(new Date(minuteMs + MINUTE_MS));
  return sql`
    insert into meter_exports (account_id, minute, stripe_customer_id, value_micros, identifier)
    select u.account_id, ${from}::timestamptz, coalesce(a.stripe_customer_id, ''), sum(u.cost_micros)::bigint,
           'mu_' || md5(u.account_id || '/' || ${String(minuteMs / 1000)})
      from usage_records u left join accounts a on a.id = u.account_id
     where u.billed_to = 'meter' and u.created_at >= ${from}::timestamptz and u.created_at < ${to}::timestamptz
     group by u.account_id, a.stripe_customer_id
    having sum(u.cost_micros) > 0
    on conflict (account_id, minute) do nothing
    returning account_id`;
}

async function countPending(services: Services): Promise<number> {
  const [row] = await rowsOf<{ n: string | number }>(services.database.db.execute(sql`select count(*)::bigint as n from meter_exports where sent_at is null`));
  return Number(row!.n);
}

export interface MeterExporter {
  stop(): Promise<void>;
}

/**
 * Runs a pass now and then every config.stripe.exportIntervalMs (the next one is scheduled when the
 * previous one ends, so passes never overlap). Off without a secret key or with an interval of 0.
 * A failed pass is logged; the next one retries. stop() aborts the pass in flight and waits for it.
 */
export function startMeterExporter(services: Services, options: Pick<MeterExportOptions, 'stripe' | 'now'> = {}): MeterExporter {
  const { secretKey, exportIntervalMs } = services.config.stripe;
  const { logger } = services;
  if (!secretKey && !options.stripe) {
    logger.info('metered usage export is off: STRIPE_SECRET_KEY is not set, so metered usage is not sent to Stripe');
    return { stop: async () => {} };
  }
  if (exportIntervalMs === 0) {
    logger.info('metered usage export is off: METER_EXPORT_INTERVAL_MS is 0 (run npm run billing:export)');
    return { stop: async () => {} };
  }
  const stripe = options.stripe ?? createStripeClient(services.config.stripe);
  // One name for this process: a pass that died without releasing the lease is retaken by the next.
  const owner = exporterName();
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | undefined;

  const pass = async () => {
    try {
      const s = await exportMeteredUsage(services, { stripe, owner, now: options.now, signal: controller.signal });
      if (s.rowsWritten || s.delivered || s.failed) {
        const { failures: _, ...counts } = s;
        logger.info('metered usage exported', counts);
      }
    } catch (error) {
      logger.error('metered usage export failed; the next pass retries', { error: redact(error, secretKey) });
    }
  };
  const schedule = (ms: number) => {
    if (controller.signal.aborted) return;
    timer = setTimeout(() => {
      running = pass().finally(() => {
        running = undefined;
        schedule(exportIntervalMs);
      });
    }, ms);
    timer.unref?.();
  };
  schedule(0);
  return {
    stop: async () => {
      controller.abort();
      clearTimeout(timer);
      await running;
    },
  };
}
