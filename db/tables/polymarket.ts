/**
 * The Polymarket adapter's own record of the orders it signed. The CLOB has no client order ids: an
 * order's id is the hash of the signed order. The signed order is stored before it is posted, so a
 * retried placement re-posts the same bytes (the CLOB recognises the hash), and our client order id
 * always finds the venue's order.
 */
import { bigint, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

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
