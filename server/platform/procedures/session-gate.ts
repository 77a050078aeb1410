/**
 * A customer's browser session in place of a key. Routes whose meta says `session: true` accept,
 * when the request carries no key, the session cookie of a wallet sign-in: the account is the
 * session's own (x-account-id is the operator's header and is ignored), and a state-changing request
 * must come from a trusted Origin (CSRF). On a billed route the call is then billed to that account
 * like a key's (access.ts); routes that are free with a key are free with a session.
 * Order: the session (401) → Origin (403) → input (400) → rate limit per account (429).
 *
 * A cookie that names no live session (unknown, expired, signed out) is 401 and counts against the
 * client address in a bucket of its own (RATE_LIMIT_AUTH_FAILURE_*: 429 once used up): never in the
 * API keys' failed-authentication gate, so visitors behind one address checking a stale cookie can
 * never lock that address's API clients out. A request with no cookie counts nowhere.
 */
import { findSession, requireTrustedOrigin, sessionToken, type Session } from '../../auth/sessions.ts';
import { ApiError } from '../../errors.ts';
import type { RequestContext } from './context.ts';
import { inspectInput } from './input-inspection.ts';
import { applyRateLimit } from './rate-limits.ts';

type Options = { ctx: RequestContext; rawInput: unknown; meta?: { session?: boolean }; parseInput?: () => unknown };

/** Whether this call authenticates by session: the route takes one, no key is presented, a cookie is. */
export function usesSession(opts: Options, presentedKey: string | null): boolean {
  return !!opts.meta?.session && presentedKey === null && sessionToken(opts.ctx.headers.get('cookie')) !== null;
}

/** The session the request's cookie names (one lookup per HTTP request, shared by a batch). */
export function sessionOf(ctx: RequestContext): Promise<Session | null> {
  const token = sessionToken(ctx.headers.get('cookie'));
  ctx.session ??= token ? findSession(ctx.services.database.db, token) : Promise.resolve(null);
  return ctx.session;
}

/**
 * A billed call costs the session's account money, so it must not be one another site made the
 * browser send: a top-level navigation or a link carries a SameSite=Lax cookie on GET. A browser says
 * where a request came from in Sec-Fetch-Site; cross-site (or same-site, another subdomain) is
 * refused unless its Origin is one the service trusts (CORS_ORIGINS). Scripts send no such header.
 */
export function refuseCrossSite(ctx: RequestContext): void {
  const site = ctx.headers.get('sec-fetch-site');
  if (site !== 'cross-site' && site !== 'same-site') return;
  try {
    requireTrustedOrigin(ctx.services.config, 'POST', ctx.headers.get('origin'));
  } catch {
    throw new ApiError('FORBIDDEN_ORIGIN', `A billed request made with a session cookie from another site (Sec-Fetch-Site: ${site}) is refused: it would spend the account's money. Open it from the dashboard, or call with an API key`);
  }
}

/**
 * Admits a session call, or throws 401 / 403 / 400 / 429. `bucket` is the account's rate-limit bucket
 * (the key routes' or the tighter buy/sell one, with the same limits a key has); `readInput` checks
 * what the route reads beyond its schema (the trading user), at the input step.
 */
export async function admitSession(opts: Options, bucket: 'key' | 'trade' = 'key', readInput?: () => void): Promise<Session> {
  const { ctx } = opts;
  const session = await sessionOf(ctx);
  if (!session) {
    if (sessionToken(ctx.headers.get('cookie')) !== null) await applyRateLimit(ctx, `session-fail:${ctx.clientIp()}`, ctx.services.config.rateLimits.authFailure);
    throw new ApiError('UNAUTHORIZED', 'Session expired or signed out: sign in again (GET /api/auth/nonce, POST /api/auth/verify)');
  }
  requireTrustedOrigin(ctx.services.config, ctx.method, ctx.headers.get('origin'));
  ctx.logFields.accountId = session.accountId;
  inspectInput(opts.rawInput);
  readInput?.();
  await opts.parseInput?.();
  await applyRateLimit(ctx, `${bucket === 'trade' ? 'trade-session' : 'session'}:${session.accountId}`, ctx.services.config.rateLimits[bucket]);
  return session;
}
