/**
 * The base procedures, defined once. Each narrows the context (who is calling) and carries its
 * cross-cutting rules as one middleware, in the order of decisions §4:
 *   authenticate (401) → input and user id (400) → rate limit (429) → reserve the cost (402) → handler,
 * and a failed handler has its reservation reversed. Route handlers never re-check any of it.
 *
 * Before any key is looked up, the client address's failed authentications are checked (429 once
 * they are used up), and a key is looked up at most once per HTTP request (a tRPC batch is one).
 */
import { timingSafeEqual } from 'node:crypto';
import { requireAccount } from '../accounts/accounts.ts';
import { hashApiKey, isApiKeyShaped, type KeyPrincipal } from '../accounts/api-keys.ts';
import { admitBilledRequest, billingCommitsSynchronously, type Charge, type PriceTier } from '../accounts/billing.ts';
import { markReusable } from '../lib/reusable-json.ts';
import { ApiError } from '../errors.ts';
import { newId } from '../lib/ids.ts';
import { IDENTIFIER, IDENTIFIER_RULE } from '../lib/identifiers.ts';
import { digestOf } from '../services.ts';
import type { KeyCheck, RequestContext } from './context.ts';
import { whenReady } from '../lib/when-ready.ts';
import { t } from './init.ts';
import { inspectInput } from './input-inspection.ts';
import { authenticate, authFailed, keyCheckOf, refuseBlockedClient } from './key-gate.ts';
import { applyDecision, applyRateLimit, takeToken } from './rate-limits.ts';
import { rawInputOf } from './raw-input.ts';
import { normaliseUserId } from './user-id.ts';
import { admitSession, usesSession } from './session-gate.ts';

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

type MiddlewareOptions = { ctx: RequestContext; path: string; getRawInput: () => Promise<unknown>; rawInput?: unknown };

/**
 * Everything a billed route needs before its handler. A key is authenticated once per HTTP request:
 * in a tRPC batch the first call's admission decides, the others wait for it, and a key that failed
 * is answered 401 again without another lookup (a batch of N calls with an unknown key is one lookup).
 */
async function admit(opts: MiddlewareOptions, rule: BilledRule): Promise<Admitted> {
  const { ctx } = opts;
  ctx.billing.billable = true;
  const key = presentedKey(ctx);
  if (!key) throw new ApiError('UNAUTHORIZED', 'Missing API key: send the x-api-key header');
  const keyHash = isApiKeyShaped(key) ? hashApiKey(key) : undefined;
  // A key this process admitted recently needs no gate and no waiting: a batch's calls are admitted at once.
  const known = keyHash !== undefined && ctx.services.recentKeys.has(keyHash);
  if (ctx.transport === 'rest' || known) return admitKey(opts, rule, key, keyHash, known, keyCheckOf(ctx));
  const check = keyCheckOf(ctx);
  if (check.known) {
    await check.known;
    if (check.failure) throw check.failure;
    return admitKey(opts, rule, key, keyHash, false, check);
  }
  let release!: () => void;
  check.known = new Promise((resolve) => (release = resolve));
  try {
    return await admitKey(opts, rule, key, keyHash, false, check);
  } catch (error) {
    if (error instanceof ApiError && error.apiCode === 'UNAUTHORIZED') check.failure = error;
    throw error;
  } finally {
    release();
  }
}

/**
 * One billed call, in the order of decisions §4:
 * failed-authentication gate (429) → key shape (401) → input, user id (400) → rate limit (429) → key and cost (401, 402).
 * The key, the reservation and the usage row are ONE database round trip (admitBilledRequest). The
 * refusals before it (400, 429) look the key up first, so an invalid key is always answered 401.
 */
async function admitKey(opts: MiddlewareOptions, rule: BilledRule, key: string, keyHash: string | undefined, known: boolean, check: KeyCheck): Promise<Admitted> {
  const { ctx, path } = opts;
  if (!known) await refuseBlockedClient(ctx);
  if (isDashboardKey(ctx, key)) throw await authFailed(ctx, check, new ApiError('UNAUTHORIZED', 'A dashboard key cannot call this route; use an API key'));
  if (keyHash === undefined) throw await authFailed(ctx, check, new ApiError('UNAUTHORIZED', 'Invalid API key'));
  const db = ctx.services.database.db;

  let userId = '';
  try {
    inspectInput(await rawInputOf(opts));
    if (rule.needsUser) userId = normaliseUserId(ctx.headers.get('x-user-id'));
  } catch (callerError) {
    await authenticate(ctx, check, key); // 401 first when the key is not valid either
    throw callerError;
  }
  const taken = takeToken(ctx, `${rule.bucket}:${keyHash.slice(0, 32)}`, ctx.services.config.rateLimits[rule.bucket]);
  const decision = taken instanceof Promise ? await taken : taken;
  if (decision && !decision.allowed) await authenticate(ctx, check, key);
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
    if (error instanceof ApiError && error.apiCode === 'UNAUTHORIZED') {
      ctx.services.recentKeys.delete(keyHash); // revoked since it was admitted
      throw await authFailed(ctx, check, error);
    }
    // Not a refusal but a lost answer (the database went away): the charge may have been written.
    if (!(error instanceof ApiError)) ctx.services.refunds.refundLater({ usageId, accountId: '', costMicros: 0 });
    throw error;
  }
  const { principal, charge } = admission;
  ctx.services.recentKeys.add(keyHash);
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

