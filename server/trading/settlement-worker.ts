/**
 * The settlement worker (SETTLEMENT_INTERVAL_MS, in every server instance): finishes what a
 * resolution could not at once — positions deferred because a sale was still pending, payments the
 * venue could not make yet (a live redemption in flight, the chain not reported, the relayer down).
 * Each pass looks for resolved or voided events with open positions or unpaid settlements and runs
 * `settleEvent` on them, which is safe from any number of instances (row locks, payment leases, the
 * venue's own once-per-settlement record). Passes never overlap in one process; a failing pass is
 * logged and retried with the job runner's backoff.
 */
import { and, asc, inArray, sql } from 'drizzle-orm';
import { events, positions, settlements } from '../../db/schema.ts';
import { startJob, type Job } from '../lib/jobs.ts';
import type { TradingHandles } from './handles.ts';
import { settleEvent } from './settlement.ts';
import { errorMessage } from '../lib/error-message.ts';

/** Events whose settlement is unfinished. */
async function unfinishedEvents(services: TradingHandles): Promise<string[]> {
  const rows = await services.database.db
    .select({ id: events.id })
    .from(events)
    .where(
      and(
        inArray(events.status, ['resolved', 'voided']),
        sql`(exists (select 1 from ${positions} where ${positions.eventId} = ${events.id} and ${positions.status} = 'open')
          or exists (select 1 from ${settlements} where ${settlements.eventId} = ${events.id} and ${settlements.paidAt} is null))`,
      ),
    )
    .orderBy(asc(events.id));
  return rows.map((r) => r.id);
}

/** One pass over every unfinished event. */
export async function runSettlementPass(services: TradingHandles) {
  let settled = 0;
  let paid = 0;
  for (const eventId of await unfinishedEvents(services)) {
    try {
      const run = await settleEvent(services, eventId);
      settled += run.settled;
      paid += run.paid;
    } catch (error) {
      // One event's trouble (a database error in its settlement) must not stop the others'.
      services.logger.warn('settling an event failed; the next pass retries it', { eventId, error: errorMessage(error) });
    }
  }
  return { settled, paid };
}

/** Runs `runSettlementPass` every SETTLEMENT_INTERVAL_MS (0: off) under the job runner's rules (server/lib/jobs.ts). */
export function startSettlementWorker(services: TradingHandles): Job {
  return startJob({
    name: 'settlement',
    intervalMs: services.config.settlementIntervalMs,
    logger: services.logger,
    metrics: services.metrics.jobs,
    run: async () => {
      const pass = await runSettlementPass(services);
      if (pass.settled || pass.paid) services.logger.info('settlement pass', pass);
      return pass;
    },
  });
}
