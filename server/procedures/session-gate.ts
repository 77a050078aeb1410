/**
 * A customer's browser session in place of a key (issue #17). Routes whose meta says `session: true`
 * accept, when the request carries no key, the session cookie of a wallet sign-in: the account is the
 * session's own (x-account-id is the operator's header and is ignored), nothing is billed, and a
 * state-changing request must come from a trusted Origin (CSRF). Order: the session (401) → Origin
 * (403) → rate limit (429) → input (400).
 *
 * A cookie that names no live session (unknown, expired, signed out) is 401 and counts against the
 * client address in a bucket of its own (RATE_LIMIT_AUTH_FAILURE_*: 429 once used up): never in the
 * API keys' failed-authentication gate, so visitors behind one address checking a stale cookie can
 * never lock that address's API clients out. A request with no cookie counts nowhere.
 */
import { findSession, requireTrustedOrigin, sessionToken, type Session } from '../auth/sessions.ts';
import { ApiError } from '../errors.ts';
import type { RequestContext } from './context.ts';
import { inspectInput } from './input-inspection.ts';
import { applyRateLimit } from './rate-limits.ts';

type Options = { ctx: RequestContext; rawInput: unknown; meta?: { session?: boolean } };

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

/** Admits a session call, or throws 401 / 403 / 429 / 400. */
export async function admitSession(opts: Options): Promise<Session> {
  const { ctx } = opts;
  const session = await sessionOf(ctx);
  if (!session) {
    if (sessionToken(ctx.headers.get('cookie')) !== null) await applyRateLimit(ctx, `session-fail:${ctx.clientIp()}`, ctx.services.config.rateLimits.authFailure);
    throw new ApiError('UNAUTHORIZED', 'Session expired or signed out: sign in again (GET /api/auth/nonce, POST /api/auth/verify)');
  }
  requireTrustedOrigin(ctx.services.config, ctx.method, ctx.headers.get('origin'));
  await applyRateLimit(ctx, `session:${session.accountId}`, ctx.services.config.rateLimits.key);
  inspectInput(opts.rawInput);
  ctx.logFields.accountId = session.accountId;
  return session;
}
