/**
 * Positions, their band holdings, the orders sent to the venue and the trades (fills) they produced
 * (docs/api.md "Position", "Order", "Trade"; docs/decisions.md §7). Every row carries (account, user): every
 * query filters by both. Money and shares are integer micro-units.
 *
 * The write order is what makes faults harmless: a buy or sell writes its orders (PENDING) before the
 * venue is called; an order's outcome is applied once, by the one update that moves it out of
 * PENDING, in the same transaction as its trade and the position's holdings.
 */
import { sql } from 'drizzle-orm';
import { bigint, boolean, check, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

const micros = (name: string) => bigint(name, { mode: 'number' });
const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const POSITION_STATUSES = ['pending', 'open', 'closed', 'settled'] as const;
export type PositionStatus = (typeof POSITION_STATUSES)[number];

export const positions = pgTable(
  'positions',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull(),
    userId: text('user_id').notNull(),
    eventId: text('event_id').notNull(),
    side: text('side', { enum: ['LONG', 'SHORT'] }).notNull(),
    /** The floors the position was sized with. */
    floorL: doublePrecision('floor_l').notNull(),
    floorS: doublePrecision('floor_s').notNull(),
    /** pending: buy orders outstanding; open: holds shares; closed: holds nothing; settled: paid out at its event's resolution. */
    status: text('status', { enum: POSITION_STATUSES }).notNull(),
    /** Units (U) the buy was sized for, in micro-units. */
    unitsMicros: micros('units_micros').notNull(),
    /** Set when some band of the buy was not filled: the position is unwound (its fills sold back). */
    buyFailed: boolean('buy_failed').notNull().default(false),
    /** Why the buy failed, from the venue (`no-liquidity`, `insufficient-balance`, …). */
    failureReason: text('failure_reason'),
    /** Why a position was closed other than by selling (e.g. `tokens-gone` from positions/sync). */
    closeReason: text('close_reason'),
    createdAt: at('created_at').notNull().defaultNow(),
    updatedAt: at('updated_at').notNull().defaultNow(),
    closedAt: at('closed_at'),
  },
  (t) => [
    index('positions_user_idx').on(t.accountId, t.userId, t.createdAt),
    // The holders of an event (settlement, event.resolved), without reading every position.
    index('positions_event_holding_idx').on(t.eventId, t.accountId, t.userId).where(sql`${t.status} in ('open', 'pending')`),
  ],
);

/**
 * A position's holding of one venue token. `reserved` shares are in PENDING sell orders. On a band
 * event the token is a band's (bandIndex its index, bandId its id); on a ladder it is a threshold's
 * Yes or No (bandId `<band id>:yes|no`, bandIndex the token's index: valuation/ladder.ts).
 */
export const positionBands = pgTable(
  'position_bands',
  {
    positionId: text('position_id')
      .notNull()
      .references(() => positions.id),
    bandIndex: integer('band_index').notNull(),
    bandId: text('band_id').notNull(),
    /** Shares the buy asked for (w·U rounded to the venue step). */
    targetMicros: micros('target_micros').notNull(),
    /** Shares the buy received. */
    boughtMicros: micros('bought_micros').notNull().default(0),
    /** What the buy paid for them, fees included. */
    entryCostMicros: micros('entry_cost_micros').notNull().default(0),
    /** Shares held now. */
    sharesMicros: micros('shares_micros').notNull().default(0),
    reservedMicros: micros('reserved_micros').notNull().default(0),
    /** Cost basis of the shares held now (shrinks in proportion as shares are sold). */
    costMicros: micros('cost_micros').notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.positionId, t.bandIndex] }),
    check('position_bands_shares_non_negative', sql`${t.sharesMicros} >= 0 AND ${t.costMicros} >= 0`),
    check('position_bands_reserved_within_shares', sql`${t.reservedMicros} >= 0 AND ${t.reservedMicros} <= ${t.sharesMicros}`),
  ],
);

