/**
 * Metered usage exported to Stripe Billing Meter Events. Usage rows billed to the meter
 * (`usage_records.billed_to = 'meter'`) are exported by marking them: each pass stamps the rows it
 * takes with a new batch id (`usage_records.export_batch`) and writes their sums per account and
 * minute (UTC) into an outbox (`meter_exports`, one row per (account, minute, batch)). Each outbox row
 * is sent as ONE meter event: payload {stripe_customer_id, value = Σ cost in micro-USD}, timestamp =
 * the minute, and an identifier derived from (account, minute, batch), so a resend of the same row is
 * deduplicated by Stripe (identifiers are unique for ≥ 24 h; the same value is also sent as the
 * request's Idempotency-Key), while a later batch with rows of the same minute is another event that
 * Stripe adds up. A minute may thus be billed in several events; their sum is that minute's usage.
 *
 * One pass (exportMeteredUsage):
 *  1. Lease: one conditional upsert of the cursor row (meter_cursor, now the lease alone) takes it
 *     when it is free, expired, or ours; a pass that does not get it does nothing (another instance is
 *     exporting). The lease lasts LEASE_MS and is renewed while the pass runs, so a crashed holder
 *     blocks others for ≤ LEASE_MS.
 *  2. Mark, in ONE transaction that also checks we still hold the lease: every metered row not yet
 *     exported (export_batch is null) and older than the settle time gets this pass's batch id, and
 *     the sums of exactly those rows per (account, minute) go into the outbox with that batch. A
 *     crash leaves both or neither. Nothing depends on when a row commits: a row whose admission
 *     committed late (lock waits, a stall) — after rows of its minute were exported — is simply
 *     taken by a later pass, in its own batch. Each row is counted in exactly one batch (the update
 *     only takes unmarked rows; concurrent markers would serialize on the row locks).
 *  3. Deliver every unsent outbox row, oldest minute first, and stamp sent_at. 429, 5xx and network
 *     errors are retried with exponential backoff (ATTEMPTS per row); if a row still fails, Stripe is
 *     taken to be down and the pass stops: the rest waits for the next pass. Any other 4xx is logged
 *     and reported (`failed`) and the pass goes on with the next row; the row stays unsent, so each
 *     later pass tries it once more (e.g. after an operator fixed the customer id). 401/403 stop the pass.
 *
 * Settle time (settleMs): a row is exported only once it is max(5 s, 2 × VENUE_TIMEOUT_MS + 5 s) old
 * (by created_at, its admission statement's now()). A failed request is refunded (its usage row
 * deleted) when its handler ends, at most about VENUE_TIMEOUT_MS after admission, so normally a
 * refunded row is gone before any pass could take it.
 * Caveat: a refund later than the settle time (e.g. a refund retried after a database outage) of a
 * row already exported stays billed on Stripe: meter events cannot be lowered after the fact. The
 * refund must then keep the row (it was billed) rather than delete it — see refundCharge.
 * A provisional unit (usage_records.provisional_until: a part of the company export not yet written)
 * is not exported until its stream confirms it; one refunded instead never reaches Stripe.
 * Clock: the database's (the clock that stamps created_at), unless a test injects `now`.
 * A crash between Stripe's answer and the sent_at update resends the row on the next pass: the
 * identifier makes that harmless while it is within Stripe's 24 h window.
 * Rows exported before batches existed (by the former minute cursor) carry the batch ''.
 */
import { hostname } from 'node:os';
import { sql, type SQL } from 'drizzle-orm';
import type Stripe from 'stripe';
import type { Config } from '../config.ts';
import { startJob, type Job } from '../lib/jobs.ts';
import type { CoreHandles } from '../handles.ts';
import { createStripeClient, deliverRows, redact, rowsOf, type MeterExportFailure } from './meter-delivery.ts';

export { createStripeClient, type MeterExportFailure } from './meter-delivery.ts';

export const CURSOR_ID = 'stripe';
/** How long a lease holds without renewal: the longest a crashed exporter blocks the others. */
export const LEASE_MS = 60_000;

/**
 * How old a metered usage row must be before it is exported: long enough that a failed request has
 * been refunded (its row deleted) — the handler's venue call times out after VENUE_TIMEOUT_MS, twice
 * that for slack — plus 5 s for in-flight admissions and small clock differences.
 */
export function settleMs(config: Pick<Config, 'venueTimeoutMs'>): number {
  return Math.max(5_000, 2 * config.venueTimeoutMs + 5_000);
}

