/**
 * A sign-in nonce is bound to the client that asked for it: GET /api/auth/nonce sets the
 * `pipo_nonce` cookie, 256 random bits the database keeps only as SHA-256 (auth_nonces.binding_hash),
 * and POST /api/auth/verify accepts the nonce only with that cookie. A signed message that leaks (a
 * phishing page relaying it, a log) is worthless without the cookie of the client that fetched the
 * nonce. HttpOnly, SameSite=Strict (the dashboard is same-origin; scripts keep the cookie themselves),
 * Secure off localhost like the session cookie, and sent back only to the path of the transport that
 * asked: /api/auth for REST, /trpc for the dashboard's tRPC client. Verify clears it.
 */
import type { Config } from '../config.ts';
import { cookieValue, insecureLocal } from './sessions.ts';

export const NONCE_COOKIE = 'pipo_nonce';

/** The transport that asked (RequestContext['transport']; named here so auth/ imports nothing of the request pipeline). */
type Transport = 'rest' | 'trpc';

const attributes = (config: Config, transport: Transport) =>
  `Path=${transport === 'rest' ? '/api/auth' : '/trpc'}; HttpOnly; SameSite=Strict${insecureLocal(config.auth.publicUrl) ? '' : '; Secure'}`;

export function nonceCookie(config: Config, transport: Transport, binding: string, expiresAt: Date): string {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  return `${NONCE_COOKIE}=${binding}; ${attributes(config, transport)}; Max-Age=${maxAge}`;
}

export const clearedNonceCookie = (config: Config, transport: Transport) => `${NONCE_COOKIE}=; ${attributes(config, transport)}; Max-Age=0`;

/** The binding the request's cookie carries, if any. */
export const nonceBinding = (cookieHeader: string | null) => cookieValue(cookieHeader, NONCE_COOKIE);
