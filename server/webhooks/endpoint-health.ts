/**
 * What one delivery pool (one instance) remembers of each webhook's recent attempts, so that
 * endpoints that keep failing cost the others little (fairness between accounts: docs/decisions.md §11):
 *
 *  - PAUSE_AFTER_FAILURES failed attempts in a row leave the webhook aside for a while (5 s, doubling,
 *    at most PAUSE_MAX_MS): its deliveries wait, nothing is lost or counted.
 *  - SLOW_AFTER_TIMEOUTS timeouts in a row give its next attempts the short deadline
 *    (WEBHOOK_SLOW_TIMEOUT_MS) until it answers again — anything but a timeout, even a 500, restores
 *    WEBHOOK_TIMEOUT_MS. An endpoint that never answers otherwise holds a slot for the whole
 *    deadline on every attempt; a legitimate one answers within its deadline (the docs ask for 2xx
 *    within WEBHOOK_TIMEOUT_MS, work after), so after two misses a few seconds are enough to learn
 *    that it still hangs.
 *
 * In memory, per instance: a restarted instance learns again (two attempts at the full deadline),
 * which costs little beside the per-account slot limit; the database is not written for it.
 */

/** Failed attempts of one webhook in a row after which this instance leaves it aside for a while. */
export const PAUSE_AFTER_FAILURES = 3;
const PAUSE_FIRST_MS = 5_000;
export const PAUSE_MAX_MS = 60_000;
/** Timeouts of one webhook in a row after which its attempts get the short deadline. */
export const SLOW_AFTER_TIMEOUTS = 2;
/** Entries of webhooks not heard of for this long are dropped. */
const FORGET_AFTER_MS = 3_600_000;

/** An attempt's outcome as far as the endpoint's health goes. */
export type Verdict = 'succeeded' | 'failed' | 'timeout' | 'neutral';

interface Health {
  /** Failed attempts in a row (timeouts included). */
  failures: number;
  /** Timeouts in a row. */
  timeouts: number;
  /** Left aside until then (clock ms; 0: not paused). */
  until: number;
  /** Last heard of (clock ms). */
  seen: number;
}

export class EndpointHealth {
  private readonly state = new Map<string, Health>();

  constructor(
    private readonly clock: () => number,
    private readonly timeoutMs: number,
    private readonly slowTimeoutMs: number,
  ) {}

  /** Counts one attempt's outcome ('neutral': a stop, a refused address — says nothing of the endpoint). */
  note(webhookId: string, verdict: Verdict): void {
    if (verdict === 'neutral') return;
    if (verdict === 'succeeded') {
      this.state.delete(webhookId);
      return;
    }
    const now = this.clock();
    const health = this.state.get(webhookId) ?? { failures: 0, timeouts: 0, until: 0, seen: now };
    health.seen = now;
    health.failures++;
    // An answer (any status) or a fast failure breaks a run of timeouts: the endpoint is not hanging.
    health.timeouts = verdict === 'timeout' ? health.timeouts + 1 : 0;
    if (health.failures >= PAUSE_AFTER_FAILURES) {
      health.until = now + Math.min(PAUSE_FIRST_MS * 2 ** (health.failures - PAUSE_AFTER_FAILURES), PAUSE_MAX_MS);
    }
    this.state.set(webhookId, health);
  }

  /** This webhook's next attempt's deadline: WEBHOOK_SLOW_TIMEOUT_MS after SLOW_AFTER_TIMEOUTS timeouts in a row. */
  timeoutFor(webhookId: string): number {
    const health = this.state.get(webhookId);
    return health && health.timeouts >= SLOW_AFTER_TIMEOUTS ? Math.min(this.slowTimeoutMs, this.timeoutMs) : this.timeoutMs;
  }

  /** The webhooks left aside now. */
  paused(): string[] {
    const now = this.clock();
    const paused: string[] = [];
    for (const [webhookId, health] of this.state) {
      if (health.until > now) paused.push(webhookId);
      else if (now - Math.max(health.seen, health.until) > FORGET_AFTER_MS) this.state.delete(webhookId);
    }
    return paused;
  }
}