export const ORDER_STATUSES = ['PENDING', 'MATCHED', 'CANCELLED', 'REJECTED'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
/** open: part of a buy; close: part of a sell; unwind: selling back the fills of a failed buy. */
export type OrderPurpose = 'open' | 'close' | 'unwind';

export const orders = pgTable(
  'orders',
  {
    /** Also the client order id sent to the venue, so a repeated placement is the same order. */
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull(),
    userId: text('user_id').notNull(),
    positionId: text('position_id')
      .notNull()
      .references(() => positions.id),
    /** The buy, sell or unwind this order belongs to. */
    operationId: text('operation_id').notNull(),
    purpose: text('purpose', { enum: ['open', 'close', 'unwind'] }).notNull(),
    bandIndex: integer('band_index').notNull(),
    bandId: text('band_id').notNull(),
    side: text('side', { enum: ['BUY', 'SELL'] }).notNull(),
    /** Worst acceptable price, micro-USD per share. */
    limitPriceMicros: micros('limit_price_micros').notNull(),
    requestedMicros: micros('requested_micros').notNull(),
    filledMicros: micros('filled_micros').notNull().default(0),
    /** USD paid (BUY) or received (SELL) for the filled shares, before fees. */
    notionalMicros: micros('notional_micros').notNull().default(0),
    feesMicros: micros('fees_micros').notNull().default(0),
    status: text('status', { enum: ORDER_STATUSES }).notNull(),
    reason: text('reason'),
    venueOrderId: text('venue_order_id'),
    txHash: text('tx_hash'),
    createdAt: at('created_at').notNull().defaultNow(),
    updatedAt: at('updated_at').notNull().defaultNow(),
    matchedAt: at('matched_at'),
  },
  (t) => [
    index('orders_user_idx').on(t.accountId, t.userId, t.createdAt),
    index('orders_position_idx').on(t.positionId),
    index('orders_pending_idx')
      .on(t.accountId, t.userId)
      .where(sql`${t.status} = 'PENDING'`),
  ],
);

/** One per order that filled anything: what changed hands, at what price, and the P&L it realised. */
export const trades = pgTable(
  'trades',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull(),
    userId: text('user_id').notNull(),
    positionId: text('position_id').notNull(),
    eventId: text('event_id').notNull(),
    orderId: text('order_id').notNull(),
    bandId: text('band_id').notNull(),
    side: text('side', { enum: ['LONG', 'SHORT'] }).notNull(),
    /** SETTLE: the position's payout at its event's resolution (orderId is then the settlement id). */
    action: text('action', { enum: ['BUY', 'SELL', 'SETTLE'] }).notNull(),
    sharesMicros: micros('shares_micros').notNull(),
    /** USD paid or received, before fees. */
    amountMicros: micros('amount_micros').notNull(),
    feesMicros: micros('fees_micros').notNull(),
    /** Proceeds net of fees minus the cost basis released (0 for buys). */
    realizedPnlMicros: micros('realized_pnl_micros').notNull(),
    createdAt: at('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('trades_order_idx').on(t.orderId),
    index('trades_user_idx').on(t.accountId, t.userId, t.createdAt),
    // Realised P&L per position (the position list and detail): that position's trades only, on the
    // same (account, user) filter every trading query carries.
    index('trades_user_position_idx').on(t.accountId, t.userId, t.positionId),
  ],
);

/**
 * Idempotency-Key records for buy and sell (docs/decisions.md §7): the first response is kept for 24 h and
 * replayed. A `running` row whose lease ran out belongs to a process that died mid-request.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    accountId: text('account_id').notNull(),
    userId: text('user_id').notNull(),
    key: text('key').notNull(),
    /** SHA-256 of the operation and its canonical input. */
    requestHash: text('request_hash').notNull(),
    /** running: being executed (by `owner`, until `leaseUntil`); unsettled: reached the venue but an outcome is unknown; done: `response` is final. */
    state: text('state', { enum: ['running', 'unsettled', 'done'] }).notNull(),
    /** A random token of the attempt that holds the key; every write by an attempt checks it. */
    owner: text('owner').notNull().default(''),
    responseStatus: integer('response_status'),
    response: jsonb('response'),
    /** The position the request created or changed, once it sent anything to the venue. */
    positionId: text('position_id'),
    /** The buy or sell (orders.operation_id) the request started. */
    operationId: text('operation_id'),
    leaseUntil: at('lease_until').notNull(),
    createdAt: at('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.userId, t.key] }), index('idempotency_keys_created_idx').on(t.createdAt)],
);

/**
 * One per settled position (unique): the settlement intent, written in the same transaction that
 * moves the position to `settled` and records its SETTLE trade. The venue is paid afterwards, keyed
 * by this row's id (the paper ledger's paper_payouts; a live venue's redemption), and `paidAt` /
 * `txHash` are recorded once it is: a crash in between leaves `paidAt` null, and the next settlement
 * run pays it, once.
 */
export const settlements = pgTable(
  'settlements',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull(),
    userId: text('user_id').notNull(),
    positionId: text('position_id')
      .notNull()
      .references(() => positions.id),
    eventId: text('event_id').notNull(),
    side: text('side', { enum: ['LONG', 'SHORT'] }).notNull(),
    /** resolved: the winning band's shares pay $1; voided: every band's shares pay $0.50. */
    outcome: text('outcome', { enum: ['resolved', 'voided'] }).notNull(),
    /** Null when the event was voided. */
    winningBandIndex: integer('winning_band_index'),
    winningBandId: text('winning_band_id'),
    /** Units the position held when it settled. */
    unitsMicros: micros('units_micros').notNull(),
    /** Shares of the winning band held (each pays $1); 0 when voided. */
    winningSharesMicros: micros('winning_shares_micros').notNull(),
    proceedsMicros: micros('proceeds_micros').notNull(),
    /** Cost basis the position still carried. */
    costMicros: micros('cost_micros').notNull(),
    realizedPnlMicros: micros('realized_pnl_micros').notNull(),
    /**
     * Every token the position held (winners redeemed, losers worthless): what the venue takes back.
     * `pays`: the token pays out (absent on rows written before ladders traded: the winning band's did).
     */
    holdings: jsonb('holdings').$type<{ tokenId: string; sharesMicros: number; pays?: boolean }[]>().notNull(),
    settledAt: at('settled_at').notNull().defaultNow(),
    /** When the venue paid the proceeds; null while the payment is outstanding. */
    paidAt: at('paid_at'),
    /** The redemption transaction on a live venue; null on the paper venue. */
    txHash: text('tx_hash'),
    /** A payer's lease: while it is in the future, other instances leave this settlement's payment alone. */
    payingUntil: at('paying_until'),
    /** Why the last payment attempt did not finish (retried by the next run); null once paid. */
    payError: text('pay_error'),
  },
  (t) => [
    uniqueIndex('settlements_position_idx').on(t.positionId),
    index('settlements_user_idx').on(t.accountId, t.userId, t.settledAt),
    index('settlements_unpaid_idx')
      .on(t.settledAt)
      .where(sql`${t.paidAt} is null`),
  ],
);

