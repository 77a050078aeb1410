/**
 * Trading users and their venue credentials. A trading user is (account, x-user-id): the same
 * x-user-id under another account is another user (docs/decisions.md §1).
 */
import { doublePrecision, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

const timestamps = {
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
};

/** Settings of a user who changed them; a user without a row has the defaults. */
export const tradingSettings = pgTable(
  'trading_settings',
  {
    accountId: text('account_id').notNull(),
    userId: text('user_id').notNull(),
    floorL: doublePrecision('floor_l'),
    floorS: doublePrecision('floor_s'),
    walletAddress: text('wallet_address'),
    ...timestamps,
  },
  (t) => [primaryKey({ columns: [t.accountId, t.userId] })],
);

/**
 * Venue credentials, AES-256-GCM encrypted (server/lib/credential-cipher.ts). `keyId` names the
 * TRADING_ENCRYPTION_KEY that sealed them, so keys can be rotated row by row.
 */
export const venueCredentials = pgTable(
  'venue_credentials',
  {
    accountId: text('account_id').notNull(),
    userId: text('user_id').notNull(),
    keyId: text('key_id').notNull(),
    /** base64 of the 12-byte IV, and of ciphertext ‖ 16-byte tag. */
    iv: text('iv').notNull(),
    ciphertext: text('ciphertext').notNull(),
    /** Live venue: the address of the session key (sealed with the credentials) that signs orders. */
    signerAddress: text('signer_address'),
    ...timestamps,
  },
  (t) => [primaryKey({ columns: [t.accountId, t.userId] })],
);
