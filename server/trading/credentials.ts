/**
 * Venue credentials of a user: checked with the venue, sealed (credential-cipher.ts), stored. The
 * only function that returns them decrypted is `openCredentials`, for calling the venue; nothing that
 * builds a response or a log line selects the sealed columns.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import type { Db } from '../../db/client.ts';
import { prepared } from '../../db/prepared.ts';
import { venueCredentials } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import type { Venue, VenueCredentials } from '../venues/venue.ts';
import type { CredentialCipher } from '../lib/credential-cipher.ts';
import { getSettings, type Settings, type TradingUser } from './settings.ts';

const whereUser = (u: TradingUser) => and(eq(venueCredentials.accountId, u.accountId), eq(venueCredentials.userId, u.userId));

/**
 * Refused by the venue → INVALID_CREDENTIALS and nothing is stored. On a venue that signs with
 * session keys, the user's key is generated once and kept across credential changes (the user
 * authorises its address on their wallet once); it is sealed together with the credentials.
 */
export async function storeCredentials(db: Db, venue: Venue, cipher: CredentialCipher, user: TradingUser, credentials: VenueCredentials) {
  let sessionKey: Hex | undefined;
  if (venue.usesSessionKeys) {
    const existing = await readSealed(db, user);
    sessionKey = (existing && tryOpen(cipher, existing, user)?.sessionKey) || generatePrivateKey();
  }
  const walletAddress = (await getSettings(db, user)).walletAddress;
  await venue.checkCredentials({ ...credentials, sessionKey, walletAddress });
  const sealed = cipher.seal({ ...credentials, ...(sessionKey ? { sessionKey } : {}) }, user.accountId, user.userId);
  const signerAddress = sessionKey ? privateKeyToAddress(sessionKey) : null;
  await db
    .insert(venueCredentials)
    .values({ ...user, ...sealed, signerAddress })
    .onConflictDoUpdate({ target: [venueCredentials.accountId, venueCredentials.userId], set: { ...sealed, signerAddress, updatedAt: sql`now()` } });
}

/** Whether credentials are stored, and the address that signs this user's orders (live venue only). */
export async function credentialStatus(db: Db, user: TradingUser): Promise<{ hasCredentials: boolean; signerAddress: string | null }> {
  const [row] = await db.select({ signerAddress: venueCredentials.signerAddress }).from(venueCredentials).where(whereUser(user));
  return { hasCredentials: row !== undefined, signerAddress: row?.signerAddress ?? null };
}

async function readSealed(db: Db, user: TradingUser) {
  // Prepared: every buy and sale opens the credentials.
  const statement = prepared(db, 'sealed_credentials_of', (d) =>
    d
      .select({ keyId: venueCredentials.keyId, iv: venueCredentials.iv, ciphertext: venueCredentials.ciphertext })
      .from(venueCredentials)
      .where(and(eq(venueCredentials.accountId, sql.placeholder('accountId')), eq(venueCredentials.userId, sql.placeholder('userId'))))
      .prepare('sealed_credentials_of'),
  );
  const [row] = await statement.execute({ accountId: user.accountId, userId: user.userId });
  return row;
}

function tryOpen(cipher: CredentialCipher, sealed: NonNullable<Awaited<ReturnType<typeof readSealed>>>, user: TradingUser) {
  try {
    return cipher.open<VenueCredentials>(sealed, user.accountId, user.userId);
  } catch {
    return undefined;
  }
}

/** Idempotent: deleting nothing is fine. Returns whether something was deleted. */
export async function deleteCredentials(db: Db, user: TradingUser): Promise<boolean> {
  const deleted = await db.delete(venueCredentials).where(whereUser(user)).returning({ userId: venueCredentials.userId });
  return deleted.length > 0;
}

/**
 * Decrypted credentials for a venue call, with the user's wallet from the settings and the user as
 * their owner (the paper venue's account); INVALID_CREDENTIALS when none are stored or they cannot
 * be opened. A caller that has just read the settings passes them (one round trip fewer).
 */
export async function openCredentials(db: Db, cipher: CredentialCipher, user: TradingUser, knownSettings?: Settings): Promise<VenueCredentials> {
  const [sealed, settings] = await Promise.all([readSealed(db, user), knownSettings ?? getSettings(db, user)]);
  if (!sealed) throw new ApiError('INVALID_CREDENTIALS', 'No venue credentials stored: POST /api/trading/credentials first');
  const owner = { accountId: user.accountId, userId: user.userId };
  return { ...cipher.open<VenueCredentials>(sealed, user.accountId, user.userId), walletAddress: settings.walletAddress, owner };
}

/**
 * Re-seals every row under the current key (after a rotation). A row that cannot be opened (tampered,
 * or sealed with a key no longer configured) is left as it is and reported: its owner must store
 * credentials again.
 */
export async function reencryptAllCredentials(db: Db, cipher: CredentialCipher) {
  const rows = await db.select().from(venueCredentials);
  let reencrypted = 0;
  const unreadable: TradingUser[] = [];
  for (const row of rows) {
    if (row.keyId === cipher.currentKeyId) continue;
    let credentials: VenueCredentials;
    try {
      credentials = cipher.open<VenueCredentials>(row, row.accountId, row.userId);
    } catch {
      unreadable.push({ accountId: row.accountId, userId: row.userId });
      continue;
    }
    const sealed = cipher.seal(credentials, row.accountId, row.userId);
    await db
      .update(venueCredentials)
      .set({ ...sealed, updatedAt: sql`now()` })
      .where(and(eq(venueCredentials.accountId, row.accountId), eq(venueCredentials.userId, row.userId), eq(venueCredentials.keyId, row.keyId)));
    reencrypted++;
  }
  return { reencrypted, unreadable };
}
