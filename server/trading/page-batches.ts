/**
 * The unfiltered reads of a trading user's history and orders — a page of trades or orders,
 * newest first, with the user's running totals (trading_totals) — as one statement shared with the
 * other such pages this process reads at the same moment (lib/batched-reads.ts): one round trip and
 * one prepared plan for a burst of requests, instead of two statements built per request, and each
 * page's rows as one JSON value. Each page
 * keeps the account and user filter every trading query carries: a page's rows are those of its own
 * (account, user) only. Filtered reads (an event, dates, a status, a position) keep their own
 * statements in queries.ts.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { tableRows } from '../../db/prepared.ts';
import { orders, trades } from '../../db/schema.ts';
import { batchedRead } from '../lib/batched-reads.ts';
import type { OrderRow } from './ledger-writes.ts';
import type { TradingUser } from './settings.ts';

interface PageRequest {
  account_id: string;
  user_id: string;
  lim: number;
  off: number;
}

/** The user's running totals as the statement returns them (null: the user has none yet). */
interface TotalsColumns {
  ord: number;
  tt_trades: string | number | null;
  tt_volume: string | number | null;
  tt_fees: string | number | null;
  tt_pnl: string | number | null;
  tt_orders_pending: string | number | null;
  tt_orders_matched: string | number | null;
  tt_orders_cancelled: string | number | null;
  tt_orders_rejected: string | number | null;
}

/** A page's one row (the left joins give every request one): the totals, and its rows as the database's JSON (column names, timestamps as ISO text). */
type PageRow = TotalsColumns & { rows: Array<Record<string, unknown>> | string };

const totalsColumns = sql.raw(`tt.trades as tt_trades, tt.volume_micros as tt_volume, tt.fees_micros as tt_fees, tt.realized_pnl_micros as tt_pnl,
  tt.orders_pending as tt_orders_pending, tt.orders_matched as tt_orders_matched, tt.orders_cancelled as tt_orders_cancelled, tt.orders_rejected as tt_orders_rejected`);

const requests = sql`jsonb_to_recordset(${sql.placeholder('pages')}::jsonb) as r(ord int, account_id text, user_id text, lim int, off int)`;

/**
 * Per page (`ord`): the user's totals and its rows as one JSON array, aggregated by the database: one
 * value to decode per page instead of one per column and row (decoding columns was the largest share
 * of the server's work for a page of orders: docs/performance.md).
 */
const TRADE_PAGES_SQL = sql`
  select r.ord, ${totalsColumns}, p.rows
    from ${requests}
    left join trading_totals tt on tt.account_id = r.account_id and tt.user_id = r.user_id
    left join lateral (
      select coalesce(json_agg(x order by x.created_at desc, x.id desc), '[]'::json) as rows
        from (select * from trades t
               where t.account_id = r.account_id and t.user_id = r.user_id
               order by t.created_at desc, t.id desc
               limit r.lim offset r.off) x
    ) p on true`;

/** The same for orders, in the order list's order (newest first, then band, then id). */
const ORDER_PAGES_SQL = sql`
  select r.ord, ${totalsColumns}, p.rows
    from ${requests}
    left join trading_totals tt on tt.account_id = r.account_id and tt.user_id = r.user_id
    left join lateral (
      select coalesce(json_agg(x order by x.created_at desc, x.band_index asc, x.id asc), '[]'::json) as rows
        from (select * from orders o
               where o.account_id = r.account_id and o.user_id = r.user_id
               order by o.created_at desc, o.band_index asc, o.id asc
               limit r.lim offset r.off) x
    ) p on true`;

/** Pages in one statement, at most 32 (a page is at most 1,000 rows). */
const tradePages = batchedRead<PageRequest, PageRow>('trade_pages', TRADE_PAGES_SQL, 32);
const orderPages = batchedRead<PageRequest, PageRow>('order_pages', ORDER_PAGES_SQL, 32);

const count = (v: string | number | null | undefined) => Number(v ?? 0);

/**
 * The page's rows of `table`, mapped as the query builder maps them (the JSON has the columns' names
 * and values as their driver would give them: timestamps as text, bigints as numbers).
 */
function rowsOf<T extends typeof trades | typeof orders>(table: T, page: PageRow): T['$inferSelect'][] {
  // PGlite hands json back as text; postgres.js parses it.
  return tableRows(table, typeof page.rows === 'string' ? JSON.parse(page.rows) : page.rows);
}

/** A page of the user's trades, newest first, and the user's running totals. */
export async function unfilteredTradePage(db: Db, user: TradingUser, page: { limit: number; offset: number }) {
  const t = (await tradePages.read(db, { account_id: user.accountId, user_id: user.userId, lim: page.limit, off: page.offset }))[0]!;
  return {
    rows: rowsOf(trades, t),
    summary: { totalTrades: count(t.tt_trades), volumeMicros: count(t.tt_volume), feesMicros: count(t.tt_fees), realizedPnlMicros: count(t.tt_pnl) },
  };
}

/** A page of all the user's orders, newest first, and how many orders the user has. */
export async function unfilteredOrderPage(db: Db, user: TradingUser, page: { limit: number; offset: number }): Promise<{ rows: OrderRow[]; total: number }> {
  const t = (await orderPages.read(db, { account_id: user.accountId, user_id: user.userId, lim: page.limit, off: page.offset }))[0]!;
  return { rows: rowsOf(orders, t), total: count(t.tt_orders_pending) + count(t.tt_orders_matched) + count(t.tt_orders_cancelled) + count(t.tt_orders_rejected) };
}
