/**
 * Delivery half of the meter export (meter-export.ts has the pass): sends unsent outbox rows (one per
 * account, minute and batch) to Stripe's meter events, oldest minute first, a few in flight, and
 * stamps sent_at on each one Stripe took.
 * Retries are ours (the client's own are off) so that they are bounded per pass and visible.
 */
import { sql } from 'drizzle-orm';
import Stripe from 'stripe';
import type { Config } from '../config.ts';
import type { CoreHandles } from '../handles.ts';
import { resultRows } from '../../db/prepared.ts';
import { errorMessage } from '../lib/error-message.ts';

export interface MeterExportFailure {
  accountId: string;
  /** ISO minute (UTC). */
  minute: string;
  /** The export batch of the outbox row. */
  batch: string;
  identifier: string;
  /** Stripe's HTTP status; absent for network errors and rows we could not send (no customer id). */
  status?: number;
  reason: string;
}

/** The rows of a raw query, on either driver. */
export async function rowsOf<T>(query: Promise<unknown>): Promise<T[]> {
  return resultRows<T>(await query);
}

/** One Stripe call's deadline: well inside LEASE_MS, so the lease is renewed between attempts. */
const REQUEST_TIMEOUT_MS = 15_000;
const PAGE = 200;

/** The official client pointed at config.apiBase (host, port, protocol), without its own retries. */
export function createStripeClient(config: Config['stripe']): Stripe {
  if (!config.secretKey) throw new Error('STRIPE_SECRET_KEY is not set');
  const base = new URL(config.apiBase);
  const protocol = base.protocol === 'http:' ? 'http' : 'https';
  return new Stripe(config.secretKey, {
    host: base.hostname,
    port: base.port || (protocol === 'http' ? 80 : 443),
    protocol,
    maxNetworkRetries: 0,
    timeout: REQUEST_TIMEOUT_MS,
    telemetry: false,
  });
}

/** An error's message with anything key-like removed (Stripe's 401 names a masked key; never log even that). */
export function redact(error: unknown, secretKey?: string): string {
  let text = errorMessage(error);
  if (secretKey) text = text.split(secretKey).join('[redacted]');
  return text.replace(/\b(sk|rk)_(test|live)_[A-Za-z0-9*]+/g, '[redacted]');
}

interface OutboxRow {
  account_id: string;
  minute_s: string | number;
  batch: string;
  value_micros: string | number;
  identifier: string;
  customer: string | null;
}

/** stopped: not tried (any more) because the pass is stopping; the row simply stays pending. */
type Outcome = { kind: 'sent' } | { kind: 'stopped' } | { kind: 'refused' | 'down' | 'auth'; status?: number; reason: string };

/** 429, 5xx and network errors pass; any other answer is Stripe's verdict on this row. */
function classify(error: unknown, secretKey?: string): Outcome {
  const status = error instanceof Stripe.errors.StripeError ? error.statusCode : undefined;
  const reason = redact(error, secretKey);
  if (status === undefined || status === 429 || status >= 500) return { kind: 'down', status, reason };
  if (status === 401 || status === 403) return { kind: 'auth', status, reason };
  return { kind: 'refused', status, reason };
}

export interface DeliveryOptions {
  now: () => Date;
  /** Extends the lease; false when it was lost (then delivery stops). */
  renew: () => Promise<boolean>;
  /** How often to renew it (a fraction of the lease's length). */
  renewEveryMs: number;
  eventName: string;
  signal?: AbortSignal;
  attempts?: number;
  backoffMs?: number;
  concurrency?: number;
}

