CREATE TABLE "company_dataset_state" (
	"id" smallint PRIMARY KEY DEFAULT 1 NOT NULL,
	"version" bigint DEFAULT 0 NOT NULL,
	"changed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "company_dataset_state_singleton" CHECK ("company_dataset_state"."id" = 1)
);
--> statement-breakpoint
DROP INDEX "companies_industry_idx";--> statement-breakpoint
DROP INDEX "companies_country_idx";--> statement-breakpoint
DROP INDEX "companies_backing_type_idx";--> statement-breakpoint
ALTER TABLE "companies" ADD COLUMN "industry_key" text GENERATED ALWAYS AS (lower(btrim(industry))) STORED;--> statement-breakpoint
ALTER TABLE "companies" ADD COLUMN "country_key" text GENERATED ALWAYS AS (lower(btrim(headquarters_country))) STORED;--> statement-breakpoint
ALTER TABLE "companies" ADD COLUMN "backing_type_key" text GENERATED ALWAYS AS (lower(btrim(backing_type))) STORED;--> statement-breakpoint
CREATE INDEX "companies_industry_country_valuation_idx" ON "companies" USING btree ("industry_key","country_key","valuation_usd","id");--> statement-breakpoint
CREATE INDEX "companies_valuation_desc_idx" ON "companies" USING btree ("valuation_usd" desc nulls last,"id" desc);--> statement-breakpoint
CREATE INDEX "companies_total_funding_desc_idx" ON "companies" USING btree ("total_funding_usd" desc nulls last,"id" desc);--> statement-breakpoint
CREATE INDEX "companies_founded_year_desc_idx" ON "companies" USING btree ("founded_year" desc nulls last,"id" desc);--> statement-breakpoint
CREATE INDEX "companies_employees_desc_idx" ON "companies" USING btree ("employees" desc nulls last,"id" desc);--> statement-breakpoint
CREATE INDEX "companies_updated_at_desc_idx" ON "companies" USING btree ("updated_at" desc nulls last,"id" desc);--> statement-breakpoint
CREATE INDEX "companies_name_desc_idx" ON "companies" USING btree (lower("name") desc nulls last,"id" desc);--> statement-breakpoint
CREATE INDEX "companies_country_idx" ON "companies" USING btree ("country_key","id");--> statement-breakpoint
CREATE INDEX "companies_backing_type_idx" ON "companies" USING btree ("backing_type_key","id");--> statement-breakpoint
INSERT INTO "company_dataset_state" ("id", "version") VALUES (1, 0) ON CONFLICT DO NOTHING;
