-- Meter export by batches (server/billing/meter-export.ts): each pass marks the usage rows it exports
-- (usage_records.export_batch) and writes one outbox row per (account, minute, batch).
ALTER TABLE "usage_records" ADD COLUMN "export_batch" text;--> statement-breakpoint
-- Outbox rows written before batches existed (one per account and minute) form the batch ''.
ALTER TABLE "meter_exports" ADD COLUMN "batch" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "meter_exports" ALTER COLUMN "batch" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "meter_exports" DROP CONSTRAINT "meter_exports_account_id_minute_pk";--> statement-breakpoint
ALTER TABLE "meter_exports" ADD CONSTRAINT "meter_exports_account_id_minute_batch_pk" PRIMARY KEY("account_id","minute","batch");--> statement-breakpoint
-- Metered rows already exported by the old minute cursor (a minute before exported_through with an
-- outbox row for the account) belong to the batch '' and are not exported again. Rows of a closed
-- minute without any outbox row for their account were never exported (they committed after their
-- minute closed): they stay unmarked, so the next pass exports them.
UPDATE "usage_records" u SET "export_batch" = ''
 WHERE u."billed_to" = 'meter'
   AND u."created_at" < (SELECT c."exported_through" FROM "meter_cursor" c WHERE c."id" = 'stripe')
   AND EXISTS (SELECT 1 FROM "meter_exports" e
                WHERE e."account_id" = u."account_id" AND e."minute" = date_trunc('minute', u."created_at", 'UTC'));--> statement-breakpoint
DROP INDEX "usage_records_metered_time_idx";--> statement-breakpoint
CREATE INDEX "usage_records_metered_unexported_idx" ON "usage_records" USING btree ("created_at") WHERE "usage_records"."billed_to" = 'meter' and "usage_records"."export_batch" is null;--> statement-breakpoint
ALTER TABLE "meter_cursor" DROP COLUMN "exported_through";
