/**
 * Rate limiting as the base procedures apply it: ask the limiter (take or peek), fail open when the
 * bucket store is unreachable, and turn a decision into RateLimit-* headers or a 429.
 */
import type { RateRule } from '../../config.ts';
import { ApiError } from '../../errors.ts';
import type { MaybePromise } from '../../lib/when-ready.ts';
import type { RateDecision } from '../ratelimit/rate-limiter.ts';
import type { Services } from '../services.ts';
import type { RequestContext } from './context.ts';
import { errorMessage } from '../../lib/error-message.ts';

/**
 * Asks the limiter (take or peek); null when the bucket store (Redis) is unreachable or too slow and
 * the request goes unlimited. Synchronous with the in-process limiter (callers skip the await then:
 * a promise hop per request was measurable on the cheapest routes).
 */
export function askLimiter(ctx: RequestContext, ask: 'take' | 'peek', bucket: string, rule: RateRule): MaybePromise<RateDecision | null> {
  try {
    const answer = ctx.services.rateLimiter[ask](bucket, rule);
    return answer instanceof Promise ? answer.catch((error) => limiterUnavailable(ctx, error)) : answer;
  } catch (error) {
    return limiterUnavailable(ctx, error);
  }
}

export const takeToken = (ctx: RequestContext, bucket: string, rule: RateRule) => askLimiter(ctx, 'take', bucket, rule);

/** While the limiter is down every request comes here: one warning per interval, with the count since the last. */
const LIMITER_WARNING_INTERVAL_MS = 5_000;
const limiterWarnings = new WeakMap<Services, { at: number; suppressed: number }>();

/**
 * Serve the request unlimited rather than fail it (fail open). Billing still guards every charge; the
 * log says why limits were not applied, at most once per LIMITER_WARNING_INTERVAL_MS.
 */
function limiterUnavailable(ctx: RequestContext, error: unknown): null {
  const now = performance.now();
  const last = limiterWarnings.get(ctx.services);
  if (last && now - last.at < LIMITER_WARNING_INTERVAL_MS) {
    last.suppressed++;
    return null;
  }
  limiterWarnings.set(ctx.services, { at: now, suppressed: 0 });
  ctx.services.logger.warn('rate limiter unavailable; requests not limited', {
    requestId: ctx.requestId,
    error: errorMessage(error),
    suppressedWarnings: last?.suppressed ?? 0,
  });
  return null;
}

/** RateLimit-* headers for a decision, and for a refusal Retry-After and the 429 itself. */
export function applyDecision(ctx: RequestContext, decision: RateDecision | null) {
  if (!decision) return;
  ctx.resHeaders['RateLimit-Limit'] = String(decision.limit);
  ctx.resHeaders['RateLimit-Remaining'] = String(decision.remaining);
  ctx.resHeaders['RateLimit-Reset'] = String(decision.resetSeconds);
  if (!decision.allowed) {
    ctx.resHeaders['Retry-After'] = String(decision.retryAfterSeconds);
    throw new ApiError('RATE_LIMITED', `Too many requests; retry after ${decision.retryAfterSeconds}s and back off exponentially`);
  }
}

export async function applyRateLimit(ctx: RequestContext, bucket: string, rule: RateRule) {
  const taken = takeToken(ctx, bucket, rule);
  applyDecision(ctx, taken instanceof Promise ? await taken : taken);
}
