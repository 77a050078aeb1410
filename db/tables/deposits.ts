/**
 * Stablecoin deposits: one row per ERC-20 Transfer log to the deposit address, unique per
 * (chain id, transaction hash, log index) whichever path saw it first (a claim or the watcher).
 * `accountId` is null while the sender is a wallet no account owns (unclaimed); the credit happens
 * once the block is final, in the same transaction that marks the row credited.
 */
import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

const micros = (name: string) => bigint(name, { mode: 'number' });
const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const deposits = pgTable(
  'deposits',
  {
    id: text('id').primaryKey(),
    chainId: integer('chain_id').notNull(),
    txHash: text('tx_hash').notNull(),
    logIndex: integer('log_index').notNull(),
    /** The token contract (lower case) and the transfer's sender and recipient. */
    token: text('token').notNull(),
    fromAddress: text('from_address').notNull(),
    toAddress: text('to_address').notNull(),
    amountMicros: micros('amount_micros').notNull(),
    blockNumber: bigint('block_number', { mode: 'number' }).notNull(),
    blockHash: text('block_hash').notNull(),
    /** Null while unclaimed (no account owns the sender). */
    accountId: text('account_id'),
    /** pending: seen, its block not final yet · credited · unclaimed (final, no owner yet) · dropped (a reorganisation removed it). */
    status: text('status', { enum: ['pending', 'credited', 'unclaimed', 'dropped'] }).notNull(),
    creditedAt: at('credited_at'),
    createdAt: at('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('deposits_log_idx').on(t.chainId, t.txHash, t.logIndex),
    index('deposits_account_idx').on(t.accountId, t.createdAt),
    index('deposits_from_idx').on(t.fromAddress),
    check('deposits_amount_positive', sql`${t.amountMicros} > 0`),
  ],
);

/** The watcher's progress per (chain, token): the last block scanned up to. */
export const depositScans = pgTable('deposit_scans', {
  id: text('id').primaryKey(),
  scannedThrough: bigint('scanned_through', { mode: 'number' }).notNull(),
  updatedAt: at('updated_at').notNull().defaultNow(),
});
