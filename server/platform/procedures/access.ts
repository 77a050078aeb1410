/**
 * The access rules' gates: each narrows the context (who is calling) and carries the cross-cutting
 * rules of its procedures, in the order of docs/decisions.md §4:
 *   authenticate (401) → input and user id (400) → rate limit (429) → reserve the cost (the scope 403, then 402) → handler,
 * and a failed handler has its reservation reversed (the admission's `settle`). Route handlers never
 * re-check any of it. Both transports call these same functions (definition.ts).
 *
 * Before any key is looked up, the client address's failed authentications are checked (429 once
 * they are used up), and a key is looked up at most once per HTTP request (a tRPC batch is one).
 */
import { timingSafeEqual } from 'node:crypto';
import { requireAccount } from '../../accounts/accounts.ts';
import { hashApiKey, isApiKeyShaped, type KeyPrincipal } from '../../accounts/api-keys.ts';
import { admitBilledRequest, billingCommitsSynchronously, type Charge, type Payer, type PriceTier } from '../../accounts/billing.ts';
import { isTestSide, liveAccountOf, modeOfKey, standardCostOf } from '../../accounts/modes.ts';
import { sessionToken, sessionTokenHash } from '../../auth/sessions.ts';
import { ApiError } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { IDENTIFIER, IDENTIFIER_RULE } from '../../lib/identifiers.ts';
import { whenReady } from '../../lib/when-ready.ts';
import { digestOf, type Services } from '../services.ts';
import type { KeyCheck, RequestContext } from './context.ts';
import { inspectInput } from './input-inspection.ts';
import { authenticate, authFailed, keyCheckOf, refuseBlockedClient } from './key-gate.ts';
import { applyDecision, applyRateLimit, takeToken } from './rate-limits.ts';
import { admitSession, refuseCrossSite, usesSession } from './session-gate.ts';
import { idempotencyKeyOf } from './idempotency-key.ts';
import { userIdOf } from './user-id.ts';
import type { Admission, Gate, GateCall } from './definition.ts';
import type { Units } from './meta.ts';

/** x-api-key wins over ?apiKey= when both are sent (docs/decisions.md §3). */
function presentedKey(ctx: RequestContext): string | null {
  return ctx.headers.get('x-api-key') ?? ctx.query().get('apiKey');
}

/** The operator whose dashboard key this is (DASHBOARD_KEYS), or null; /metrics checks its keys with it too. */
export function operatorOf(services: Pick<Services, 'operators'>, key: string): string | null {
  const digest = digestOf(key);
  let match: string | null = null;
  // Compare against every configured key, in constant time, without stopping at the first match.
  for (const known of services.operators) if (timingSafeEqual(known.digest, digest)) match ??= known.name;
  return match;
}

export const isDashboardKey = (services: Pick<Services, 'operators'>, key: string) => operatorOf(services, key) !== null;

interface BilledRule {
  tier: PriceTier;
  /** The rate-limit bucket: every key route, or the tighter buy/sell one. */
  bucket: 'key' | 'trade';
  /** Trading routes need a user id (x-user-id, or the input's `userId`). */
  needsUser: boolean;
}

interface Reserved {
  principal: KeyPrincipal;
  charge: Charge;
  datasetVersion?: number;
}

interface Admitted extends Reserved {
  userId: string;
  /** Who pays: the key or the session admitted (a call priced in units reserves its further units from it). */
  payer: Payer;
}

/**
 * Everything a billed route needs before its handler. A key is authenticated once per HTTP request:
 * in a tRPC batch the first call's admission decides, the others wait for it, and a key that failed
 * is answered 401 again without another lookup (a batch of N calls with an unknown key is one lookup).
 */
