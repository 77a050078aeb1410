/**
 * Browser sessions after a wallet sign-in: an opaque random token in an HttpOnly,
 * SameSite=Lax cookie (Secure unless the service runs on http://localhost), stored only as its
 * SHA-256, expiring after SESSION_TTL_HOURS, revoked by logout or by the account's newer sign-ins
 * beyond SESSION_MAX_PER_ACCOUNT (oldest first). A session acts for its own account
 * only; on a billed route its calls are billed to that account like a key's (platform/procedures/access.ts). Requests that change state with a session must come from the service's
 * own origin or one of CORS_ORIGINS (the Origin header): a cookie alone is not a reason to act (CSRF).
 */
import { and, desc, eq, gt, inArray, isNull, ne, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { authSessions } from '../../db/schema.ts';
import type { Config } from '../config.ts';
import { ApiError } from '../errors.ts';

export const SESSION_COOKIE = 'pipo_session';

export interface Session {
  accountId: string;
  address: string;
  expiresAt: Date;
}

/** How a session token is stored (and how billing finds the session a request pays with). */
export const sessionTokenHash = (token: string) => new Bun.CryptoHasher('sha256').update(token).digest('hex');
const digest = sessionTokenHash;

/** 256 random bits, base64url (43 characters): a session token, or a nonce's binding (auth/nonce-cookie.ts). */
export const randomToken = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');

/**
 * A new session; the account keeps at most SESSION_MAX_PER_ACCOUNT live ones, so beyond that its
 * oldest are revoked in the same transaction. The account's sign-ins take turns (an advisory lock
 * per account): two at once each see the other's session, so the cap holds exactly under
 * concurrency. The new session is never among those revoked, and its created_at is the time it
 * took its turn (clock_timestamp, not the transaction's start), so "oldest" is the order they came in.
 */
export async function createSession(db: Db, config: Config, who: { accountId: string; address: string }): Promise<{ token: string; expiresAt: Date }> {
  const token = randomToken();
  const tokenHash = digest(token);
  const expiresAt = new Date(Date.now() + config.auth.sessionTtlMs);
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`sessions:${who.accountId}`}, 0))`);
    await tx.insert(authSessions).values({ tokenHash, accountId: who.accountId, address: who.address.toLowerCase(), createdAt: sql`clock_timestamp()`, expiresAt });
    const live = and(eq(authSessions.accountId, who.accountId), isNull(authSessions.revokedAt), gt(authSessions.expiresAt, sql`now()`), ne(authSessions.tokenHash, tokenHash));
    const keep = config.auth.sessionMaxPerAccount - 1; // the others kept beside the new one
    const beyond = tx.select({ tokenHash: authSessions.tokenHash }).from(authSessions).where(live).orderBy(desc(authSessions.createdAt), desc(authSessions.tokenHash)).offset(keep);
    await tx.update(authSessions).set({ revokedAt: sql`now()` }).where(inArray(authSessions.tokenHash, beyond));
  });
  return { token, expiresAt };
}

/** The live session a token names, or null (unknown, expired or revoked). */
export async function findSession(db: Db, token: string): Promise<Session | null> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const [row] = await db
    .select({ accountId: authSessions.accountId, address: authSessions.address, expiresAt: authSessions.expiresAt })
    .from(authSessions)
    .where(and(eq(authSessions.tokenHash, digest(token)), isNull(authSessions.revokedAt), gt(authSessions.expiresAt, sql`now()`)));
  return row ?? null;
}

/** The session it ended, or null when the token named no live one (a repeated sign-out). */
export async function revokeSession(db: Db, token: string): Promise<{ accountId: string; address: string } | null> {
  const [ended] = await db
    .update(authSessions)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(authSessions.tokenHash, digest(token)), isNull(authSessions.revokedAt)))
    .returning({ accountId: authSessions.accountId, address: authSessions.address });
  return ended ?? null;
}

/** A cookie's value in a Cookie header, if any. */
export function cookieValue(cookieHeader: string | null, cookie: string): string | null {
  if (!cookieHeader) return null;
  for (const part of cookieHeader.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === cookie) return value.join('=') || null;
  }
  return null;
}

/** The session token in a Cookie header, if any. */
export const sessionToken = (cookieHeader: string | null) => cookieValue(cookieHeader, SESSION_COOKIE);

/** Cookies are Secure unless the service itself runs on plain http on this machine (development, tests). */
export const insecureLocal = (publicUrl: string) => /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/.test(publicUrl);

export function sessionCookie(config: Config, token: string, expiresAt: Date): string {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${insecureLocal(config.auth.publicUrl) ? '' : '; Secure'}`;
}

export function clearedSessionCookie(config: Config): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${insecureLocal(config.auth.publicUrl) ? '' : '; Secure'}`;
}

/**
 * The service's origin as this request reached it, for the sign-in message's domain and URI: with
 * PUBLIC_URL unset, a request to 127.0.0.1 on the port is answered as that origin, since on a
 * developer's machine it and localhost name this service; otherwise, and for any other Host, PUBLIC_URL.
 * [::1] signs in as localhost: EIP-4361 tools (viem, wallets) refuse an IPv6 literal as the domain.
 */
export function serviceOrigin(config: Config, host: string | null): string {
  const asReached = host && !host.startsWith('[') ? `http://${host.toLowerCase()}` : null;
  return asReached && config.auth.origins.includes(asReached) ? asReached : new URL(config.auth.publicUrl).origin;
}

/** CSRF: a state-changing request acting on a session must carry the Origin of this service (any of its origins) or of CORS_ORIGINS. */
export function requireTrustedOrigin(config: Config, method: string, origin: string | null) {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return;
  const trusted = [...config.auth.origins, ...config.corsOrigins];
  if (!origin || !trusted.includes(origin)) {
    throw new ApiError('FORBIDDEN_ORIGIN', `A request that changes something with a session cookie must come from ${trusted.join(' or ')} (its Origin header${origin ? ` is ${origin}` : ' is missing'})`);
  }
}
