-- The trading totals (0028) kept once per statement and user instead of once per row: a buy of seven
-- bands changed its user's totals row 23 times (7 orders written, 7 orders moved out of PENDING, 7
-- trades, the position twice), each a trigger call and a new version of the same row; now each
-- statement changes it once, from its transition tables. The totals still change in the statement
-- that changes the rows, so every commit still holds totals equal to the rows.
--
-- A trigger with transition tables takes one event and no column list, so each table has a trigger
-- per event, and an UPDATE counts every row it changed (its old status out, its new status in: a row
-- whose status did not change adds nothing).
DROP TRIGGER positions_totals ON positions;
--> statement-breakpoint
DROP TRIGGER positions_status_totals ON positions;
--> statement-breakpoint
DROP TRIGGER orders_totals ON orders;
--> statement-breakpoint
DROP TRIGGER orders_status_totals ON orders;
--> statement-breakpoint
DROP TRIGGER trades_totals ON trades;
--> statement-breakpoint
DROP FUNCTION positions_totals_keep();
--> statement-breakpoint
DROP FUNCTION orders_totals_keep();
--> statement-breakpoint
DROP FUNCTION trades_totals_keep();
--> statement-breakpoint
CREATE FUNCTION positions_totals_of_statement() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Each branch reads only the transition tables its event has.
  IF TG_OP = 'INSERT' THEN
    PERFORM trading_totals_add(account_id, user_id, pp, po, pc, ps, 0, 0, 0, 0, 0, 0, 0, 0)
       FROM (SELECT account_id, user_id,
                    count(*) FILTER (WHERE status = 'pending') AS pp, count(*) FILTER (WHERE status = 'open') AS po,
                    count(*) FILTER (WHERE status = 'closed') AS pc, count(*) FILTER (WHERE status = 'settled') AS ps
               FROM new_rows GROUP BY 1, 2) d;
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM trading_totals_add(account_id, user_id, -pp, -po, -pc, -ps, 0, 0, 0, 0, 0, 0, 0, 0)
       FROM (SELECT account_id, user_id,
                    count(*) FILTER (WHERE status = 'pending') AS pp, count(*) FILTER (WHERE status = 'open') AS po,
                    count(*) FILTER (WHERE status = 'closed') AS pc, count(*) FILTER (WHERE status = 'settled') AS ps
               FROM old_rows GROUP BY 1, 2) d;
  ELSE
    PERFORM trading_totals_add(account_id, user_id, pp, po, pc, ps, 0, 0, 0, 0, 0, 0, 0, 0)
       FROM (SELECT account_id, user_id,
                    coalesce(sum(n) FILTER (WHERE status = 'pending'), 0) AS pp, coalesce(sum(n) FILTER (WHERE status = 'open'), 0) AS po,
                    coalesce(sum(n) FILTER (WHERE status = 'closed'), 0) AS pc, coalesce(sum(n) FILTER (WHERE status = 'settled'), 0) AS ps
               FROM (SELECT account_id, user_id, status, 1 AS n FROM new_rows
                     UNION ALL SELECT account_id, user_id, status, -1 FROM old_rows) x
              GROUP BY 1, 2) d
      WHERE (pp, po, pc, ps) <> (0, 0, 0, 0);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION orders_totals_of_statement() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM trading_totals_add(account_id, user_id, 0, 0, 0, 0, op, om, oc, orj, 0, 0, 0, 0)
       FROM (SELECT account_id, user_id,
                    count(*) FILTER (WHERE status = 'PENDING') AS op, count(*) FILTER (WHERE status = 'MATCHED') AS om,
                    count(*) FILTER (WHERE status = 'CANCELLED') AS oc, count(*) FILTER (WHERE status = 'REJECTED') AS orj
               FROM new_rows GROUP BY 1, 2) d;
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM trading_totals_add(account_id, user_id, 0, 0, 0, 0, -op, -om, -oc, -orj, 0, 0, 0, 0)
       FROM (SELECT account_id, user_id,
                    count(*) FILTER (WHERE status = 'PENDING') AS op, count(*) FILTER (WHERE status = 'MATCHED') AS om,
                    count(*) FILTER (WHERE status = 'CANCELLED') AS oc, count(*) FILTER (WHERE status = 'REJECTED') AS orj
               FROM old_rows GROUP BY 1, 2) d;
  ELSE
    PERFORM trading_totals_add(account_id, user_id, 0, 0, 0, 0, op, om, oc, orj, 0, 0, 0, 0)
       FROM (SELECT account_id, user_id,
                    coalesce(sum(n) FILTER (WHERE status = 'PENDING'), 0) AS op, coalesce(sum(n) FILTER (WHERE status = 'MATCHED'), 0) AS om,
                    coalesce(sum(n) FILTER (WHERE status = 'CANCELLED'), 0) AS oc, coalesce(sum(n) FILTER (WHERE status = 'REJECTED'), 0) AS orj
               FROM (SELECT account_id, user_id, status, 1 AS n FROM new_rows
                     UNION ALL SELECT account_id, user_id, status, -1 FROM old_rows) x
              GROUP BY 1, 2) d
      WHERE (op, om, oc, orj) <> (0, 0, 0, 0);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION trades_totals_of_statement() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM trading_totals_add(account_id, user_id, 0, 0, 0, 0, 0, 0, 0, 0, tr, vol, fee, pnl)
       FROM (SELECT account_id, user_id, count(*) AS tr, sum(amount_micros)::bigint AS vol, sum(fees_micros)::bigint AS fee, sum(realized_pnl_micros)::bigint AS pnl
               FROM new_rows GROUP BY 1, 2) d;
  ELSE
    PERFORM trading_totals_add(account_id, user_id, 0, 0, 0, 0, 0, 0, 0, 0, -tr, -vol, -fee, -pnl)
       FROM (SELECT account_id, user_id, count(*) AS tr, sum(amount_micros)::bigint AS vol, sum(fees_micros)::bigint AS fee, sum(realized_pnl_micros)::bigint AS pnl
               FROM old_rows GROUP BY 1, 2) d;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER positions_totals_insert AFTER INSERT ON positions REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION positions_totals_of_statement();
--> statement-breakpoint
CREATE TRIGGER positions_totals_update AFTER UPDATE ON positions REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION positions_totals_of_statement();
--> statement-breakpoint
CREATE TRIGGER positions_totals_delete AFTER DELETE ON positions REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION positions_totals_of_statement();
--> statement-breakpoint
CREATE TRIGGER orders_totals_insert AFTER INSERT ON orders REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION orders_totals_of_statement();
--> statement-breakpoint
CREATE TRIGGER orders_totals_update AFTER UPDATE ON orders REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION orders_totals_of_statement();
--> statement-breakpoint
CREATE TRIGGER orders_totals_delete AFTER DELETE ON orders REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION orders_totals_of_statement();
--> statement-breakpoint
CREATE TRIGGER trades_totals_insert AFTER INSERT ON trades REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION trades_totals_of_statement();
--> statement-breakpoint
CREATE TRIGGER trades_totals_delete AFTER DELETE ON trades REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION trades_totals_of_statement();
