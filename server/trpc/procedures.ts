/**
 * The base procedures, defined once. Each narrows the context (who is calling) and carries its
 * cross-cutting rules as middleware, in the order of decisions §4:
 *   authenticate (401) → user id (400) → rate limit (429) → reserve the cost (402) → handler,
 * and a failed handler has its reservation reversed. Route handlers never re-check any of it.
 */
import { timingSafeEqual } from 'node:crypto';
import { ensureAccount } from '../accounts/accounts.ts';
import { authenticateApiKey } from '../accounts/api-keys.ts';
import { priceFor, refundCharge, reserveCharge, type PriceTier } from '../accounts/billing.ts';
import type { RateRule } from '../config.ts';
import { ApiError } from '../errors.ts';
import { digestOf } from '../services.ts';
import type { RequestContext } from './context.ts';
import { t } from './init.ts';
import { normaliseUserId } from './user-id.ts';

/** x-api-key wins over ?apiKey= when both are sent (decisions §3). */
function presentedKey(ctx: RequestContext): string | null {
  return ctx.headers.get('x-api-key') ?? ctx.query.get('apiKey');
}

function isDashboardKey(ctx: RequestContext, key: string): boolean {
  const digest = digestOf(key);
  let match = false;
  // Compare against every configured key, in constant time, without stopping at the first match.
  for (const known of ctx.services.dashboardKeyDigests) match = timingSafeEqual(known, digest) || match;
  return match;
}

async function applyRateLimit(ctx: RequestContext, bucket: string, rule: RateRule) {
  let decision;
  try {
    decision = await ctx.services.rateLimiter.take(bucket, rule);
  } catch (error) {
    // The bucket store (Redis) is unreachable: serve the request unlimited rather than fail it.
    // Billing still guards every charge; the log says why limits were not applied.
    ctx.services.logger.warn('rate limiter unavailable; request not limited', { requestId: ctx.requestId, error: String((error as Error).message ?? error) });
    return;
  }
  ctx.resHeaders.set('RateLimit-Limit', String(decision.limit));
  ctx.resHeaders.set('RateLimit-Remaining', String(decision.remaining));
  ctx.resHeaders.set('RateLimit-Reset', String(decision.resetSeconds));
  if (!decision.allowed) {
    ctx.resHeaders.set('Retry-After', String(decision.retryAfterSeconds));
    throw new ApiError('RATE_LIMITED', `Too many requests; retry after ${decision.retryAfterSeconds}s and back off exponentially`);
  }
}

/** The path of the first string in `value` holding a NUL character (PostgreSQL cannot store one). */
function nulPath(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      const found = nulPath(inner, path ? `${path}.${key}` : key);
      if (found) return found;
    }
  }
  return undefined;
}

/** Text with a NUL character is a caller error, found before any work (first in every base procedure). */
const rejectNul = t.middleware(async ({ next, getRawInput }) => {
  const found = nulPath(await getRawInput(), '');
  if (found !== undefined) throw new ApiError('BAD_REQUEST', `${found || 'input'}: must not contain the NUL character`);
  return next();
});

const markBillable = t.middleware(({ ctx, next }) => {
  ctx.billing.billable = true;
  return next();
});

const requireApiKey = t.middleware(async ({ ctx, next }) => {
  const key = presentedKey(ctx);
  if (!key) throw new ApiError('UNAUTHORIZED', 'Missing API key: send the x-api-key header');
  if (isDashboardKey(ctx, key)) throw new ApiError('UNAUTHORIZED', 'A dashboard key cannot call this route; use an API key');
  const principal = await authenticateApiKey(ctx.services.database.db, key);
  ctx.logFields.accountId = principal.accountId;
  return next({ ctx: { principal } });
});

/** x-user-id → the trading user (account, user id); every trading query filters by both. */
const requireUserId = t.middleware(({ ctx, next }) => {
  const { principal } = ctx as typeof ctx & { principal: { accountId: string } };
  const userId = normaliseUserId(ctx.headers.get('x-user-id'));
  return next({ ctx: { user: { accountId: principal.accountId, userId } } });
});

