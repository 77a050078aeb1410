CREATE TABLE "companies" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "companies_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"source_id" text NOT NULL,
	"name" text NOT NULL,
	"registered_name" text,
	"company_type" text,
	"status" text,
	"operational_status" text,
	"listing_status" text,
	"ipo_date" text,
	"website" text,
	"headquarters_city" text,
	"headquarters_region" text,
	"headquarters_country" text,
	"headquarters_address" text,
	"industry" text,
	"description" text,
	"founded_year" integer,
	"employees" integer,
	"employees_as_of" text,
	"sic_code" text,
	"sic_description" text,
	"ceo" text,
	"ceo_title" text,
	"coo" text,
	"coo_title" text,
	"cfo" text,
	"cfo_title" text,
	"board_members" jsonb,
	"market_segments" jsonb,
	"added_segments_2026" text,
	"added_segments_note" text,
	"emerging_market" text,
	"market_peers" integer,
	"backing_type" text,
	"valuation_usd" bigint,
	"valuation_as_of" text,
	"valuation_step_up_multiple" double precision,
	"valuation_step_up_description" text,
	"total_funding_usd" bigint,
	"last_funding_amount_usd" bigint,
	"last_funding_date" text,
	"last_funding_round_type" text,
	"last_funding_round_number" integer,
	"last_funding_round_status" text,
	"last_funding_pre_money_valuation_usd" bigint,
	"last_funding_round_structure" text,
	"last_funding_round_strategic_purpose" text,
	"last_funding_round_new_investor" text,
	"last_funding_est_price_per_share_usd" double precision,
	"total_funding_rounds" integer,
	"number_diluted_shares" bigint,
	"known_debt_usd" bigint,
	"fy2025_revenue_usd" bigint,
	"fy2025_ebitda_normalized_usd" bigint,
	"fy2026_revenue_usd" bigint,
	"fy2027_revenue_usd" bigint,
	"products" jsonb,
	"funding_history" jsonb,
	"subsidiaries_and_acquisitions" jsonb,
	"extra" jsonb,
	"reference_url" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "companies_source_id_idx" ON "companies" USING btree ("source_id");--> statement-breakpoint
CREATE INDEX "companies_industry_idx" ON "companies" USING btree (lower("industry"),"id");--> statement-breakpoint
CREATE INDEX "companies_country_idx" ON "companies" USING btree (lower("headquarters_country"),"id");--> statement-breakpoint
CREATE INDEX "companies_backing_type_idx" ON "companies" USING btree (lower("backing_type"),"id");--> statement-breakpoint
CREATE INDEX "companies_valuation_idx" ON "companies" USING btree ("valuation_usd","id");--> statement-breakpoint
CREATE INDEX "companies_total_funding_idx" ON "companies" USING btree ("total_funding_usd","id");--> statement-breakpoint
CREATE INDEX "companies_founded_year_idx" ON "companies" USING btree ("founded_year","id");--> statement-breakpoint
CREATE INDEX "companies_employees_idx" ON "companies" USING btree ("employees","id");--> statement-breakpoint
CREATE INDEX "companies_updated_at_idx" ON "companies" USING btree ("updated_at","id");--> statement-breakpoint
CREATE INDEX "companies_name_idx" ON "companies" USING btree (lower("name"),"id");--> statement-breakpoint
CREATE INDEX "companies_name_trgm_idx" ON "companies" USING gin (lower("name") gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "companies_registered_name_trgm_idx" ON "companies" USING gin (lower("registered_name") gin_trgm_ops);