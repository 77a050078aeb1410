/**
 * Sign-in with a wallet (EIP-4361, issue #17). A nonce is issued (`GET /api/auth/nonce`), the wallet
 * signs a message naming it, and `verifySignIn` checks the message field by field — this service's
 * domain and URI (PUBLIC_URL), the chain id (SIWE_CHAIN_ID), issued-at not in the future, expiry and
 * not-before, the nonce — then the signature (ERC-1271 / ERC-6492 smart wallets too when a chain RPC is
 * configured, viem's verifySiweMessage; plain EOA recovery otherwise), and last consumes the nonce in
 * one conditional delete, so a message works once even when sent twice at the same moment.
 * A wallet's first sign-in creates its own account (`acct_…`).
 */
import { and, eq, gt, lt, sql } from 'drizzle-orm';
import { getAddress, verifyMessage, type Hex, type PublicClient } from 'viem';
import { generateSiweNonce, parseSiweMessage, verifySiweMessage } from 'viem/siwe';
import type { Db } from '../../db/client.ts';
import { accounts, accountWallets, authNonces } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import { newId } from '../lib/ids.ts';

/** How long an issued nonce stays usable, and how far a message's issued-at may run ahead of our clock. */
const NONCE_TTL_MS = 10 * 60_000;
const CLOCK_SKEW_MS = 5 * 60_000;

export async function issueNonce(db: Db, now = new Date()): Promise<{ nonce: string; expiresAt: Date }> {
  const nonce = generateSiweNonce();
  const expiresAt = new Date(now.getTime() + NONCE_TTL_MS);
  await db.insert(authNonces).values({ nonce, expiresAt });
  // Expired nonces are swept as new ones are issued (bounded, cheap, no background job needed).
  await db.delete(authNonces).where(lt(authNonces.expiresAt, sql`now() - interval '1 hour'`));
  return { nonce, expiresAt };
}

export interface SignInSettings {
  /** The service's own origin: the message's domain is its host, its URI must be on it. */
  publicUrl: string;
  chainId: number;
  /** With a chain client, smart-wallet signatures (ERC-1271/6492) verify too. */
  client?: PublicClient;
  now?: Date;
}

const refuse = (why: string) => new ApiError('UNAUTHORIZED', `Sign-in refused: ${why}`);

/** Checks a signed EIP-4361 message; answers the wallet and its account (created on its first sign-in). */
export async function verifySignIn(db: Db, settings: SignInSettings, input: { message: string; signature: Hex }) {
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
  if (fields.domain !== site.host) throw refuse(`the message is for ${fields.domain}, not ${site.host}`);
  if (!sameOrigin(fields.uri, site.origin)) throw refuse(`the message's URI ${fields.uri} is not on ${site.origin}`);
  if (fields.chainId !== settings.chainId) throw refuse(`the message names chain ${fields.chainId}; sign in on chain ${settings.chainId}`);
  if (fields.issuedAt.getTime() > now.getTime() + CLOCK_SKEW_MS) throw refuse('the message is issued in the future');
  if (fields.expirationTime && fields.expirationTime.getTime() <= now.getTime()) throw refuse('the message has expired');
  if (fields.notBefore && fields.notBefore.getTime() > now.getTime()) throw refuse('the message is not valid yet (not-before)');

  const address = getAddress(fields.address);
  const valid = settings.client
    ? await verifySiweMessage(settings.client, { message: input.message, signature: input.signature, address }).catch(() => false)
    : await verifyMessage({ address, message: input.message, signature: input.signature }).catch(() => false);
  if (!valid) throw refuse(`the signature is not ${address}'s`);

  // Last, and atomically: a nonce that was issued, is unexpired, and was not used before.
  const [consumed] = await db
    .delete(authNonces)
    .where(and(eq(authNonces.nonce, fields.nonce), gt(authNonces.expiresAt, now)))
    .returning({ nonce: authNonces.nonce });
  if (!consumed) throw refuse('the nonce is unknown, expired or already used; ask GET /api/auth/nonce for a new one');

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