/** x-api-key routes; those whose meta says `session: true` also take a signed-in customer's session, unbilled. */
const billedByKey = (tier: PriceTier) =>
  t.middleware(async (opts) => {
    if (usesSession(opts, presentedKey(opts.ctx))) {
      const session = await admitSession(opts);
      const principal: KeyPrincipal = { apiKeyId: '', accountId: session.accountId, costPerRequestMicros: null };
      return opts.next({ ctx: { principal } });
    }
    const { principal, charge } = await admit(opts, { tier, bucket: 'key', needsUser: false });
    return settle(opts.ctx, charge, await opts.next({ ctx: { principal } }));
  });

/** x-api-key + x-user-id routes (trading); every trading query filters by (account, user id). */
const billedForUser = (bucket: 'key' | 'trade') =>
  t.middleware(async (opts) => {
    // A signed-in customer (routes whose meta says `session: true`) acts for any user of their own account, unbilled.
    if (usesSession(opts, presentedKey(opts.ctx))) {
      const session = await admitSession(opts);
      const userId = normaliseUserId(opts.ctx.headers.get('x-user-id'));
      // A sale from the dashboard counts against the account's trade bucket, as a key's would.
      if (bucket === 'trade') await applyRateLimit(opts.ctx, `trade-session:${session.accountId}`, opts.ctx.services.config.rateLimits.trade);
      const principal: KeyPrincipal = { apiKeyId: '', accountId: session.accountId, costPerRequestMicros: null };
      return opts.next({ ctx: { principal, user: { accountId: session.accountId, userId } } });
    }
    const { principal, charge, userId } = await admit(opts, { tier: 'standard', bucket, needsUser: true });
    return settle(opts.ctx, charge, await opts.next({ ctx: { principal, user: { accountId: principal.accountId, userId } } }));
  });

/**
 * A server-configured dashboard key (in x-api-key only: a URL ends up in proxy logs) and x-account-id
 * (one middleware; never billed). Order: key (401) → rate limit (429) → x-account-id, input (400) →
 * the account exists (404). Reads and most writes never create an account: only the route whose meta
 * says `createsAccount` (POST /api/keys, whose first key creates it) skips the 404.
 */
const dashboard = t.middleware(async (opts) => {
  const { ctx, next } = opts;
  const header = ctx.headers.get('x-api-key');
  const key = header ?? ctx.query().get('apiKey');
  // A signed-in customer acts on their own account (routes whose meta says `session: true`).
  if (usesSession(opts, key)) {
    const session = await admitSession(opts);
    return next({ ctx: { accountId: session.accountId } });
  }
  if (!key) throw new ApiError('UNAUTHORIZED', 'This route needs a dashboard key in x-api-key');
  if (isDashboardKey(ctx, key)) {
    if (header === null) throw new ApiError('UNAUTHORIZED', 'Send the dashboard key in the x-api-key header, never in the URL (?apiKey= is for API keys)');
  } else {
    await refuseBlockedClient(ctx);
    throw await authFailed(ctx, keyCheckOf(ctx), new ApiError('UNAUTHORIZED', 'This route needs a dashboard key in x-api-key'));
  }
  await applyRateLimit(ctx, `dashboard:${Buffer.from(digestOf(key)).toString('hex').slice(0, 16)}`, ctx.services.config.rateLimits.key);
  const accountId = ctx.headers.get('x-account-id');
  if (!accountId || !IDENTIFIER.test(accountId)) {
    throw new ApiError('BAD_REQUEST', `x-account-id: required, ${IDENTIFIER_RULE}`);
  }
  inspectInput(await rawInputOf(opts));
  if (!opts.meta?.createsAccount) await requireAccount(ctx.services.database.db, accountId);
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
    inspectInput(rawInput);
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

/** A server-configured dashboard key and x-account-id naming an existing account (404 otherwise); never billed. */
export const dashboardProcedure = t.procedure.meta({ access: 'dashboard' }).use(dashboard);

/** A signed-in customer's session (the auth routes after sign-in); never billed. */
const sessionOnly = t.middleware(async (opts) => {
  const session = await admitSession({ ...opts, meta: { session: true } });
  return opts.next({ ctx: { session } });
});
export const sessionProcedure = t.procedure.meta({ access: 'session', session: true }).use(sessionOnly);

/**
 * Like dashboardProcedure, for the one route whose account need not exist yet: creating an account's
 * first key (POST /api/keys) creates the account, in the same statement as the key.
 */
export const accountCreatingProcedure = t.procedure.meta({ access: 'dashboard', createsAccount: true }).use(dashboard);