export async function deliverRows(services: CoreHandles, stripe: Stripe, options: DeliveryOptions) {
  const { db } = services.database;
  const { logger } = services;
  const secretKey = services.config.stripe.secretKey;
  const attempts = options.attempts ?? 4;
  const backoffMs = options.backoffMs ?? 500;
  const failures: MeterExportFailure[] = [];
  let delivered = 0;
  let stopped = false;
  let renewedAt = Date.now();
  const stop = () => stopped || options.signal?.aborted === true;

  /** Renews at most every quarter lease; the workers share one renewal in flight. */
  let renewal: Promise<void> | undefined;
  const keepLease = async () => {
    if (Date.now() - renewedAt < options.renewEveryMs) return;
    renewal ??= options.renew().then((held) => {
      renewedAt = Date.now();
      renewal = undefined;
      if (held) return;
      stopped = true;
      logger.warn('metered usage export: another exporter took the lease; delivery stopped');
    });
    await renewal;
  };

  const send = async (row: OutboxRow, customer: string): Promise<Outcome> => {
    let last: Outcome = { kind: 'stopped' };
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (attempt > 0) await Bun.sleep(backoffMs * 2 ** (attempt - 1) * (0.75 + Math.random() / 2));
      await keepLease();
      if (stop()) return { kind: 'stopped' };
      try {
        await stripe.billing.meterEvents.create(
          {
            event_name: options.eventName,
            payload: { stripe_customer_id: customer, value: String(Number(row.value_micros)) },
            identifier: row.identifier,
            timestamp: Number(row.minute_s),
          },
          // Stripe's request idempotency as well: a resend within 24 h gets the first answer back.
          { idempotencyKey: row.identifier },
        );
        return { kind: 'sent' };
      } catch (error) {
        last = classify(error, secretKey);
        if (last.kind !== 'down') return last;
      }
    }
    return last;
  };

  const handle = async (row: OutboxRow) => {
    const minute = new Date(Number(row.minute_s) * 1000).toISOString();
    const fail = (outcome: { status?: number; reason: string }) => {
      const failure = { accountId: row.account_id, minute, batch: row.batch, identifier: row.identifier, ...outcome };
      failures.push(failure);
      logger.error('metered usage not delivered to Stripe', { ...failure });
    };
    if (!row.customer) return fail({ reason: 'the account has no stripe_customer_id' });
    const outcome = await send(row, row.customer);
    if (outcome.kind === 'sent') {
      await db.execute(sql`update meter_exports set sent_at = ${options.now().toISOString()}::timestamptz, stripe_customer_id = ${row.customer}
                            where account_id = ${row.account_id} and minute = to_timestamp(${Number(row.minute_s)}) and batch = ${row.batch} and sent_at is null`);
      delivered++;
      return;
    }
    if (outcome.kind === 'stopped') return;
    // Stripe down, or our key refused: the other rows would fail alike, so the pass stops (the next
    // one goes on). Only the first worker to find that out reports it; the others' rows stay pending.
    if (outcome.kind !== 'refused' && stop()) return;
    fail(outcome);
    if (outcome.kind !== 'refused') stopped = true;
  };

  // Keyset pages over (minute, account, batch): a refused row stays unsent and is not met again this pass.
  let after = { minute: -1, account: '', batch: '' };
  while (!stop()) {
    const page = await rowsOf<OutboxRow>(
      db.execute(sql`
        select e.account_id, extract(epoch from e.minute)::bigint as minute_s, e.batch, e.value_micros, e.identifier,
               coalesce(nullif(e.stripe_customer_id, ''), a.stripe_customer_id) as customer
          from meter_exports e left join accounts a on a.id = e.account_id
         where e.sent_at is null and (e.minute, e.account_id, e.batch) > (to_timestamp(${after.minute}), ${after.account}, ${after.batch})
         order by e.minute, e.account_id, e.batch
         limit ${PAGE}`),
    );
    if (page.length === 0) break;
    const last = page[page.length - 1]!;
    after = { minute: Number(last.minute_s), account: last.account_id, batch: last.batch };
    const queue = [...page];
    const worker = async () => {
      for (let row = queue.shift(); row && !stop(); row = queue.shift()) await handle(row);
    };
    await Promise.all(Array.from({ length: options.concurrency ?? 4 }, worker));
  }
  return { delivered, failures };
}
