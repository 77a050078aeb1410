/**
 * Billing a held private stream, whoever holds it — an API key or a signed-in session (docs/decisions.md §11: a
 * session's stream costs what a key's does, so a cookie is never a free key). Opening it is one
 * standard request (the route's own admission, 401/402/429 before the stream opens); then every full
 * period held (BILLING_PERIOD_MS, a minute) is one more standard request, charged to the same payer
 * through the same one-statement admission as any request (accounts/billing.ts `admitBilledRequest`:
 * the key, or the live session, is looked up again, the balance debited only `WHERE balance >= cost`,
 * a metered account's month and a capped key's window counted, a usage row written). So a key revoked,
 * a session signed out or expired, a balance run dry or a cap reached ends the stream at the next
 * minute, with an `error` event saying which (401 or 402).
 *
 * A charge whose answer is lost (the database went away) is refunded once the database answers, as
 * for any request (errors cost nothing), and the stream stays open: that minute is free.
 */
import { admitBilledRequest, billingCommitsSynchronously, type Payer } from '../accounts/billing.ts';
import { ApiError } from '../errors.ts';
import { newId } from '../lib/ids.ts';
import type { StreamHandles } from './handles.ts';
import { errorMessage } from '../lib/error-message.ts';

/** One standard request per full minute held. Tests pass a shorter period through the streams' options. */
export const BILLING_PERIOD_MS = 60_000;

export interface HeldStream {
  /** Who pays each period: the key (its hash) or the session (its token's hash) that opened the stream. */
  payer: Payer;
  /** The usage rows' method and path: the stream's own (GET /api/trading/stream/account, or /trpc/streams.account). */
  method: string;
  path: string;
  /** The open request's id, on every usage row of the stream. */
  requestId: string;
  /** The standard price of each period (a test key's is the test price: accounts/modes.ts). */
  defaultCostMicros: number;
}

/** A held stream's billing. */
export interface HeldBilling {
  /** No more charges (a charge under way still completes: chargeNow waits for it). */
  stop(): void;
  readonly stopped: boolean;
  /**
   * One billing period now, as if it had just elapsed (Streams.chargeHeldStreams: tests, which cannot
   * wait for the clock): waits for a charge under way, then charges once unless stopped. Resolves
   * when the charge is settled.
   */
  chargeNow(): Promise<void>;
}

/** Starts charging; `refused` hears a 401/402 (the stream must end). */
export function chargeWhileHeld(services: StreamHandles, stream: HeldStream, periodMs: number, refused: (error: ApiError) => void): HeldBilling {
  const { config, database, refunds, logger } = services;
  let stopped = false;
  let charging: Promise<void> | undefined;
  const start = (): Promise<void> => {
    if (stopped) return Promise.resolve();
    charging ??= charge().finally(() => (charging = undefined));
    return charging;
  };
  const charge = async () => {
    const usageId = newId('use');
    try {
      await admitBilledRequest(database.db, {
        ...stream.payer,
        tier: 'standard',
        defaultCostMicros: stream.defaultCostMicros,
        method: stream.method,
        path: stream.path,
        requestId: stream.requestId,
        synchronousCommit: billingCommitsSynchronously(config.billingSynchronousCommit, database.kind),
        usageId,
      });
    } catch (error) {
      if (error instanceof ApiError) {
        if (!stopped) refused(error);
      } else {
        // Not a refusal but a lost answer: the charge may have been written; it is refunded later.
        refunds.refundLater({ usageId, accountId: '', costMicros: 0 });
        logger.warn('held stream minute not charged (database unavailable); the minute is free', { requestId: stream.requestId, error: errorMessage(error) });
      }
    }
  };
  // A period that elapses while the previous charge is still under way is not charged twice.
  const timer = setInterval(() => void (charging ?? start()), periodMs);
  timer.unref?.();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
    get stopped() {
      return stopped;
    },
    async chargeNow() {
      await charging;
      await start();
    },
  };
}
