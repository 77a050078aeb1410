/**
 * The settlement worker (SETTLEMENT_INTERVAL_MS, in every server instance): finishes what a
 * resolution could not at once — positions deferred because a sale was still pending, payments the
 * venue could not make yet (a live redemption in flight, the chain not reported, the relayer down).
 * Each pass looks for resolved or voided events with open positions or unpaid settlements and runs
 * `settleEvent` on them, which is safe from any number of instances (row locks, payment leases, the
 * venue's own once-per-settlement record). Passes never overlap in one process; a failing pass is
 * logged and the next one tries again.
 */
import { and, asc, inArray, sql } from 'drizzle-orm';
import { events, positions, settlements } from '../../db/schema.ts';
import type { Services } from '../services.ts';
import { settleEvent } from './settlement.ts';

/** Events whose settlement is unfinished. */
async function unfinishedEvents(services: Services): Promise<string[]> {
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
export async function runSettlementPass(services: Services) {
  let settled = 0;
  let paid = 0;
  for (const eventId of await unfinishedEvents(services)) {
    try {
      const run = await settleEvent(services, eventId);
      settled += run.settled;
      paid += run.paid;
    } catch (error) {
      // One event's trouble (a database error in its settlement) must not stop the others'.
      services.logger.warn('settling an event failed; the next pass retries it', { eventId, error: String((error as Error)?.message ?? error) });
    }
  }
  return { settled, paid };
}

export function startSettlementWorker(services: Services): { stop(): Promise<void> } {
  const intervalMs = services.config.settlementIntervalMs;
  if (intervalMs <= 0) return { stop: async () => {} };
  const job = services.metrics.jobs.register('settlement', intervalMs);
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = job
      .track(runSettlementPass(services))
      .then((pass) => {
        if (pass.settled || pass.paid) services.logger.info('settlement pass', pass);
      })
      .catch((error) => services.logger.warn('settlement pass failed; the next one retries', { error: String((error as Error)?.message ?? error) }))
      .finally(() => (running = undefined));
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
