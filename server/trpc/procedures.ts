/**
 * The base procedures, defined once. Each narrows the context (who is calling) and carries its
 * cross-cutting rules as one middleware, in the order of decisions §4:
 *   authenticate (401) → user id (400) → rate limit (429) → reserve the cost (402) → handler,
 * and a failed handler has its reservation reversed. Route handlers never re-check any of it.
 */
import { timingSafeEqual } from 'node:crypto';
import { ensureAccount } from '../accounts/accounts.ts';
import { authenticateApiKey, hashApiKey, isApiKeyShaped, type KeyPrincipal } from '../accounts/api-keys.ts';
import { admitBilledRequest, billingCommitsSynchronously, type Charge, type PriceTier } from '../accounts/billing.ts';
import type { RateRule } from '../config.ts';
import { markReusable } from '../lib/reusable-json.ts';
import type { RateDecision } from '../ratelimit/rate-limiter.ts';
import { ApiError } from '../errors.ts';
import { newId } from '../lib/ids.ts';
import { digestOf } from '../services.ts';
import type { RequestContext } from './context.ts';
import { whenReady } from '../lib/when-ready.ts';
import { t } from './init.ts';
import { rawInputOf } from './raw-input.ts';
import { normaliseUserId } from './user-id.ts';

/** x-api-key wins over ?apiKey= when both are sent (decisions §3). */
function presentedKey(ctx: RequestContext): string | null {
  return ctx.headers.get('x-api-key') ?? ctx.query().get('apiKey');
}

function isDashboardKey(ctx: RequestContext, key: string): boolean {
  const digest = digestOf(key);
  let match = false;
  // Compare against every configured key, in constant time, without stopping at the first match.
  for (const known of ctx.services.dashboardKeyDigests) match = timingSafeEqual(known, digest) || match;
  return match;
}

/**
 * Takes a token; null when the bucket store (Redis) is unreachable and the request goes unlimited.
 * Synchronous with the in-process limiter (callers skip the await then: a promise hop per request
 * was measurable on the cheapest routes).
 */
function takeToken(ctx: RequestContext, bucket: string, rule: RateRule): RateDecision | null | Promise<RateDecision | null> {
  try {
    const taken = ctx.services.rateLimiter.take(bucket, rule);
    return taken instanceof Promise ? taken.catch((error) => limiterUnavailable(ctx, error)) : taken;
  } catch (error) {
    return limiterUnavailable(ctx, error);
  }
}

/**
 * Serve the request unlimited rather than fail it. Billing still guards every charge; the log says
 * why limits were not applied.
 */
function limiterUnavailable(ctx: RequestContext, error: unknown): null {
  ctx.services.logger.warn('rate limiter unavailable; request not limited', { requestId: ctx.requestId, error: String((error as Error).message ?? error) });
  return null;
}

/** RateLimit-* headers for a decision, and for a refusal Retry-After and the 429 itself. */
function applyDecision(ctx: RequestContext, decision: RateDecision | null) {
  if (!decision) return;
  ctx.resHeaders['RateLimit-Limit'] = String(decision.limit);
  ctx.resHeaders['RateLimit-Remaining'] = String(decision.remaining);
  ctx.resHeaders['RateLimit-Reset'] = String(decision.resetSeconds);
  if (!decision.allowed) {
    ctx.resHeaders['Retry-After'] = String(decision.retryAfterSeconds);
    throw new ApiError('RATE_LIMITED', `Too many requests; retry after ${decision.retryAfterSeconds}s and back off exponentially`);
  }
}

