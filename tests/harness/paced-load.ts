/**
 * Load whose size is known in advance, so a test sizes its headroom (funding, rate limits) from the
 * load's own bound instead of from how fast the machine happens to be. Each client sends at most one
 * request per `paceMs` and stops at the load's deadline, so however fast the machine, the clients
 * send at most `maxRequests()` requests and never more than `maxRps` a second. (Unpaced loops on a
 * fast machine drained a 100,000-token rate-limit bucket and $100 of funding within 1.5 s.)
 */
import type { RateRule } from '../../server/config.ts';

export class PacedLoad {
  readonly deadline: number;

  constructor(
    readonly clients: number,
    readonly paceMs: number,
    /** How long the load may run at most (its clients stop then, whatever else happens). */
    readonly durationMs: number,
    start = performance.now(),
  ) {
    this.deadline = start + durationMs;
  }

  /** The most requests all clients together can send before the deadline. */
  maxRequests(clients = this.clients): number {
    return clients * (Math.floor(this.durationMs / this.paceMs) + 1);
  }

  /** The fastest the clients together can send, per second. */
  get maxRps(): number {
    return Math.ceil((this.clients * 1000) / this.paceMs);
  }

  /**
   * A rate-limit rule the load can never exhaust: it refills faster than the clients can send, and
   * holds a request of every client at once.
   */
  unreachableRule(): RateRule {
    return { rps: 2 * this.maxRps, burst: 2 * Math.max(this.clients, this.maxRps) };
  }

  /** Environment that sets the per-key and per-IP limits to `unreachableRule()`. */
  unreachableLimitsEnv(): Record<string, string> {
    const { rps, burst } = this.unreachableRule();
    return { RATE_LIMIT_KEY_RPS: String(rps), RATE_LIMIT_KEY_BURST: String(burst), RATE_LIMIT_IP_RPS: String(rps), RATE_LIMIT_IP_BURST: String(burst) };
  }

  /**
   * One client's schedule: each call waits for the client's next slot and answers true, or answers
   * false once the deadline has passed (the client should stop).
   */
  client(): () => Promise<boolean> {
    const start = performance.now();
    let sent = 0;
    return async () => {
      const due = start + sent * this.paceMs;
      for (let now = performance.now(); now < due; now = performance.now()) await Bun.sleep(due - now);
      if (performance.now() >= this.deadline) return false;
      sent++;
      return true;
    };
  }
}
