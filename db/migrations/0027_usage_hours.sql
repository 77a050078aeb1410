CREATE TABLE "usage_hours" (
	"account_id" text NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"key_id" text NOT NULL,
	"path" text NOT NULL,
	"requests" bigint NOT NULL,
	"cost_micros" bigint NOT NULL,
	CONSTRAINT "usage_hours_account_id_hour_key_id_path_pk" PRIMARY KEY("account_id","hour","key_id","path")
);
--> statement-breakpoint
-- The cells of the usage rows written before this table existed.
INSERT INTO "usage_hours" ("account_id", "hour", "key_id", "path", "requests", "cost_micros")
SELECT "account_id", date_trunc('hour', "created_at", 'UTC'), coalesce("api_key_id", ''), "path", count(*), sum("cost_micros")
  FROM "usage_records"
 GROUP BY 1, 2, 3, 4;
