ALTER TABLE "accounts" ADD COLUMN "usage_count" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "usage_cost_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE "accounts" SET
  "usage_count" = (SELECT count(*) FROM "usage_records" u WHERE u."account_id" = "accounts"."id"),
  "usage_cost_micros" = (SELECT coalesce(sum(u."cost_micros"), 0) FROM "usage_records" u WHERE u."account_id" = "accounts"."id");