async function admit(call: GateCall, rule: BilledRule): Promise<Admitted> {
  const { ctx } = call;
  ctx.billing.billable = true;
  const key = presentedKey(ctx);
  if (!key) throw new ApiError('UNAUTHORIZED', 'Missing API key: send the x-api-key header');
  const keyHash = isApiKeyShaped(key) ? hashApiKey(key) : undefined;
  // A key this process admitted recently needs no gate and no waiting: a batch's calls are admitted at once.
  const known = keyHash !== undefined && ctx.services.recentKeys.has(keyHash);
  if (ctx.transport === 'rest' || known) return admitKey(call, rule, key, keyHash, known, keyCheckOf(ctx));
  const check = keyCheckOf(ctx);
  if (check.known) {
    await check.known;
    if (check.failure) throw check.failure;
    return admitKey(call, rule, key, keyHash, false, check);
  }
  let release!: () => void;
  check.known = new Promise((resolve) => (release = resolve));
  try {
    return await admitKey(call, rule, key, keyHash, false, check);
  } catch (error) {
    if (error instanceof ApiError && error.apiCode === 'UNAUTHORIZED') check.failure = error;
    throw error;
  } finally {
    release();
  }
}

/**
 * One billed call, in the order of docs/decisions.md §4:
 * failed-authentication gate (429) → key shape (401) → input, user id (400) → rate limit (429) → key, scope and cost (401, 403, 402).
 * The key, the reservation and the usage row are ONE database round trip (admitBilledRequest). The
 * refusals before it (400, 429) look the key up first, so an invalid key is always answered 401.
 */
async function admitKey(call: GateCall, rule: BilledRule, key: string, keyHash: string | undefined, known: boolean, check: KeyCheck): Promise<Admitted> {
  const { ctx } = call;
  if (!known) await refuseBlockedClient(ctx);
  if (isDashboardKey(ctx.services, key)) throw await authFailed(ctx, check, new ApiError('UNAUTHORIZED', 'A dashboard key cannot call this route; use an API key'));
  if (keyHash === undefined) throw await authFailed(ctx, check, new ApiError('UNAUTHORIZED', 'Invalid API key'));

  let userId = '';
  try {
    inspectInput(call.rawInput);
    if (rule.needsUser) userId = userIdOf(ctx, call.rawInput);
    if (call.meta.idempotent) idempotencyKeyOf(ctx, call.rawInput);
    await call.parseInput?.();
  } catch (callerError) {
    await authenticate(ctx, check, key); // 401 first when the key is not valid either
    throw callerError;
  }
  const taken = takeToken(ctx, `${rule.bucket}:${keyHash.slice(0, 32)}`, ctx.services.config.rateLimits[rule.bucket]);
  const decision = taken instanceof Promise ? await taken : taken;
  if (decision && !decision.allowed) await authenticate(ctx, check, key);
  applyDecision(ctx, decision);
  if (modeOfKey(key) === 'test') await limitTestCalls(ctx, check, key);

  let admission;
  const payer = { keyHash };
  try {
    admission = await reserve(call, rule.tier, payer);
  } catch (error) {
    if (error instanceof ApiError && error.apiCode === 'UNAUTHORIZED') {
      ctx.services.recentKeys.delete(keyHash); // revoked since it was admitted
      throw await authFailed(ctx, check, error);
    }
    throw error;
  }
  ctx.services.recentKeys.add(keyHash);
  return { ...admission, userId, payer };
}

/**
 * A test key's calls cost nothing by default, so money bounds nothing: they also take a token from
 * their account's test bucket and their client address's (RATE_LIMIT_TEST_*), so many test keys of
 * one account, or of many free accounts on one address, stay within one budget (decisions.md §11). The
 * account is learnt by looking the key up first: one more read, for test keys only.
 */
async function limitTestCalls(ctx: RequestContext, check: KeyCheck, key: string) {
  const principal = await authenticate(ctx, check, key);
  const rule = ctx.services.config.rateLimits.test;
  await applyRateLimit(ctx, `test-account:${principal.accountId}`, rule);
  await applyRateLimit(ctx, `test-ip:${ctx.clientIp()}`, rule);
}

/**
 * The reservation: the payer (key or session) checked again, the cost debited and the usage row
 * written, in ONE database round trip (admitBilledRequest). A lost answer (the database went away)
 * may still have charged: that charge is refunded once the database answers.
 */
