/**
 * Sign-in with a wallet (EIP-4361). A nonce is issued (`GET /api/auth/nonce`: 128 bits
 * from the CSPRNG, bound to the asking client's `pipo_nonce` cookie, see nonce-cookie.ts), the wallet
 * signs a message naming it, and `verifySignIn` checks the message field by field — this service's
 * scheme, domain and URI (PUBLIC_URL), the chain id (SIWE_CHAIN_ID), issued-at not in the future,
 * expiry and not-before, the nonce's cookie present — then the signature (ERC-1271 / ERC-6492 smart
 * wallets too when a chain RPC is configured, viem's verifySiweMessage; plain EOA recovery otherwise),
 * the wallet's sign-in limit, and last consumes the nonce with its binding in one conditional delete,
 * so a message works once, from the client that asked for its nonce, even when sent twice at once.
 * A wallet's first sign-in creates its own account (`acct_…`).
 */
import { and, eq, gt, lt, sql } from 'drizzle-orm';
import { getAddress, verifyMessage, type Hex, type PublicClient } from 'viem';
import { parseSiweMessage, verifySiweMessage } from 'viem/siwe';
import type { Db } from '../../db/client.ts';
import { accounts, accountWallets, authNonces } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import { newId } from '../lib/ids.ts';
import { randomToken, sessionTokenHash as sha256Hex } from './sessions.ts';

/** How long an issued nonce stays usable, and how far a message's issued-at may run ahead of our clock. */
const NONCE_TTL_MS = 10 * 60_000;
const CLOCK_SKEW_MS = 5 * 60_000;

/**
 * A nonce: 128 bits from the CSPRNG as 32 hex digits (EIP-4361: 8+ alphanumerics). Not viem's
 * generateSiweNonce, which slides a window over Math.random: each nonce predicted the next.
 */
export const newNonce = () => Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('hex');

/** A nonce and the binding for its client's cookie (stored only as SHA-256), with the asking address. */
export async function issueNonce(db: Db, clientIp: string, now = new Date()): Promise<{ nonce: string; binding: string; expiresAt: Date }> {
  const nonce = newNonce();
  const binding = randomToken();
  const expiresAt = new Date(now.getTime() + NONCE_TTL_MS);
  await db.insert(authNonces).values({ nonce, expiresAt, bindingHash: sha256Hex(binding), clientIp });
  // Expired nonces are swept as new ones are issued (bounded, cheap, no background job needed).
  await db.delete(authNonces).where(lt(authNonces.expiresAt, sql`now() - interval '1 hour'`));
  return { nonce, binding, expiresAt };
}

export interface SignInSettings {
  /** The service's own origin: the message's domain is its host, its URI must be on it. */
  publicUrl: string;
  chainId: number;
  /** With a chain client, smart-wallet signatures (ERC-1271/6492) verify too. */
  client?: PublicClient;
  now?: Date;
  /** Called once the signature proved the wallet, before the nonce is used: its sign-in limit (429). */
  admitWallet?: (address: string) => Promise<void>;
}

const refuse = (why: string) => new ApiError('UNAUTHORIZED', `Sign-in refused: ${why}`);

