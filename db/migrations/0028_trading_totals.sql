CREATE TABLE "trading_totals" (
	"account_id" text NOT NULL,
	"user_id" text NOT NULL,
	"positions_pending" bigint DEFAULT 0 NOT NULL,
	"positions_open" bigint DEFAULT 0 NOT NULL,
	"positions_closed" bigint DEFAULT 0 NOT NULL,
	"positions_settled" bigint DEFAULT 0 NOT NULL,
	"orders_pending" bigint DEFAULT 0 NOT NULL,
	"orders_matched" bigint DEFAULT 0 NOT NULL,
	"orders_cancelled" bigint DEFAULT 0 NOT NULL,
	"orders_rejected" bigint DEFAULT 0 NOT NULL,
	"trades" bigint DEFAULT 0 NOT NULL,
	"volume_micros" bigint DEFAULT 0 NOT NULL,
	"fees_micros" bigint DEFAULT 0 NOT NULL,
	"realized_pnl_micros" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "trading_totals_account_id_user_id_pk" PRIMARY KEY("account_id","user_id")
);
--> statement-breakpoint
-- The totals of what exists already.
INSERT INTO "trading_totals" AS t
SELECT account_id, user_id,
       sum(pp), sum(po), sum(pc), sum(ps), sum(op), sum(om), sum(oc), sum(orj), sum(tr), sum(vol), sum(fee), sum(pnl)
  FROM (
    SELECT account_id, user_id,
           count(*) FILTER (WHERE status = 'pending') AS pp, count(*) FILTER (WHERE status = 'open') AS po,
           count(*) FILTER (WHERE status = 'closed') AS pc, count(*) FILTER (WHERE status = 'settled') AS ps,
           0 AS op, 0 AS om, 0 AS oc, 0 AS orj, 0 AS tr, 0 AS vol, 0 AS fee, 0 AS pnl
      FROM positions GROUP BY 1, 2
    UNION ALL
    SELECT account_id, user_id, 0, 0, 0, 0,
           count(*) FILTER (WHERE status = 'PENDING'), count(*) FILTER (WHERE status = 'MATCHED'),
           count(*) FILTER (WHERE status = 'CANCELLED'), count(*) FILTER (WHERE status = 'REJECTED'), 0, 0, 0, 0
      FROM orders GROUP BY 1, 2
    UNION ALL
    SELECT account_id, user_id, 0, 0, 0, 0, 0, 0, 0, 0, count(*), sum(amount_micros), sum(fees_micros), sum(realized_pnl_micros)
      FROM trades GROUP BY 1, 2
  ) s
 GROUP BY 1, 2;
--> statement-breakpoint
-- Adds (or takes away) one user's deltas; every trigger below goes through it. PL/pgSQL, not SQL: a SQL
-- function called from a trigger is parsed and planned again on every call (23 times a buy); PL/pgSQL
-- keeps its statement's plan for the connection's life.
CREATE FUNCTION trading_totals_add(a text, u text, pp bigint, po bigint, pc bigint, ps bigint, op bigint, om bigint, oc bigint, orj bigint, tr bigint, vol bigint, fee bigint, pnl bigint)
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
CREATE FUNCTION positions_totals_keep() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  d bigint[] := array[0, 0, 0, 0];
BEGIN
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    d[array_position(array['pending', 'open', 'closed', 'settled'], NEW.status)] := d[array_position(array['pending', 'open', 'closed', 'settled'], NEW.status)] + 1;
  END IF;
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    d[array_position(array['pending', 'open', 'closed', 'settled'], OLD.status)] := d[array_position(array['pending', 'open', 'closed', 'settled'], OLD.status)] - 1;
  END IF;
  IF TG_OP = 'DELETE' THEN
    PERFORM trading_totals_add(OLD.account_id, OLD.user_id, d[1], d[2], d[3], d[4], 0, 0, 0, 0, 0, 0, 0, 0);
  ELSE
    PERFORM trading_totals_add(NEW.account_id, NEW.user_id, d[1], d[2], d[3], d[4], 0, 0, 0, 0, 0, 0, 0, 0);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION orders_totals_keep() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  d bigint[] := array[0, 0, 0, 0];
BEGIN
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    d[array_position(array['PENDING', 'MATCHED', 'CANCELLED', 'REJECTED'], NEW.status)] := d[array_position(array['PENDING', 'MATCHED', 'CANCELLED', 'REJECTED'], NEW.status)] + 1;
  END IF;
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    d[array_position(array['PENDING', 'MATCHED', 'CANCELLED', 'REJECTED'], OLD.status)] := d[array_position(array['PENDING', 'MATCHED', 'CANCELLED', 'REJECTED'], OLD.status)] - 1;
  END IF;
  IF TG_OP = 'DELETE' THEN
    PERFORM trading_totals_add(OLD.account_id, OLD.user_id, 0, 0, 0, 0, d[1], d[2], d[3], d[4], 0, 0, 0, 0);
  ELSE
    PERFORM trading_totals_add(NEW.account_id, NEW.user_id, 0, 0, 0, 0, d[1], d[2], d[3], d[4], 0, 0, 0, 0);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION trades_totals_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM trading_totals_add(NEW.account_id, NEW.user_id, 0, 0, 0, 0, 0, 0, 0, 0, 1, NEW.amount_micros, NEW.fees_micros, NEW.realized_pnl_micros);
  ELSE
    PERFORM trading_totals_add(OLD.account_id, OLD.user_id, 0, 0, 0, 0, 0, 0, 0, 0, -1, -OLD.amount_micros, -OLD.fees_micros, -OLD.realized_pnl_micros);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER positions_totals AFTER INSERT OR DELETE ON positions FOR EACH ROW EXECUTE FUNCTION positions_totals_keep();
--> statement-breakpoint
CREATE TRIGGER positions_status_totals AFTER UPDATE OF status ON positions
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION positions_totals_keep();
--> statement-breakpoint
CREATE TRIGGER orders_totals AFTER INSERT OR DELETE ON orders FOR EACH ROW EXECUTE FUNCTION orders_totals_keep();
--> statement-breakpoint
CREATE TRIGGER orders_status_totals AFTER UPDATE OF status ON orders
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION orders_totals_keep();
--> statement-breakpoint
CREATE TRIGGER trades_totals AFTER INSERT OR DELETE ON trades FOR EACH ROW EXECUTE FUNCTION trades_totals_keep();