/**
 * A trading user's running totals: how many positions and orders it has in each status, how many
 * trades, and what they add up to. Kept by triggers on positions, orders and trades (migration 0028:
 * an insert adds, a status change moves one between columns, a delete takes away), so every statement
 * that writes one keeps them in its own transaction, whatever code path it comes from. Every trading
 * transaction concerns one user, and all of a user's totals are one row: a transaction takes that
 * one row's lock, so two of them never wait for each other in a circle. The lists answer `total` (and
 * the history its summary) from here instead of counting the user's history.
 * Invariant: each column = the count (or sum) over the user's rows, at every commit.
 */
export const tradingTotals = pgTable(
  'trading_totals',
  {
    accountId: text('account_id').notNull(),
    userId: text('user_id').notNull(),
    positionsPending: micros('positions_pending').notNull().default(0),
    positionsOpen: micros('positions_open').notNull().default(0),
    positionsClosed: micros('positions_closed').notNull().default(0),
    positionsSettled: micros('positions_settled').notNull().default(0),
    ordersPending: micros('orders_pending').notNull().default(0),
    ordersMatched: micros('orders_matched').notNull().default(0),
    ordersCancelled: micros('orders_cancelled').notNull().default(0),
    ordersRejected: micros('orders_rejected').notNull().default(0),
    trades: micros('trades').notNull().default(0),
    volumeMicros: micros('volume_micros').notNull().default(0),
    feesMicros: micros('fees_micros').notNull().default(0),
    realizedPnlMicros: micros('realized_pnl_micros').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.userId] })],
);
