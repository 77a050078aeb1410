/**
 * A customer signing in with a wallet, as a browser or a script would: GET /api/auth/nonce, an
 * EIP-4361 message built with viem's createSiweMessage and signed by the wallet, POST /api/auth/verify.
 * Answers the session cookie to send back, and an Origin the service trusts (for requests that change
 * something).
 */
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import type { TestApp } from './app.ts';

export interface SignedIn {
  wallet: PrivateKeyAccount;
  accountId: string;
  cookie: string;
  /** Headers for a session request that changes something: the cookie and a trusted Origin. */
  headers: Record<string, string>;
  origin: string;
}

/** The message a wallet would sign, from a fresh nonce (fields overridable to test refusals). */
export async function signInMessage(t: TestApp, wallet: PrivateKeyAccount, overrides: Record<string, unknown> = {}) {
  const nonce = await (await t.request('/api/auth/nonce')).json();
  return createSiweMessage({
    address: wallet.address,
    chainId: nonce.chainId,
    domain: nonce.domain,
    nonce: nonce.nonce,
    uri: nonce.uri,
    version: '1',
    issuedAt: new Date(),
    statement: 'Sign in to Pre-IPO API',
    ...overrides,
  } as Parameters<typeof createSiweMessage>[0]);
}

export async function verify(t: TestApp, message: string, signature: string) {
  return t.request('/api/auth/verify', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message, signature }) });
}

export async function signIn(t: TestApp, wallet: PrivateKeyAccount = privateKeyToAccount(generatePrivateKey())): Promise<SignedIn> {
  const message = await signInMessage(t, wallet);
  const res = await verify(t, message, await wallet.signMessage({ message }));
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  const body = await res.json();
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  const origin = t.services.config.auth.publicUrl;
  return { wallet, accountId: body.accountId, cookie, origin, headers: { cookie, origin } };
}
