-- One paper order placed (server/venues/paper-ledger.ts): the statement that was sent once per order,
-- as a function, so the orders of one buy or sale are placed by one statement that calls it per order,
-- in order (each call sees what the previous ones changed). Returns the order as placed, or as it
-- was placed earlier under the same client order id; nothing when the paper account does not exist.
--  - the account row is locked first, so buys (account → holding) and sells (holding → account) of
--    one account never lock in opposite orders and deadlock;
--  - an order placed concurrently under the same client order id makes the insert fail on the
--    unique index, which rolls back the whole statement (no money moves);
--  - a fill moves collateral and shares by conditional writes (>=); when the condition fails the
--    order is recorded REJECTED (insufficient balance or shares) with nothing moved.
-- PL/pgSQL, not SQL, so its statement's plan is kept for the connection's life (a SQL function is
-- planned again for every statement that calls it).
CREATE FUNCTION paper_place_order(
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