async function reserve(call: GateCall, tier: PriceTier, payer: Payer, provisionalSeconds?: number): Promise<Reserved> {
  const { ctx, path } = call;
  ctx.billing.billable = true;
  const usageId = newId('use');
  let admission;
  try {
    admission = await admitBilledRequest(ctx.services.database.db, {
      ...payer,
      tier,
      // A test key's calls are priced at the test price (from its test side's balance: modes.ts).
      defaultCostMicros: standardCostOf(ctx.services.config, presentedKey(ctx)),
      method: ctx.method,
      path: ctx.transport === 'rest' ? ctx.path : `/trpc/${path}`,
      requestId: ctx.requestId,
      synchronousCommit: billingCommitsSynchronously(ctx.services.config.billingSynchronousCommit, ctx.services.database.kind),
      concurrentBatches: ctx.services.database.kind === 'pglite' ? 1 : 2,
      usageId,
      provisionalSeconds,
      scope: call.meta.scope,
    }, (accountId) => (ctx.logFields.accountId = accountId));
  } catch (error) {
    if (!(error instanceof ApiError)) ctx.services.refunds.refundLater({ usageId, accountId: '', costMicros: 0 });
    throw error;
  }
  ctx.billing.chargedMicros += admission.charge.costMicros;
  return admission;
}

/**
 * A signed-in customer's call on a billed route: billed to the session's account exactly like a key's
 * call — same price, balance or monthly cap, usage row (with no key), same rate limit per account —
 * so a session is never a free key (docs/decisions.md §4). Order: session (401) → Origin (403) →
 * input, user id (400) → rate limit (429) → reservation (402; the session checked again in it).
 */
async function admitSessionCall(call: GateCall, rule: BilledRule): Promise<Admitted> {
  call.ctx.billing.billable = true;
  let userId = '';
  await admitSession(call, rule.bucket, () => {
    refuseCrossSite(call.ctx);
    if (rule.needsUser) userId = userIdOf(call.ctx, call.rawInput);
    if (call.meta.idempotent) idempotencyKeyOf(call.ctx, call.rawInput);
  });
  const payer = { sessionHash: sessionTokenHash(sessionToken(call.ctx.headers.get('cookie'))!) };
  return { ...(await reserve(call, rule.tier, payer)), userId, payer };
}

/**
 * The further units of a call priced in units (its meta's `units`, meta.ts), reserved one by one from
 * the same payer by the same one-statement admission as the first (admitBilledRequest: the balance
 * debited only where it covers the unit, a metered account's month and a capped key's window
 * counted, a usage row per unit), before the handler runs. All or nothing: a refusal of any unit
 * (402) or of the count returns every unit taken, so the call can pay for its whole answer before its
 * first byte or costs nothing. The further units are provisional (UNIT_LEASE_MS): the handler keeps
 * those it writes and refunds the rest (accounts/unit-charges.ts); a crash leaves them to lapse.
 */
async function reserveUnits(call: GateCall, tier: PriceTier, first: Admitted, units: Units): Promise<Charge[]> {
  const { ctx } = call;
  const charges = [first.charge];
  try {
    const count = await units({ ctx, input: await call.parseInput?.() });
    if (!Number.isSafeInteger(count) || count < 1) throw new Error(`${call.path}: its units must be a whole number of at least 1 (got ${count})`);
    const provisionalSeconds = Math.ceil(ctx.services.config.unitLeaseMs / 1000);
    for (let unit = 1; unit < count; unit++) charges.push((await reserve(call, tier, first.payer, provisionalSeconds)).charge);
    return charges;
  } catch (error) {
    for (const charge of charges) {
      await ctx.services.refunds.refund(charge);
      ctx.billing.chargedMicros -= charge.costMicros;
    }
    throw error;
  }
}

/** A billed admission: a failed handler has its reservations reversed (now, or once the database answers). */
function billed(ctx: RequestContext, charges: Charge[], members: Record<string, unknown>): Admission {
  return {
    ctx: members,
    costMicros: charges.reduce((sum, charge) => sum + charge.costMicros, 0),
    settle: async (ok) => {
      if (ok) return;
      for (const charge of charges) {
        await ctx.services.refunds.refund(charge);
        ctx.billing.chargedMicros -= charge.costMicros;
      }
    },
  };
}

/**
 * x-api-key routes; those whose meta says `session: true` also take a signed-in customer's session,
 * billed the same. A route whose meta states `units` costs that many requests of the tier per call,
 * all reserved before the handler runs (reserveUnits).
 */