export interface MeterExportSummary {
  /** Usage rows this pass marked as exported (its batch). */
  usageRows: number;
  /** Outbox rows written (one per account and minute among those usage rows, zero sums left out). */
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

/** A new batch id: when the pass marked its rows, and a random part (ids never repeat). */
function batchId(at: Date): string {
  return `${at.toISOString()}/${crypto.randomUUID().slice(0, 8)}`;
}

const iso = (d: Date) => d.toISOString();

/** The database's clock, read once and followed locally for the pass. */
async function databaseClock(services: CoreHandles): Promise<() => Date> {
  const [row] = await rowsOf<{ ms: string | number }>(services.database.db.execute(sql`select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms`));
  const offset = Number(row!.ms) - Date.now();
  return () => new Date(Date.now() + offset);
}

export async function exportMeteredUsage(services: CoreHandles, options: MeterExportOptions = {}): Promise<MeterExportSummary> {
  const { db } = services.database;
  const config = services.config.stripe;
  const now = options.now ?? (await databaseClock(services));
  const owner = options.owner ?? exporterName();
  const summary: MeterExportSummary = { usageRows: 0, rowsWritten: 0, delivered: 0, failed: 0, pending: 0, busy: false, failures: [] };
  const leaseUntil = () => iso(new Date(now().getTime() + LEASE_MS));

  // 1. The lease, in one statement (a first pass creates the row).
  const [lease] = await rowsOf<{ id: string }>(
    db.execute(sql`
      insert into meter_cursor (id, lease_owner, lease_until)
      values (${CURSOR_ID}, ${owner}, ${leaseUntil()}::timestamptz)
      on conflict (id) do update set lease_owner = excluded.lease_owner, lease_until = excluded.lease_until
       where meter_cursor.lease_owner is null or meter_cursor.lease_owner = excluded.lease_owner
          or meter_cursor.lease_until < ${iso(now())}::timestamptz
      returning id`),
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
    // 2. Mark the settled rows with a new batch and write their sums, in one transaction.
    if (!options.signal?.aborted) {
      const at = now();
      const before = new Date(at.getTime() - settleMs(services.config));
      const marked = await db.transaction(async (tx) => {
        const held = await rowsOf(tx.execute(sql`${stillOurs(sql`update meter_cursor set lease_until = ${leaseUntil()}::timestamptz`)} returning id`));
        if (held.length === 0) throw new LeaseLost();
        const [counts] = await rowsOf<{ usage_rows: string | number; written: string | number }>(tx.execute(markBatch(batchId(at), before)));
        return counts!;
      });
      summary.usageRows = Number(marked.usage_rows);
      summary.rowsWritten = Number(marked.written);
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
 * One statement: marks every unexported metered row created before `before` with `batch`, and writes
 * Σ cost of exactly those rows per (account, minute) into the outbox (accounts with a zero sum send
 * nothing). The identifier depends on (account, minute, batch) only. An account without a Stripe
 * customer id gets '' here: its usage is kept, and delivery uses the id the account has by then (or
 * reports it missing). Answers how many usage rows were marked and how many outbox rows written.
 */
function markBatch(batch: string, before: Date): SQL {
  return sql`
    with marked as (
      update usage_records set export_batch = ${batch}
       where billed_to = 'meter' and export_batch is null and created_at < ${iso(before)}::timestamptz
         and provisional_until is null -- a unit not yet written may still be refunded: exported once confirmed
      returning account_id, date_trunc('minute', created_at, 'UTC') as minute, cost_micros
    ), written as (
      insert into meter_exports (account_id, minute, batch, stripe_customer_id, value_micros, identifier)
      select m.account_id, m.minute, ${batch}, coalesce(a.stripe_customer_id, ''), sum(m.cost_micros)::bigint,
             'mu_' || md5(m.account_id || '/' || extract(epoch from m.minute)::bigint::text || '/' || ${batch}::text)
        from marked m left join accounts a on a.id = m.account_id
       group by m.account_id, m.minute, a.stripe_customer_id
      having sum(m.cost_micros) > 0
      returning account_id
    )
    select (select count(*) from marked)::bigint as usage_rows, (select count(*) from written)::bigint as written`;
}

async function countPending(services: CoreHandles): Promise<number> {
  const [row] = await rowsOf<{ n: string | number }>(services.database.db.execute(sql`select count(*)::bigint as n from meter_exports where sent_at is null`));
  return Number(row!.n);
}

/**
 * Runs a pass now and then every config.stripe.exportIntervalMs under the job runner's rules
 * (server/lib/jobs.ts: never overlapping, backoff after failures, stop() aborts the pass in flight —
 * which releases the lease — and waits for it). Off without a secret key or with an interval of 0.
 */
export function startMeterExporter(services: CoreHandles, options: Pick<MeterExportOptions, 'stripe' | 'now'> = {}): Job {
  const { secretKey, exportIntervalMs } = services.config.stripe;
  const { logger } = services;
  if (!secretKey && !options.stripe) {
    logger.info('metered usage export is off: STRIPE_SECRET_KEY is not set, so metered usage is not sent to Stripe');
    return startJob({ name: 'meter_export', intervalMs: 0, logger, run: async () => {} });
  }
  if (exportIntervalMs === 0) logger.info('metered usage export is off: METER_EXPORT_INTERVAL_MS is 0 (run npm run billing:export)');
  const stripe = options.stripe ?? createStripeClient(services.config.stripe);
  // One name for this process: a pass that died without releasing the lease is retaken by the next.
  const owner = exporterName();
  return startJob({
    name: 'meter_export',
    intervalMs: exportIntervalMs,
    firstRunMs: 0,
    logger,
    metrics: services.metrics.jobs,
    // Stripe's errors may quote the key: the log line gets the message with any key redacted.
    describeError: (error) => redact(error, secretKey),
    run: async (signal) => {
      const s = await exportMeteredUsage(services, { stripe, owner, now: options.now, signal });
      if (s.rowsWritten || s.delivered || s.failed) {
        const { failures: _, ...counts } = s;
        logger.info('metered usage exported', counts);
      }
      return s;
    },
  });
}
