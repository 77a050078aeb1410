/**
 * The paper venue's own ledger: what a simulated exchange would hold for each venue account.
 * Kept in the database so that it survives restarts and can be reconciled against our records.
 * Collateral and shares only move through conditional writes (never below zero).
 *
 * A paper account belongs to one trading user, (account id, user id) (docs/decisions.md §8): the venue
 * credentials a user stores do not name it, so two tenants who store the same API key never share
 * one (migration 0013 moved the earlier per-API-key ledger to its owners).
 */
import { sql } from 'drizzle-orm';
import { bigint, check, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

const micros = (name: string) => bigint(name, { mode: 'number' });

export const paperAccounts = pgTable(
  'paper_accounts',
  {
    accountId: text('account_id').notNull(),
    userId: text('user_id').notNull(),
    collateralMicros: micros('collateral_micros').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.userId] }), check('paper_accounts_collateral_non_negative', sql`${t.collateralMicros} >= 0`)],
);

export const paperHoldings = pgTable(
  'paper_holdings',
  {
    accountId: text('account_id').notNull(),
    userId: text('user_id').notNull(),
    tokenId: text('token_id').notNull(),
    sharesMicros: micros('shares_micros').notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.userId, t.tokenId] }), check('paper_holdings_non_negative', sql`${t.sharesMicros} >= 0`)],
);

export const paperOrders = pgTable(
  'paper_orders',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull(),
    userId: text('user_id').notNull(),
    /** The caller's id for the order: placing the same one twice returns the first result. */
    clientOrderId: text('client_order_id').notNull(),
    tokenId: text('token_id').notNull(),
    side: text('side', { enum: ['BUY', 'SELL'] }).notNull(),
    requestedMicros: micros('requested_micros').notNull(),
    filledMicros: micros('filled_micros').notNull(),
    /** USD paid (BUY) or received (SELL) for the filled shares. */
    notionalMicros: micros('notional_micros').notNull(),
    status: text('status', { enum: ['PENDING', 'MATCHED', 'CANCELLED', 'REJECTED'] }).notNull(),
    reason: text('reason'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('paper_orders_client_idx').on(t.accountId, t.userId, t.clientOrderId)],
);

/**
 * Payouts of settled positions (server/trading/settlement.ts), one per settlement id: paying a
 * settlement twice (a retry, two instances) finds this row and moves nothing.
 */
export const paperPayouts = pgTable(
  'paper_payouts',
  {
    accountId: text('account_id').notNull(),
    userId: text('user_id').notNull(),
    settlementId: text('settlement_id').notNull(),
    amountMicros: micros('amount_micros').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.userId, t.settlementId] })],
);