export const billedByKey = (tier: PriceTier): Gate => async (call) => {
  const rule: BilledRule = { tier, bucket: 'key', needsUser: false };
  const admitted = usesSession(call, presentedKey(call.ctx)) ? await admitSessionCall(call, rule) : await admit(call, rule);
  const charges = call.meta.units ? await reserveUnits(call, tier, admitted, call.meta.units) : [admitted.charge];
  return billed(call.ctx, charges, { principal: admitted.principal, charges, datasetVersion: admitted.datasetVersion });
};

/** x-api-key (or a session, where the meta allows) + a user id (trading); every trading query filters by (account, user id). */
export const billedForUser = (bucket: 'key' | 'trade'): Gate => async (call) => {
  const rule: BilledRule = { tier: 'standard', bucket, needsUser: true };
  const { principal, charge, userId } = usesSession(call, presentedKey(call.ctx)) ? await admitSessionCall(call, rule) : await admit(call, rule);
  return billed(call.ctx, [charge], { principal, user: { accountId: principal.accountId, userId } });
};

/**
 * A server-configured dashboard key (in x-api-key only: a URL ends up in proxy logs) and x-account-id
 * (never billed). Order: key (401) → rate limit (429) → x-account-id, input (400) → the account
 * exists (404). Reads and most writes never create an account: only the route whose meta says
 * `createsAccount` (POST /api/keys, whose first key creates it) skips the 404.
 */
export const dashboard: Gate = async (call) => {
  const { ctx } = call;
  const header = ctx.headers.get('x-api-key');
  const key = header ?? ctx.query().get('apiKey');
  // A signed-in customer acts on their own account (routes whose meta says `session: true`).
  if (usesSession(call, key)) {
    const session = await admitSession(call);
    return { ctx: { accountId: session.accountId } };
  }
  if (!key) throw new ApiError('UNAUTHORIZED', 'This route needs a dashboard key in x-api-key');
  const operator = operatorOf(ctx.services, key);
  if (operator !== null) {
    if (header === null) throw new ApiError('UNAUTHORIZED', 'Send the dashboard key in the x-api-key header, never in the URL (?apiKey= is for API keys)');
  } else {
    await refuseBlockedClient(ctx);
    throw await authFailed(ctx, keyCheckOf(ctx), new ApiError('UNAUTHORIZED', 'This route needs a dashboard key in x-api-key'));
  }
  await applyRateLimit(ctx, `dashboard:${Buffer.from(digestOf(key)).toString('hex').slice(0, 16)}`, ctx.services.config.rateLimits.key);
  const accountId = ctx.headers.get('x-account-id');
  // An account, or its test side (`<account>~test`: its test balance, usage and keys; accounts/modes.ts).
  if (!accountId || !IDENTIFIER.test(liveAccountOf(accountId))) {
    throw new ApiError('BAD_REQUEST', `x-account-id: required, ${IDENTIFIER_RULE} (or an account's test side, <account>~test)`);
  }
  if (call.meta.createsAccount && isTestSide(accountId)) throw new ApiError('BAD_REQUEST', 'x-account-id: keys are created for the account itself (a test key with mode "test"), not for its test side');
  inspectInput(call.rawInput);
  await call.parseInput?.();
  if (!call.meta.createsAccount) await requireAccount(ctx.services.database.db, accountId);
  ctx.logFields.accountId = accountId;
  // The operator by name: what the audit log records as the actor (platform/procedures/audit-actor.ts).
  return { ctx: { accountId, operator } };
};

const ADMITTED: Admission = Object.freeze({});

/**
 * Public routes: no credentials; limited per client IP. Not an async function: on /api with the
 * in-process limiter nothing here waits, and the whole request is answered without a promise.
 */
export const open: Gate = (call) => {
  const { ctx } = call;
  inspectInput(call.rawInput);
  const taken = takeToken(ctx, `ip:${ctx.clientIp()}`, ctx.services.config.rateLimits.ip);
  return whenReady(taken, (decision) => (applyDecision(ctx, decision), ADMITTED));
};

/** A signed-in customer's session (the auth routes after sign-in); never billed. */
export const sessionOnly: Gate = async (call) => {
  const session = await admitSession({ ...call, meta: { session: true } });
  return { ctx: { session } };
};
