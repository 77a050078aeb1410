/**
 * A customer signing in with a wallet, as a browser or a script would: GET /api/auth/nonce (keeping
 * the `pipo_nonce` cookie it sets), an EIP-4361 message built with viem's createSiweMessage and signed
 * by the wallet, POST /api/auth/verify with that cookie. Answers the session cookie to send back, and
 * an Origin the service trusts (for requests that change something). Each sign-in comes from a client
 * of its own (a random 10.x.y.z address), so suites that sign in many times stay within the per-IP
 * sign-in limits, as many customers would.
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

/** A client as the service sees it: its address, and the nonce cookie it was given (as a browser keeps it). */
export interface Client {
  ip: string;
  nonceCookie: string | null;
}

const byte = () => Math.floor(Math.random() * 250) + 1;
export const newClient = (ip = `10.${byte()}.${byte()}.${byte()}`): Client => ({ ip, nonceCookie: null });

/** `name=value` of a cookie the response sets, or null. */
export function cookieSet(res: Response, name: string): string | null {
  return res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`))?.split(';')[0] ?? null;
}

/** Which client asked for each message's nonce: verify sends from it unless told otherwise. */
const askedBy = new Map<string, Client>();

/** The message a wallet would sign, from a fresh nonce (fields overridable to test refusals). */
export async function signInMessage(t: TestApp, wallet: PrivateKeyAccount, overrides: Record<string, unknown> = {}, client: Client = newClient()) {
  const res = await t.request('/api/auth/nonce', { clientIp: client.ip });
  client.nonceCookie = cookieSet(res, 'pipo_nonce');
  const nonce = await res.json();
  const message = createSiweMessage({
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
  askedBy.set(message, client);
  return message;
}

/** POST /api/auth/verify from `client`: by default the one that asked for the message's nonce, with its cookie. */
export async function verify(t: TestApp, message: string, signature: string, client: Client = askedBy.get(message) ?? newClient()) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (client.nonceCookie) headers.cookie = client.nonceCookie;
  return t.request('/api/auth/verify', { method: 'POST', headers, clientIp: client.ip, body: JSON.stringify({ message, signature }) });
}

export async function signIn(t: TestApp, wallet: PrivateKeyAccount = privateKeyToAccount(generatePrivateKey()), client?: Client): Promise<SignedIn> {
  const message = await signInMessage(t, wallet, {}, client);
  const res = await verify(t, message, await wallet.signMessage({ message }));
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  const body = await res.json();
  const cookie = cookieSet(res, 'pipo_session')!;
  const origin = t.services.config.auth.publicUrl;
  return { wallet, accountId: body.accountId, cookie, origin, headers: { cookie, origin } };
}
