/**
 * The Polymarket adapter's own record of the orders it signed. The CLOB has no client order ids: an
 * order's id is the hash of the signed order. The signed order is stored before it is posted, so a
 * retried placement re-posts the same bytes (the CLOB recognises the hash), and our client order id
 * always finds the venue's order.
 */
import { bigint, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

export const polymarketOrders = pgTable(
  'polymarket_orders',
  {
    /** Our order id (ord_…). */
    clientOrderId: text('client_order_id').primaryKey(),
    /** The venue API key that placed it (orders are per venue account). */
    apiKey: text('api_key').notNull(),
    /** The CLOB's orderID: the EIP-712 hash of the signed order. Null for a cancelled-before-sent tombstone. */
    orderHash: text('order_hash'),
    tokenId: text('token_id').notNull(),
    side: text('side', { enum: ['BUY', 'SELL'] }).notNull(),
    requestedMicros: bigint('requested_micros', { mode: 'number' }).notNull(),
    orderType: text('order_type', { enum: ['FOK', 'FAK'] }).notNull(),
    /** The wire order ({salt, maker, signer, …, signature}); public data, no secret in it. */
    signedOrder: jsonb('signed_order'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('polymarket_orders_hash_idx').on(t.orderHash)],
);

/**
 * A settlement's redemption on chain (server/venues/polymarket/redeemer.ts): written before the batch
 * is signed, so a crash at any point leaves enough to finish it without paying twice — the block to
 * search from, the wallet nonce the batch used, the relayer's transaction id once it answered.
 */
export const polymarketRedemptions = pgTable(
  'polymarket_redemptions',
  {
    settlementId: text('settlement_id').primaryKey(),
    accountId: text('account_id').notNull(),
    userId: text('user_id').notNull(),
    /** The deposit wallet holding the tokens (lower case). */
    wallet: text('wallet').notNull(),
    /** The conditions redeemed and the Yes tokens that pay, decimal uint256. */
    conditionIds: jsonb('condition_ids').$type<string[]>().notNull(),
    tokenIds: jsonb('token_ids').$type<string[]>().notNull(),
    /** The chain's height when the intent was written: a redemption of ours is in a later block. */
    fromBlock: bigint('from_block', { mode: 'number' }).notNull(),
    /** pending (nothing in flight) · submitted (the relayer has it) · confirmed (txHash). */
    state: text('state', { enum: ['pending', 'submitted', 'confirmed'] }).notNull(),
    relayerTxId: text('relayer_tx_id'),
    /** The wallet nonce the last signed batch used (only one batch per nonce can ever execute). */
    nonce: text('nonce'),
    txHash: text('tx_hash'),
    attempts: integer('attempts').notNull().default(0),
    error: text('error'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('polymarket_redemptions_wallet_idx').on(t.wallet)],
);
