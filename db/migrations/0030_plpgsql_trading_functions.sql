-- The functions that keep trading totals (0028) and place paper orders (0029), in PL/pgSQL instead of
-- SQL. A SQL function that cannot be inlined is parsed and planned again on every call from a trigger
-- (and once per calling statement otherwise); a PL/pgSQL function keeps its statements' plans for the
-- connection's life. A buy called them 23 times (the totals) and once per order (paper), and that
-- planning was most of PostgreSQL's time per buy. Bodies unchanged.
CREATE OR REPLACE FUNCTION trading_totals_add(a text, u text, pp bigint, po bigint, pc bigint, ps bigint, op bigint, om bigint, oc bigint, orj bigint, tr bigint, vol bigint, fee bigint, pnl bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO trading_totals AS t VALUES (a, u, pp, po, pc, ps, op, om, oc, orj, tr, vol, fee, pnl)
  ON CONFLICT (account_id, user_id) DO UPDATE SET
    positions_pending = t.positions_pending + excluded.positions_pending,
    positions_open = t.positions_open + excluded.positions_open,
    positions_closed = t.positions_closed + excluded.positions_closed,
    positions_settled = t.positions_settled + excluded.positions_settled,
    orders_pending = t.orders_pending + excluded.orders_pending,
    orders_matched = t.orders_matched + excluded.orders_matched,
    orders_cancelled = t.orders_cancelled + excluded.orders_cancelled,
    orders_rejected = t.orders_rejected + excluded.orders_rejected,
    trades = t.trades + excluded.trades,
    volume_micros = t.volume_micros + excluded.volume_micros,
    fees_micros = t.fees_micros + excluded.fees_micros,
    realized_pnl_micros = t.realized_pnl_micros + excluded.realized_pnl_micros;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION paper_place_order(
  p_account_id text, p_user_id text, p_client_order_id text, p_token_id text, p_side text,
  p_requested bigint, p_refused text, p_shares bigint, p_amount bigint, p_id text
) RETURNS TABLE (
  id text, "clientOrderId" text, "tokenId" text, side text, status text,
  "requestedMicros" bigint, "filledMicros" bigint, "notionalMicros" bigint, reason text
) LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  with account as (
    select account_id, user_id from paper_accounts
     where account_id = p_account_id and user_id = p_user_id for update
  ), earlier as (
    select o.id, o.client_order_id, o.token_id, o.side, o.status, o.requested_micros, o.filled_micros, o.notional_micros, o.reason
      from paper_orders o
     where o.account_id = p_account_id and o.user_id = p_user_id and o.client_order_id = p_client_order_id
  ), proceed as (
    select account_id, user_id from account where not exists (select 1 from earlier)
  ), debit as (
    update paper_accounts a set collateral_micros = a.collateral_micros - p_amount
      from proceed
     where p_refused is null and p_side = 'BUY'
       and a.account_id = proceed.account_id and a.user_id = proceed.user_id and a.collateral_micros >= p_amount
    returning a.account_id, a.user_id
  ), bought as (
    insert into paper_holdings (account_id, user_id, token_id, shares_micros)
    select account_id, user_id, p_token_id, p_shares from debit
    on conflict (account_id, user_id, token_id) do update set shares_micros = paper_holdings.shares_micros + excluded.shares_micros
    returning account_id
  ), taken as (
    update paper_holdings h set shares_micros = h.shares_micros - p_shares
      from proceed
     where p_refused is null and p_side = 'SELL'
       and h.account_id = proceed.account_id and h.user_id = proceed.user_id and h.token_id = p_token_id
       and h.shares_micros >= p_shares
    returning h.account_id, h.user_id
  ), sold as (
    update paper_accounts a set collateral_micros = a.collateral_micros + p_amount
      from taken
     where a.account_id = taken.account_id and a.user_id = taken.user_id
    returning a.account_id
  ), outcome as (
    select case when p_refused is not null then p_refused
                when exists (select 1 from debit) or exists (select 1 from taken) then null
                when p_side = 'BUY' then 'insufficient-balance'
                else 'insufficient-shares' end as reason
  ), placed as (
    insert into paper_orders (id, account_id, user_id, client_order_id, token_id, side, requested_micros, filled_micros, notional_micros, status, reason)
    select p_id, proceed.account_id, proceed.user_id, p_client_order_id, p_token_id, p_side, p_requested,
           case when outcome.reason is null then p_shares else 0 end,
           case when outcome.reason is null then p_amount else 0 end,
           case when outcome.reason is null then 'MATCHED' else 'REJECTED' end, outcome.reason
      from proceed, outcome
    returning paper_orders.id, client_order_id, token_id, paper_orders.side, paper_orders.status, requested_micros, filled_micros, notional_micros, paper_orders.reason
  )
  select * from placed union all select * from earlier;
END $$;
