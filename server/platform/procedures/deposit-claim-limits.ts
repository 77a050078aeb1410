/**
 * The failed-claim limit. Each claim costs the operator Polygon RPC reads, and a claim of
 * a random hash costs them as much as a real one. So a claim that fails (any refusal: unknown hash,
 * not a deposit, not your wallet, and an RPC failure too) takes a token from two buckets of
 * RATE_LIMIT_DEPOSIT_FAILURE_* — its account's and its client address's (one attacker, many free
 * accounts) — shared by instances through Redis like every rate limit. Once either is empty, claims
 * from that account or address answer 429 with Retry-After before any chain read. A claim that
 * succeeds takes nothing: a customer claiming their own transfers is never limited.
 *
 * Peeking alone would let a burst of concurrent claims all see a full bucket before any of them
 * failed, so the claims in flight on this instance count as spent until they end: a claim may start
 * only while its buckets hold more tokens than the claims already running against them.
 * A rate limit of the request (its client address, its headers), so here beside rate-limits.ts rather
 * than in server/deposits/, which knows nothing of requests; routers/deposits.ts applies it.
 */
import { ApiError } from '../../errors.ts';
import { askLimiter, takeToken } from './rate-limits.ts';
import type { RequestContext } from './context.ts';
import type { Services } from '../services.ts';

/** Claims running now on this instance, by bucket. */
const running = new WeakMap<Services, Map<string, number>>();

export async function limitFailedClaims<T>(ctx: RequestContext, accountId: string, claim: () => Promise<T>): Promise<T> {
  const rule = ctx.services.config.rateLimits.depositFailure;
  const buckets = [`deposit-fail:account:${accountId}`, `deposit-fail:ip:${ctx.clientIp()}`];
  let counts = running.get(ctx.services);
  if (!counts) running.set(ctx.services, (counts = new Map()));
  // Our place in each bucket's queue, taken synchronously so that awaiting the limiter (Redis) cannot
  // let two claims take the same place.
  const places = buckets.map((b) => counts.get(b) ?? 0);
  for (const b of buckets) counts.set(b, (counts.get(b) ?? 0) + 1);
  const release = () => {
    for (const b of buckets) {
      const n = (counts.get(b) ?? 1) - 1;
      if (n > 0) counts.set(b, n);
      else counts.delete(b);
    }
  };
  try {
    const gates = await Promise.all(buckets.map((b) => askLimiter(ctx, 'peek', b, rule)));
    gates.forEach((gate, i) => {
      // null: the limiter is unreachable, and limits fail open as everywhere else (rate-limits.ts).
      if (!gate || (gate.allowed && places[i]! < gate.remaining)) return;
      const retryAfter = gate.allowed ? 1 : gate.retryAfterSeconds;
      ctx.resHeaders['Retry-After'] = String(retryAfter);
      const source = i === 0 ? 'this account' : 'this address';
      throw new ApiError('RATE_LIMITED', `Too many failed deposit claims from ${source}; retry after ${retryAfter}s (deposits are credited without a claim too, once the watcher sees them)`);
    });
  } catch (error) {
    release();
    throw error;
  }
  try {
    return await claim();
  } catch (error) {
    // Taken before the claim leaves the queue, so the bucket never looks fuller than it is.
    await Promise.all(buckets.map((b) => takeToken(ctx, b, rule)));
    throw error;
  } finally {
    release();
  }
}
