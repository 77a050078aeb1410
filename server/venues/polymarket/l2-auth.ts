/**
 * Polymarket CLOB L2 request authentication (HMAC-SHA256 with the user's API secret). Written here
 * rather than taken from @polymarket/clob-client-v2 so the venue stays plain fetch; byte parity with
 * the SDK's `createL2Headers` is proven in tests/venues/polymarket-signing.test.ts.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface L2Credentials {
  apiKey: string;
  secret: string;
  passphrase: string;
}

/**
 * The POLY_SIGNATURE value. The CLOB signs the path without its query string (the SDK passes query
 * parameters separately), so a query is cut here rather than trusting every caller to do it.
 */
export function l2Signature(secret: string, timestampSeconds: number, method: string, requestPath: string, body?: string): string {
  if (!secret) throw new Error('The API secret is empty');
  // Secrets are issued as url-safe base64; Buffer's decoder needs the standard alphabet but not padding.
  const key = Buffer.from(secret.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  const path = requestPath.split('?', 1)[0]!;
  const message = `${timestampSeconds}${method.toUpperCase()}${path}${body ?? ''}`;
  // Url-safe alphabet but '=' padding kept: that is what the CLOB compares against.
  return createHmac('sha256', key).update(message).digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

export type L2Headers = Record<'POLY_ADDRESS' | 'POLY_SIGNATURE' | 'POLY_TIMESTAMP' | 'POLY_API_KEY' | 'POLY_PASSPHRASE', string>;

export function l2Headers(
  credentials: L2Credentials,
  address: string,
  timestampSeconds: number,
  method: string,
  requestPath: string,
  body?: string,
): L2Headers {
  return {
    POLY_ADDRESS: address,
    POLY_SIGNATURE: l2Signature(credentials.secret, timestampSeconds, method, requestPath, body),
    POLY_TIMESTAMP: String(timestampSeconds),
    POLY_API_KEY: credentials.apiKey,
    POLY_PASSPHRASE: credentials.passphrase,
  };
}

/** For the test stand-in of the CLOB: constant-time, so it does not leak how much of a guess matched. */
export function verifyL2Signature(
  secret: string,
  timestampSeconds: number,
  method: string,
  requestPath: string,
  body: string | undefined,
  signature: string,
): boolean {
  const expected = Buffer.from(l2Signature(secret, timestampSeconds, method, requestPath, body));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
