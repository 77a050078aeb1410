/**
 * Token-bucket rate limiting. A bucket holds up to `burst` tokens and refills at `rps` per second;
 * a request takes one token or is refused with the seconds until one is available.
 */
import type { RateRule } from '../config.ts';

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
  close(): Promise<void>;
}

/** The bucket arithmetic, shared by the in-process limiter and mirrored by the Redis script. */
export function decide(tokensBefore: number, rule: RateRule): { tokens: number; decision: RateDecision } {
  const allowed = tokensBefore >= 1;
  const tokens = allowed ? tokensBefore - 1 : tokensBefore;
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

/** One process's buckets. Idle buckets are full again after burst/rps seconds, so they are dropped. */
export class MemoryRateLimiter implements RateLimiter {
  private buckets = new Map<string, { tokens: number; at: number }>();
  // (Bucket state is updated in place: one allocation per new bucket, not per request.)
  private lastSweep = 0;

  constructor(private now: () => number = () => performance.now()) {}

  take(bucket: string, rule: RateRule): RateDecision {
    const now = this.now();
    this.sweep(now, rule);
    const state = this.buckets.get(bucket);
    const refilled = state ? Math.min(rule.burst, state.tokens + ((now - state.at) / 1000) * rule.rps) : rule.burst;
    const { tokens, decision } = decide(refilled, rule);
    if (state) {
      state.tokens = tokens;
      state.at = now;
    } else {
      this.buckets.set(bucket, { tokens, at: now });
    }
    return decision;
  }

  private sweep(now: number, rule: RateRule) {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    const fullAfterMs = (rule.burst / rule.rps) * 1000;
    for (const [key, state] of this.buckets) if (now - state.at > fullAfterMs) this.buckets.delete(key);
  }

  async close() {}
}