/** Checks a signed EIP-4361 message; answers the wallet and its account (created on its first sign-in). */
/** `binding`: the request's `pipo_nonce` cookie, which must be the one set with the message's nonce. */
export async function verifySignIn(db: Db, settings: SignInSettings, input: { message: string; signature: Hex; binding: string | null }) {
  const now = settings.now ?? new Date();
  const fields = parseSiweMessage(input.message);
  if (!fields.address || !fields.domain || !fields.uri || !fields.nonce || !fields.chainId || !fields.issuedAt || fields.version !== '1') {
    throw new ApiError('BAD_REQUEST', 'message: not an EIP-4361 message (domain, address, URI, version 1, chain ID, nonce and issued-at are required)');
  }
  // viem reads an unparseable date-time as an invalid Date: refused, never taken as "no limit".
  for (const [name, value] of [['Issued At', fields.issuedAt], ['Expiration Time', fields.expirationTime], ['Not Before', fields.notBefore]] as const) {
    if (value && Number.isNaN(value.getTime())) throw new ApiError('BAD_REQUEST', `message: ${name} is not an ISO 8601 date-time`);
  }
  const site = new URL(settings.publicUrl);
  // EIP-4361: a scheme, when the message names one, is the service's own (https, or http locally).
  const scheme = site.protocol.slice(0, -1);
  if (fields.scheme && fields.scheme.toLowerCase() !== scheme) throw refuse(`the message is for scheme ${fields.scheme}, not ${scheme}`);
  if (fields.domain !== site.host) throw refuse(`the message is for ${fields.domain}, not ${site.host}`);
  if (!sameOrigin(fields.uri, site.origin)) throw refuse(`the message's URI ${fields.uri} is not on ${site.origin}`);
  if (fields.chainId !== settings.chainId) throw refuse(`the message names chain ${fields.chainId}; sign in on chain ${settings.chainId}`);
  if (fields.issuedAt.getTime() > now.getTime() + CLOCK_SKEW_MS) throw refuse('the message is issued in the future');
  if (fields.expirationTime && fields.expirationTime.getTime() <= now.getTime()) throw refuse('the message has expired');
  if (fields.notBefore && fields.notBefore.getTime() > now.getTime()) throw refuse('the message is not valid yet (not-before)');
  if (!input.binding) throw refuse('no pipo_nonce cookie: send back the cookie GET /api/auth/nonce set with the nonce');

  const address = getAddress(fields.address);
  const valid = settings.client
    ? await verifySiweMessage(settings.client, { message: input.message, signature: input.signature, address }).catch(() => false)
    : await verifyMessage({ address, message: input.message, signature: input.signature }).catch(() => false);
  if (!valid) throw refuse(`the signature is not ${address}'s`);
  await settings.admitWallet?.(address);

  // Last, and atomically: a nonce that was issued to this client, is unexpired, and was not used before.
  const issued = and(eq(authNonces.nonce, fields.nonce), gt(authNonces.expiresAt, now));
  const [consumed] = await db
    .delete(authNonces)
    .where(and(issued, eq(authNonces.bindingHash, sha256Hex(input.binding))))
    .returning({ nonce: authNonces.nonce });
  if (!consumed) {
    // Only to name the reason (a refusal's extra read): the nonce stays usable by its own client.
    const [other] = await db.select({ nonce: authNonces.nonce }).from(authNonces).where(issued);
    if (other) throw refuse('the nonce was issued to another client: its pipo_nonce cookie is not this request\'s');
    throw refuse('the nonce is unknown, expired or already used; ask GET /api/auth/nonce for a new one');
  }

  const account = await accountOfWallet(db, address);
  return { address, ...account };
}

function sameOrigin(uri: string, origin: string) {
  try {
    return new URL(uri).origin === origin;
  } catch {
    return false;
  }
}

/** The wallet's account, created (with the wallet) on its first sign-in; two first sign-ins at once make one. */
async function accountOfWallet(db: Db, address: string): Promise<{ accountId: string; created: boolean }> {
  const wallet = address.toLowerCase();
  return db.transaction(async (tx) => {
    const [known] = await tx.select({ accountId: accountWallets.accountId }).from(accountWallets).where(eq(accountWallets.address, wallet));
    if (known) return { accountId: known.accountId, created: false };
    const accountId = newId('acct');
    const [claimed] = await tx.insert(accountWallets).values({ address: wallet, accountId }).onConflictDoNothing().returning({ accountId: accountWallets.accountId });
    if (!claimed) {
      const [other] = await tx.select({ accountId: accountWallets.accountId }).from(accountWallets).where(eq(accountWallets.address, wallet));
      return { accountId: other!.accountId, created: false };
    }
    await tx.insert(accounts).values({ id: accountId });
    return { accountId, created: true };
  });
}

export async function walletsOf(db: Db, accountId: string): Promise<string[]> {
  const rows = await db.select({ address: accountWallets.address }).from(accountWallets).where(eq(accountWallets.accountId, accountId)).orderBy(accountWallets.createdAt);
  return rows.map((r) => getAddress(r.address));
}
