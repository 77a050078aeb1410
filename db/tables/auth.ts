/**
 * Customers signing in with a wallet (EIP-4361): the wallets an account owns, one-time
 * sign-in nonces and browser sessions. Session tokens are stored only as SHA-256 hex.
 */
import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** A wallet belongs to one account: its first sign-in created that account. Addresses in lower case. */
export const accountWallets = pgTable(
  'account_wallets',
  {
    address: text('address').primaryKey(),
    accountId: text('account_id').notNull(),
    createdAt: at('created_at').notNull().defaultNow(),
  },
  (t) => [index('account_wallets_account_idx').on(t.accountId)],
);

/** A nonce works once: verification deletes it (a conditional delete), and it expires unused. */
export const authNonces = pgTable('auth_nonces', {
  nonce: text('nonce').primaryKey(),
  expiresAt: at('expires_at').notNull(),
  /** SHA-256 hex of the client binding (a cookie set with the nonce); only that client can use the nonce. */
  bindingHash: text('binding_hash'),
  /** The client address that asked for it (limits per address; never a secret). */
  clientIp: text('client_ip'),
});

export const authSessions = pgTable(
  'auth_sessions',
  {
    /** SHA-256 hex of the cookie's token. */
    tokenHash: text('token_hash').primaryKey(),
    accountId: text('account_id').notNull(),
    /** The wallet that signed in (lower case). */
    address: text('address').notNull(),
    createdAt: at('created_at').notNull().defaultNow(),
    expiresAt: at('expires_at').notNull(),
    revokedAt: at('revoked_at'),
  },
  (t) => [index('auth_sessions_account_idx').on(t.accountId), index('auth_sessions_account_live_idx').on(t.accountId, t.createdAt)],
);
