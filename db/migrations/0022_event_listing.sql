ALTER TABLE "events" ADD COLUMN "listing" text DEFAULT 'listed' NOT NULL;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "origin" text DEFAULT 'seed' NOT NULL;--> statement-breakpoint
CREATE INDEX "events_company_source_id_idx" ON "events" USING btree ("company_source_id","listing");