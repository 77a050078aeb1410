/**
 * Venue credentials of a user: checked with the venue, sealed (credential-cipher.ts), stored. The
 * only function that returns them decrypted is `openCredentials`, for calling the venue; nothing that
 * builds a response or a log line selects the sealed columns.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { venueCredentials } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import type { Venue, VenueCredentials } from '../venues/venue.ts';
import type { CredentialCipher } from './credential-cipher.ts';
import type { TradingUser } from './settings.ts';

const whereUser = (u: TradingUser) => and(eq(venueCredentials.accountId, u.accountId), eq(venueCredentials.userId, u.userId));

export async function hasCredentials(db: Db, user: TradingUser): Promise<boolean> {
  const [row] = await db.select({ one: sql`1` }).from(venueCredentials).where(whereUser(user)).limit(1);
  return row !== undefined;
}

/** Refused by the venue → INVALID_CREDENTIALS and nothing is stored. */
export async function storeCredentials(db: Db, venue: Venue, cipher: CredentialCipher, user: TradingUser, credentials: VenueCredentials) {
  await venue.checkCredentials(credentials);
  const sealed = cipher.seal(credentials, user.accountId, user.userId);
  await db
    .insert(venueCredentials)
    .values({ ...user, ...sealed })
    .onConflictDoUpdate({ target: [venueCredentials.accountId, venueCredentials.userId], set: { ...sealed, updatedAt: sql`now()` } });
}

/** Idempotent: deleting nothing is fine. Returns whether something was deleted. */
export async function deleteCredentials(db: Db, user: TradingUser): Promise<boolean> {
  const deleted = await db.delete(venueCredentials).where(whereUser(user)).returning({ userId: venueCredentials.userId });
  return deleted.length > 0;
}

/** Decrypted credentials for a venue call; INVALID_CREDENTIALS when none are stored or they cannot be opened. */
export async function openCredentials(db: Db, cipher: CredentialCipher, user: TradingUser): Promise<VenueCredentials> {
  const [row] = await db
    .select({ keyId: venueCredentials.keyId, iv: venueCredentials.iv, ciphertext: venueCredentials.ciphertext })
    .from(venueCredentials)
    .where(whereUser(user));
  if (!row) throw new ApiError('INVALID_CREDENTIALS', 'No venue credentials stored: POST /api/trading/credentials first');
  return cipher.open(row, user.accountId, user.userId);
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
      credentials = cipher.open(row, row.accountId, row.userId);
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
