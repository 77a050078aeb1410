/**
 * Browser sessions after a wallet sign-in (issue #17): an opaque random token in an HttpOnly,
 * SameSite=Lax cookie (Secure unless the service runs on http://localhost), stored only as its
 * SHA-256, expiring after SESSION_TTL_HOURS, revoked by logout. A session acts for its own account
 * only and is never billed. Requests that change state with a session must come from the service's
 * own origin or one of CORS_ORIGINS (the Origin header): a cookie alone is not a reason to act (CSRF).
 */
import { and, eq, gt, isNull, sql } from 'drizzle-orm';
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

const digest = (token: string) => new Bun.CryptoHasher('sha256').update(token).digest('hex');

export async function createSession(db: Db, config: Config, who: { accountId: string; address: string }): Promise<{ token: string; expiresAt: Date }> {
  const token = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');
  const expiresAt = new Date(Date.now() + config.auth.sessionTtlMs);
  await db.insert(authSessions).values({ tokenHash: digest(token), accountId: who.accountId, address: who.address.toLowerCase(), expiresAt });
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

export async function revokeSession(db: Db, token: string): Promise<void> {
  await db.update(authSessions).set({ revokedAt: sql`now()` }).where(and(eq(authSessions.tokenHash, digest(token)), isNull(authSessions.revokedAt)));
}

/** The session token in a Cookie header, if any. */
export function sessionToken(cookieHeader: string | null): string | null {
  if (!cookieHeader) return null;
  for (const part of cookieHeader.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === SESSION_COOKIE) return value.join('=') || null;
  }
  return null;
}

const insecureLocal = (publicUrl: string) => /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/.test(publicUrl);

export function sessionCookie(config: Config, token: string, expiresAt: Date): string {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${insecureLocal(config.auth.publicUrl) ? '' : '; Secure'}`;
}

export function clearedSessionCookie(config: Config): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${insecureLocal(config.auth.publicUrl) ? '' : '; Secure'}`;
}

/** CSRF: a state-changing request acting on a session must carry the Origin of this service or of CORS_ORIGINS. */
export function requireTrustedOrigin(config: Config, method: string, origin: string | null) {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return;
  const trusted = [new URL(config.auth.publicUrl).origin, ...config.corsOrigins];
  if (!origin || !trusted.includes(origin)) {
    throw new ApiError('FORBIDDEN_ORIGIN', `A request that changes something with a session cookie must come from ${trusted.join(' or ')} (its Origin header${origin ? ` is ${origin}` : ' is missing'})`);
  }
}