const rateLimitPerKey = (bucket: 'key' | 'trade') =>
  t.middleware(async ({ ctx, next }) => {
    const { principal } = ctx as typeof ctx & { principal: { apiKeyId: string } };
    await applyRateLimit(ctx, `${bucket}:${principal.apiKeyId}`, ctx.services.config.rateLimits[bucket]);
    return next();
  });

const rateLimitPerIp = t.middleware(async ({ ctx, next }) => {
  await applyRateLimit(ctx, `ip:${ctx.clientIp}`, ctx.services.config.rateLimits.ip);
  return next();
});

const charge = (tier: PriceTier) =>
  t.middleware(async ({ ctx, next, path }) => {
    const { principal } = ctx as typeof ctx & { principal: Awaited<ReturnType<typeof authenticateApiKey>> };
    const db = ctx.services.database.db;
    const costMicros = priceFor(tier, principal.costPerRequestMicros ?? ctx.services.config.costPerRequestMicros);
    const reservation = await reserveCharge(db, {
      accountId: principal.accountId,
      apiKeyId: principal.apiKeyId,
      costMicros,
      method: ctx.method,
      path: ctx.transport === 'rest' ? ctx.path : `/trpc/${path}`,
      requestId: ctx.requestId,
    });
    ctx.billing.chargedMicros += costMicros;
    const result = await next();
    if (!result.ok) {
      await refundCharge(db, reservation);
      ctx.billing.chargedMicros -= costMicros;
    }
    return result;
  });

const ACCOUNT_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

const requireDashboardKey = t.middleware(async ({ ctx, next }) => {
  const key = presentedKey(ctx);
  if (!key || !isDashboardKey(ctx, key)) throw new ApiError('UNAUTHORIZED', 'This route needs a dashboard key in x-api-key');
  await applyRateLimit(ctx, `dashboard:${Buffer.from(digestOf(key)).toString('hex').slice(0, 16)}`, ctx.services.config.rateLimits.key);
  const accountId = ctx.headers.get('x-account-id');
  if (!accountId || !ACCOUNT_ID.test(accountId)) {
    throw new ApiError('BAD_REQUEST', 'x-account-id: required, 1-128 characters of A-Z a-z 0-9 . _ : @ -');
  }
  await ensureAccount(ctx.services.database.db, accountId);
  ctx.logFields.accountId = accountId;
  return next({ ctx: { accountId } });
});

/** No credentials; limited per client IP. */
export const publicProcedure = t.procedure.meta({ access: 'public' }).use(rejectNul).use(rateLimitPerIp);

const keyProcedure = t.procedure.use(markBillable).use(rejectNul).use(requireApiKey);

/** x-api-key (or ?apiKey=), billed at the account's standard rate. */
export const apiKeyProcedure = keyProcedure
  .meta({ access: 'key', billing: 'standard' })
  .use(rateLimitPerKey('key'))
  .use(charge('standard'));

/** x-api-key, billed at ten times the standard rate (private-company data). */
export const companyDataProcedure = keyProcedure
  .meta({ access: 'key', billing: 'premium' })
  .use(rateLimitPerKey('key'))
  .use(charge('premium'));

/** x-api-key and x-user-id (trading), billed at the standard rate. */
export const userProcedure = keyProcedure
  .meta({ access: 'user', billing: 'standard' })
  .use(requireUserId)
  .use(rateLimitPerKey('key'))
  .use(charge('standard'));

/** Like userProcedure, under the tighter buy/sell bucket. */
export const tradeProcedure = keyProcedure
  .meta({ access: 'user', billing: 'standard' })
  .use(requireUserId)
  .use(rateLimitPerKey('trade'))
  .use(charge('standard'));

/** A server-configured dashboard key and x-account-id; never billed. */
export const dashboardProcedure = t.procedure.meta({ access: 'dashboard' }).use(rejectNul).use(requireDashboardKey);
