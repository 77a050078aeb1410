/**
 * Sign-in with an injected EIP-1193 wallet (MetaMask, Rabby, Coinbase Wallet, …): the account, a
 * nonce from the service, the EIP-4361 message built by viem, the wallet's personal_sign, and the
 * service's verify (which sets the session cookie).
 */
import { createSiweMessage } from 'viem/siwe';
import { api } from './trpc.ts';

interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

declare global {
  interface Window {
    ethereum?: Eip1193Provider;
  }
}

export const SIGN_IN_STATEMENT = 'Sign in to Pre-IPO API';

export function hasWallet(): boolean {
  return typeof window !== 'undefined' && typeof window.ethereum?.request === 'function';
}

/** A wallet's refusal in words (EIP-1193 error codes). */
export class WalletError extends Error {
  override name = 'WalletError';
}

function walletError(error: unknown): WalletError {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 4001) return new WalletError('You declined the request in your wallet.');
  if (code === -32002) return new WalletError('Your wallet already has a request open: finish or close it there, then try again.');
  if (code === 4100) return new WalletError('Your wallet did not authorise this site: unlock it and allow the connection.');
  const message = (error as { message?: unknown } | null)?.message;
  return new WalletError(`Your wallet refused: ${typeof message === 'string' && message ? message : 'unknown error'}`);
}

async function walletRequest<T>(provider: Eip1193Provider, method: string, params?: unknown[]): Promise<T> {
  try {
    return (await provider.request({ method, params })) as T;
  } catch (error) {
    throw walletError(error);
  }
}

/** UTF-8 text → 0x hex, the form EIP-1193 personal_sign documents for its message. */
export function utf8ToHex(text: string): `0x${string}` {
  let hex = '0x';
  for (const byte of new TextEncoder().encode(text)) hex += byte.toString(16).padStart(2, '0');
  return hex as `0x${string}`;
}

/** The whole sign-in; resolves once the session cookie is set. Throws WalletError or a tRPC error. */
export async function signInWithWallet(): Promise<{ accountId: string; address: string; created: boolean }> {
  const provider = window.ethereum;
  if (!provider || typeof provider.request !== 'function') throw new WalletError('No wallet found in this browser.');
  const accounts = await walletRequest<string[]>(provider, 'eth_requestAccounts');
  const address = accounts?.[0];
  if (!address || !/^0x[0-9a-fA-F]{40}$/.test(address)) throw new WalletError('Your wallet shared no account: unlock it and choose an account.');
  const nonce = await api.auth.nonce.query();
  const message = createSiweMessage({
    address: address as `0x${string}`,
    chainId: nonce.chainId,
    domain: nonce.domain,
    uri: nonce.uri,
    nonce: nonce.nonce,
    version: nonce.version,
    issuedAt: new Date(),
    statement: SIGN_IN_STATEMENT,
  });
  const signature = await walletRequest<string>(provider, 'personal_sign', [utf8ToHex(message), address]);
  if (typeof signature !== 'string' || !/^0x[0-9a-fA-F]+$/.test(signature)) throw new WalletError('Your wallet returned no signature.');
  return api.auth.verify.mutate({ message, signature });
}
