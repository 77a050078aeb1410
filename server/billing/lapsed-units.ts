/**
 * The lapsed-units job: refunds the provisional units (accounts/unit-charges.ts) whose stream did not
 * confirm or refund them in time — their process died, or their reader stalled past UNIT_LEASE_MS.
 * Every instance runs it; two passes that find the same unit both ask for its refund, and the one
 * statement that refunds it (refundCharge, only while it is still lapsed) deletes the usage row and
 * returns its cost once: the other finds no row. A unit its stream confirmed meanwhile is not lapsed
 * any more and stays charged.
 */
import { billingCommitsSynchronously, refundCharge } from '../accounts/billing.ts';
import { lapsedUnits } from '../accounts/unit-charges.ts';
import type { CoreHandles } from '../handles.ts';
import { startJob, type Job } from '../lib/jobs.ts';

/** Units one pass refunds at most (the next pass takes the rest). */
const PASS_UNITS = 500;

/** One pass: refunds up to PASS_UNITS lapsed units; answers how many it looked at. */
export async function refundLapsedUnits(services: CoreHandles): Promise<number> {
  const { database, config } = services;
  const synchronousCommit = billingCommitsSynchronously(config.billingSynchronousCommit, database.kind);
  const lapsed = await lapsedUnits(database.db, PASS_UNITS);
  for (const charge of lapsed) await refundCharge(database.db, charge, synchronousCommit, { onlyIfLapsed: true });
  return lapsed.length;
}

/** Runs a pass every half lease (at most every minute) under the job runner's rules (lib/jobs.ts). */
export function startLapsedUnitRefunds(services: CoreHandles): Job {
  return startJob({
    name: 'lapsed_units',
    intervalMs: Math.min(60_000, Math.ceil(services.config.unitLeaseMs / 2)),
    logger: services.logger,
    metrics: services.metrics.jobs,
    run: async () => {
      const refunded = await refundLapsedUnits(services);
      if (refunded) services.logger.info('lapsed units refunded', { units: refunded });
      return refunded;
    },
  });
}