async function applyRateLimit(ctx: RequestContext, bucket: string, rule: RateRule) {
  const taken = takeToken(ctx, bucket, rule);
  applyDecision(ctx, taken instanceof Promise ? await taken : taken);
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
async function rejectNul(getRawInput: () => Promise<unknown>) {
  rejectNulIn(await getRawInput());
}

function rejectNulIn(input: unknown) {
  const found = nulPath(input, '');
  if (found !== undefined) throw new ApiError('BAD_REQUEST', `${found || 'input'}: must not contain the NUL character`);
}

interface BilledRule {
  tier: PriceTier;
  /** The rate-limit bucket: every key route, or the tighter buy/sell one. */
  bucket: 'key' | 'trade';
  /** Trading routes need x-user-id. */
  needsUser: boolean;
}

interface Admitted {
  principal: KeyPrincipal;
  charge: Charge;
  userId: string;
}

type MiddlewareOptions = { ctx: RequestContext; path: string; getRawInput: () => Promise<unknown> };

/**
 * Everything a billed route needs before its handler, in the order of decisions §4:
 * NUL text (400) → key (401) → user id (400) → rate limit (429) → cost (402).
 * The key, the reservation and the usage row are ONE database round trip (admitBilledRequest). The
 * rate limit is taken before it, per key digest; a refused or malformed request is answered 401
 * rather than 429/400 when its key is not valid, so the order of the answers holds.
 */
async function admit({ ctx, path, getRawInput }: MiddlewareOptions, rule: BilledRule): Promise<Admitted> {
  ctx.billing.billable = true;
  await rejectNul(getRawInput);
  const key = presentedKey(ctx);
  if (!key) throw new ApiError('UNAUTHORIZED', 'Missing API key: send the x-api-key header');
  if (isDashboardKey(ctx, key)) throw new ApiError('UNAUTHORIZED', 'A dashboard key cannot call this route; use an API key');
  if (!isApiKeyShaped(key)) throw new ApiError('UNAUTHORIZED', 'Invalid API key');
  const db = ctx.services.database.db;
  const keyHash = hashApiKey(key);

  let userId = '';
  if (rule.needsUser) {
    try {
      userId = normaliseUserId(ctx.headers.get('x-user-id'));
    } catch (invalidUser) {
      // 401 first when the key is not valid either.
      ctx.logFields.accountId = (await authenticateApiKey(db, key)).accountId;
      throw invalidUser;
    }
  }
  const taken = takeToken(ctx, `${rule.bucket}:${keyHash.slice(0, 32)}`, ctx.services.config.rateLimits[rule.bucket]);
  const decision = taken instanceof Promise ? await taken : taken;
  if (decision && !decision.allowed) ctx.logFields.accountId = (await authenticateApiKey(db, key)).accountId;
  applyDecision(ctx, decision);

  const usageId = newId('use');
  let admission;
  try {
    admission = await admitBilledRequest(db, {
      keyHash,
      tier: rule.tier,
      defaultCostMicros: ctx.services.config.costPerRequestMicros,
      method: ctx.method,
      path: ctx.transport === 'rest' ? ctx.path : `/trpc/${path}`,
      requestId: ctx.requestId,
      synchronousCommit: billingCommitsSynchronously(ctx.services.config.billingSynchronousCommit, ctx.services.database.kind),
      usageId,
    }, (accountId) => (ctx.logFields.accountId = accountId));
  } catch (error) {
    // Not a refusal but a lost answer (the database went away): the charge may have been written.
    if (!(error instanceof ApiError)) ctx.services.refunds.refundLater({ usageId, accountId: '', costMicros: 0 });
    throw error;
  }
  const { principal, charge } = admission;
  ctx.billing.chargedMicros += charge.costMicros;
  return { principal, charge, userId };
}

/** A failed handler has its reservation reversed (now, or once the database answers): errors cost nothing. */
async function settle<R extends { ok: boolean }>(ctx: RequestContext, charge: Charge, result: R): Promise<R> {
  if (!result.ok) {
    await ctx.services.refunds.refund(charge);
    ctx.billing.chargedMicros -= charge.costMicros;
  }
  return result;
}

// Each base procedure has exactly one middleware: every tRPC middleware layer copies the call options
// and the context, and six thin layers cost more than the work they did (measured on /api/pricing).

/** x-api-key routes. */
const billedByKey = (tier: PriceTier) =>
  t.middleware(async (opts) => {
    const { principal, charge } = await admit(opts, { tier, bucket: 'key', needsUser: false });
    return settle(opts.ctx, charge, await opts.next({ ctx: { principal } }));
  });

/** x-api-key + x-user-id routes (trading); every trading query filters by (account, user id). */
const billedForUser = (bucket: 'key' | 'trade') =>
  t.middleware(async (opts) => {
    const { principal, charge, userId } = await admit(opts, { tier: 'standard', bucket, needsUser: true });
    return settle(opts.ctx, charge, await opts.next({ ctx: { principal, user: { accountId: principal.accountId, userId } } }));
  });

const ACCOUNT_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/** A server-configured dashboard key and x-account-id (one middleware; never billed). */
const dashboard = t.middleware(async ({ ctx, next, getRawInput }) => {
  await rejectNul(getRawInput);
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

/**
 * Public routes: no credentials; limited per client IP. Not an async function: on /api with the
 * in-process limiter nothing here waits, and the whole request is answered without a promise.
 */
const open = t.middleware((opts) => {
  const { ctx, next } = opts;
  const limitByIp = (rawInput: unknown) => {
    rejectNulIn(rawInput);
    const taken = takeToken(ctx, `ip:${ctx.clientIp()}`, ctx.services.config.rateLimits.ip);
    return whenReady(taken, (decision) => (applyDecision(ctx, decision), next()));
  };
  return whenReady(rawInputOf(opts), limitByIp) as ReturnType<typeof next>;
});

/** No credentials; limited per client IP. */
export const publicProcedure = t.procedure.meta({ access: 'public' }).use(open);

/**
 * Public market data: every answer is a pure function of the market snapshot and the raw input, so
 * it is computed, validated and serialized once per snapshot (MARKET_DATA_TTL_MS) and input. This
 * middleware sits outside the input and output validators: a repeat is answered from the cache
 * without running either (only successful answers are kept, so the input once validated).
 * Limited to MAX_ANSWERS_PER_SNAPSHOT distinct inputs per snapshot (floors are free numbers).
 */
const MAX_ANSWERS_PER_SNAPSHOT = 1_000;
const answersBySnapshot = new WeakMap<object, Map<string, unknown>>();
type Next = () => Promise<{ ok: boolean; data?: unknown }>;

/** Not an async function (like `open`): a repeat within a fresh snapshot is answered without a promise. */
const sameSnapshotAnswers = t.middleware((opts) => {
  const { marketData } = opts.ctx.services;
  const answer = (snapshot: object) =>
    whenReady(rawInputOf(opts), (rawInput) => answerOnce(snapshot, `${opts.path}\u0000${JSON.stringify(rawInput ?? null)}`, opts.next as Next));
  return whenReady(marketData.fresh() ?? marketData.snapshot(), answer) as ReturnType<typeof opts.next>;
});

function answerOnce(snapshot: object, key: string, next: Next) {
  let answers = answersBySnapshot.get(snapshot);
  if (!answers) answersBySnapshot.set(snapshot, (answers = new Map()));
  const hit = answers.get(key) as Awaited<ReturnType<Next>> | undefined;
  if (hit) return hit;
  const keep = (result: Awaited<ReturnType<Next>>) => {
    if (result.ok && answers.size < MAX_ANSWERS_PER_SNAPSHOT && typeof result.data === 'object' && result.data !== null) {
      answers.set(key, { ...result, data: markReusable(result.data), ctx: undefined });
    }
    return result;
  };
  return whenReady(next(), keep);
}
export const marketDataProcedure = publicProcedure.use(sameSnapshotAnswers);

/** x-api-key (or ?apiKey=), billed at the account's standard rate. */
export const apiKeyProcedure = t.procedure.meta({ access: 'key', billing: 'standard' }).use(billedByKey('standard'));

/** x-api-key, billed at ten times the standard rate (private-company data). */
export const companyDataProcedure = t.procedure.meta({ access: 'key', billing: 'premium' }).use(billedByKey('premium'));

/** x-api-key and x-user-id (trading), billed at the standard rate. */
export const userProcedure = t.procedure.meta({ access: 'user', billing: 'standard' }).use(billedForUser('key'));

/** Like userProcedure, under the tighter buy/sell bucket. */
export const tradeProcedure = t.procedure.meta({ access: 'user', billing: 'standard' }).use(billedForUser('trade'));

/** A server-configured dashboard key and x-account-id; never billed. */
export const dashboardProcedure = t.procedure.meta({ access: 'dashboard' }).use(dashboard);
