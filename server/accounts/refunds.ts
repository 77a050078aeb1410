/**
 * Refunds of failed billed requests. A request that fails because the database went away usually
 * cannot have its refund written either; instead of leaving the charge (errors cost nothing), the
 * refund is kept and retried every RETRY_MS until the database takes it. Refunding is idempotent (it
 * deletes the usage row by id and returns what that row cost), so a retry after a refund that did
 * commit but whose answer was lost returns nothing twice.
 * Kept in memory: if the process dies during the outage, those charges stay (logged as deferred).
 */
import type { Db } from '../../db/client.ts';
import type { Logger } from '../lib/logger.ts';
import type { BillingMetrics } from './billing-metrics.ts';
import { refundCharge, type Charge } from './billing.ts';
import { errorMessage } from '../lib/error-message.ts';

const RETRY_MS = 500;

export class Refunds {
  private pending = new Map<string, Charge>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private db: Db,
    private synchronousCommit: boolean,
    private logger: Logger,
    private metrics?: BillingMetrics,
  ) {}

  /** Refunds now, or, if the database cannot take it, later. Never throws. */
  async refund(charge: Charge): Promise<void> {
    try {
      await refundCharge(this.db, charge, this.synchronousCommit);
      this.metrics?.refund('refunded');
    } catch (error) {
      this.metrics?.refund('deferred');
      this.pending.set(charge.usageId, charge);
      this.logger.warn('refund deferred until the database answers', { usageId: charge.usageId, error: errorMessage(error) });
      this.schedule();
    }
  }

  /**
   * For a charge that may or may not have been written (the admission's answer was lost with its
   * connection): refund it on the next retry, when its statement has surely finished either way.
   */
  refundLater(charge: Charge) {
    this.metrics?.refund('deferred');
    this.pending.set(charge.usageId, charge);
    this.schedule();
  }

  /** Refunds waiting for the database. */
  get waiting(): number {
    return this.pending.size;
  }

  private schedule() {
    if (this.timer) return;
    this.timer = setTimeout(() => void this.retry(), RETRY_MS);
    this.timer.unref?.();
  }

  private async retry() {
    this.timer = undefined;
    for (const [usageId, charge] of this.pending) {
      try {
        await refundCharge(this.db, charge, this.synchronousCommit);
        this.pending.delete(usageId);
        this.metrics?.refund('retried');
      } catch {
        this.schedule();
        return;
      }
    }
  }
}
