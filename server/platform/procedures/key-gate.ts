/**
 * The failed-authentication gate and the per-request key check (procedures.ts uses them): bad keys
 * are counted per client address and refused before their lookup once an address has used its
 * budget, and a key is looked up at most once per HTTP request.
 */
import { authenticateApiKey, type KeyIdentity } from '../../accounts/api-keys.ts';
import { ApiError } from '../../errors.ts';
import type { KeyCheck, RequestContext } from './context.ts';
import { askLimiter, takeToken } from './rate-limits.ts';

/**
 * Failed authentications (a presented key that is malformed, unknown, revoked or of the wrong kind)
 * take a token from their client address's bucket (RATE_LIMIT_AUTH_FAILURE_*; shared by instances
 * through Redis). Once it is empty, every request from that address presenting a key is answered 429
 * before its key is looked up: guessing keys, or a random key per request, no longer costs a database
 * lookup each. A key this process admitted in the last 10 minutes skips the gate (accounts/recent-keys.ts),
 * so a bad client on a shared address cannot lock out the keys in use there; another valid key from a
 * blocked address is refused until the bucket refills, since only the lookup could tell it is valid.
 * A dashboard key is compared in memory, so a correct one still passes.
 */
const authFailureBucket = (ctx: RequestContext) => `authfail:${ctx.clientIp()}`;

export async function refuseBlockedClient(ctx: RequestContext) {
  const peeked = askLimiter(ctx, 'peek', authFailureBucket(ctx), ctx.services.config.rateLimits.authFailure);
  const gate = peeked instanceof Promise ? await peeked : peeked;
  if (!gate || gate.allowed) return;
  ctx.resHeaders['Retry-After'] = String(gate.retryAfterSeconds);
  throw new ApiError('RATE_LIMITED', `Too many failed authentications from this address; retry after ${gate.retryAfterSeconds}s`);
}

/** A REST request is one call: its check needs no sharing. A tRPC batch's calls share the context's. */
export function keyCheckOf(ctx: RequestContext): KeyCheck {
  if (ctx.transport === 'rest') return {};
  return (ctx.keyCheck ??= {});
}

/** Counts a failed authentication against the client address (once per request); returns the error to throw. */
export async function authFailed(ctx: RequestContext, check: KeyCheck, error: ApiError): Promise<ApiError> {
  if (!check.counted) {
    check.counted = true;
    const taken = takeToken(ctx, authFailureBucket(ctx), ctx.services.config.rateLimits.authFailure);
    if (taken instanceof Promise) await taken;
  }
  return error;
}

/** The key's principal for a refusal path; once per request, and a failure is counted. */
export async function authenticate(ctx: RequestContext, check: KeyCheck, key: string): Promise<KeyIdentity> {
  check.lookup ??= authenticateApiKey(ctx.services.database.db, key).catch(async (error) => {
    throw error instanceof ApiError && error.apiCode === 'UNAUTHORIZED' ? await authFailed(ctx, check, error) : error;
  });
  const principal = await check.lookup;
  ctx.logFields.accountId = principal.accountId;
  return principal;
}
