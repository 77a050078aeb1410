/**
 * Token-bucket rate limiting. A bucket holds up to `burst` tokens and refills at `rps` per second;
 * a request takes one token or is refused with the seconds until one is available.
 */
import type { RateRule } from '../../config.ts';

export interface RateDecision {
  allowed: boolean;
  /** RateLimit-Limit: the bucket's capacity. */
  limit: number;
  /** RateLimit-Remaining: whole tokens left after this request. */
  remaining: number;
  /** RateLimit-Reset: whole seconds until the bucket is full again. */
  resetSeconds: number;
  /** Retry-After for a refused request: whole seconds until one token is available (≥ 1). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /** In-process limiters answer synchronously (no promise hop per request); Redis answers later. */
  take(bucket: string, rule: RateRule): RateDecision | Promise<RateDecision>;
  /**
   * Whether a take would be allowed now, without taking (and without creating the bucket): the
   * failed-authentication gate looks before the key lookup it protects, and takes only on a failure.
   */
  peek(bucket: string, rule: RateRule): RateDecision | Promise<RateDecision>;
  close(): Promise<void>;
  /** Failed calls to a shared store (Redis) since start, by reason; absent for an in-process limiter (it cannot fail). */
  readonly storeErrors?: Readonly<Record<StoreErrorReason, number>>;
}

/** timeout: no answer within REDIS_TIMEOUT_MS; error: the call failed; unavailable: not tried (reconnect backoff). */
export type StoreErrorReason = 'timeout' | 'error' | 'unavailable';

/**
 * The bucket arithmetic, shared by the in-process limiter and mirrored by the Redis script.
 * `consume: false` is a peek: the decision a take would get, with nothing taken.
 */
export function decide(tokensBefore: number, rule: RateRule, consume = true): { tokens: number; decision: RateDecision } {
  const allowed = tokensBefore >= 1;
  const tokens = allowed && consume ? tokensBefore - 1 : tokensBefore;
  return {
    tokens,
    decision: {
      allowed,
      limit: rule.burst,
      remaining: Math.max(0, Math.floor(tokens)),
      resetSeconds: Math.ceil((rule.burst - tokens) / rule.rps),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / rule.rps)),
    },
  };
}

interface Bucket {
  tokens: number;
  at: number;
  /** When this bucket is full again by its own rule: from then on it is the same as no bucket. */
  fullAt: number;
}

/** One process's buckets. A bucket is dropped once its own rule has refilled it (see sweep). */
export class MemoryRateLimiter implements RateLimiter {
  private buckets = new Map<string, Bucket>();
  // (Bucket state is updated in place: one allocation per new bucket, not per request.)
  private lastSweep = 0;

  constructor(private now: () => number = () => performance.now()) {}

  take(bucket: string, rule: RateRule): RateDecision {
    const now = this.now();
    this.sweep(now);
    const state = this.buckets.get(bucket);
    const { tokens, decision } = decide(this.refilled(state, rule, now), rule);
    const fullAt = now + ((rule.burst - tokens) / rule.rps) * 1000;
    if (state) {
      state.tokens = tokens;
      state.at = now;
      state.fullAt = fullAt;
    } else {
      this.buckets.set(bucket, { tokens, at: now, fullAt });
    }
    return decision;
  }

  peek(bucket: string, rule: RateRule): RateDecision {
    const now = this.now();
    return decide(this.refilled(this.buckets.get(bucket), rule, now), rule, false).decision;
  }

  private refilled(state: Bucket | undefined, rule: RateRule, now: number): number {
    return state ? Math.min(rule.burst, state.tokens + ((now - state.at) / 1000) * rule.rps) : rule.burst;
  }

  /**
   * Once a minute, drops the buckets that are full again. Each by its own rule (kept in the bucket as
   * fullAt): judged by the rule of whichever request triggered the sweep, a slow-refilling bucket
   * would be dropped early, i.e. reset to full — a way around its limit.
   */
  private sweep(now: number) {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const [key, state] of this.buckets) if (now >= state.fullAt) this.buckets.delete(key);
  }

  async close() {}
}
