CREATE TABLE "usage_days" (
	"account_id" text NOT NULL,
	"day" timestamp with time zone NOT NULL,
	"key_id" text NOT NULL,
	"path" text NOT NULL,
	"requests" bigint NOT NULL,
	"cost_micros" bigint NOT NULL,
	CONSTRAINT "usage_days_account_id_day_key_id_path_pk" PRIMARY KEY("account_id","day","key_id","path")
);
--> statement-breakpoint
-- The days of the hour cells written before this table existed.
INSERT INTO "usage_days" ("account_id", "day", "key_id", "path", "requests", "cost_micros")
SELECT "account_id", date_trunc('day', "hour", 'UTC'), "key_id", "path", sum("requests"), sum("cost_micros")
  FROM "usage_hours"
 GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
-- Adds an hour cell's change to its day (db/tables/accounts.ts usage_days). PL/pgSQL: it keeps its
-- statement's plan for the connection's life (a SQL function would be planned on every call).
CREATE FUNCTION usage_days_add(a text, d timestamptz, k text, p text, r bigint, c bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO usage_days AS t VALUES (a, date_trunc('day', d, 'UTC'), k, p, r, c)
  ON CONFLICT (account_id, day, key_id, path) DO UPDATE SET requests = t.requests + excluded.requests, cost_micros = t.cost_micros + excluded.cost_micros;
END
$$;
--> statement-breakpoint
CREATE FUNCTION usage_days_follow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND (NEW.account_id, NEW.hour, NEW.key_id, NEW.path) IS NOT DISTINCT FROM (OLD.account_id, OLD.hour, OLD.key_id, OLD.path) THEN
    -- What the writers do: a cell's counts change, its key does not.
    PERFORM usage_days_add(NEW.account_id, NEW.hour, NEW.key_id, NEW.path, NEW.requests - OLD.requests, NEW.cost_micros - OLD.cost_micros);
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    PERFORM usage_days_add(OLD.account_id, OLD.hour, OLD.key_id, OLD.path, -OLD.requests, -OLD.cost_micros);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    PERFORM usage_days_add(NEW.account_id, NEW.hour, NEW.key_id, NEW.path, NEW.requests, NEW.cost_micros);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER usage_days_follow AFTER INSERT OR UPDATE OR DELETE ON "usage_hours" FOR EACH ROW EXECUTE FUNCTION usage_days_follow();
