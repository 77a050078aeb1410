CREATE TABLE "company_investors" (
	"investor_id" integer NOT NULL,
	"company_id" integer NOT NULL,
	"first_date" text,
	"led" boolean DEFAULT false NOT NULL,
	CONSTRAINT "company_investors_investor_id_company_id_pk" PRIMARY KEY("investor_id","company_id")
);
--> statement-breakpoint
CREATE TABLE "company_names" (
	"company_id" integer NOT NULL,
	"folded" text NOT NULL,
	"kind" smallint NOT NULL,
	CONSTRAINT "company_names_company_id_folded_pk" PRIMARY KEY("company_id","folded")
);
--> statement-breakpoint
CREATE TABLE "funding_rounds" (
	"id" text PRIMARY KEY NOT NULL,
	"company_id" integer NOT NULL,
	"date" text NOT NULL,
	"date_key" text NOT NULL,
	"round_type" text,
	"round_type_key" text,
	"amount_usd" bigint,
	"pre_money_valuation_usd" bigint,
	"post_money_valuation_usd" bigint,
	"price_per_share_usd" double precision,
	"lead_investors" jsonb NOT NULL,
	"investors" jsonb NOT NULL,
	"investor_ids" integer[] NOT NULL,
	"source" jsonb NOT NULL,
	"industry_key" text,
	"country_key" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "investors" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "investors_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"type" text,
	"country" text,
	"website" text,
	"portfolio_count" integer DEFAULT 0 NOT NULL,
	"source" jsonb,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "companies_name_trgm_idx";--> statement-breakpoint
DROP INDEX "companies_registered_name_trgm_idx";--> statement-breakpoint
ALTER TABLE "companies" ADD COLUMN "aliases" jsonb;--> statement-breakpoint
ALTER TABLE "companies" ADD COLUMN "valuation_history" jsonb;--> statement-breakpoint
ALTER TABLE "companies" ADD COLUMN "provenance" jsonb;--> statement-breakpoint
ALTER TABLE "company_investors" ADD CONSTRAINT "company_investors_investor_id_investors_id_fk" FOREIGN KEY ("investor_id") REFERENCES "public"."investors"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "company_investors" ADD CONSTRAINT "company_investors_company_id_companies_id_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "company_names" ADD CONSTRAINT "company_names_company_id_companies_id_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "funding_rounds" ADD CONSTRAINT "funding_rounds_company_id_companies_id_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "company_investors_company_idx" ON "company_investors" USING btree ("company_id");--> statement-breakpoint
CREATE INDEX "company_names_folded_idx" ON "company_names" USING btree ("folded");--> statement-breakpoint
CREATE INDEX "company_names_trgm_idx" ON "company_names" USING gin ("folded" gin_trgm_ops) WITH (fastupdate=off);--> statement-breakpoint
CREATE INDEX "funding_rounds_date_idx" ON "funding_rounds" USING btree ("date_key","id");--> statement-breakpoint
CREATE INDEX "funding_rounds_company_idx" ON "funding_rounds" USING btree ("company_id","date_key");--> statement-breakpoint
CREATE INDEX "funding_rounds_type_idx" ON "funding_rounds" USING btree ("round_type_key","date_key","id");--> statement-breakpoint
CREATE INDEX "funding_rounds_amount_idx" ON "funding_rounds" USING btree ("amount_usd","id");--> statement-breakpoint
CREATE INDEX "funding_rounds_industry_idx" ON "funding_rounds" USING btree ("industry_key","date_key","id");--> statement-breakpoint
CREATE INDEX "funding_rounds_country_idx" ON "funding_rounds" USING btree ("country_key","date_key","id");--> statement-breakpoint
CREATE INDEX "funding_rounds_updated_idx" ON "funding_rounds" USING btree ("updated_at","id");--> statement-breakpoint
CREATE INDEX "funding_rounds_investor_ids_idx" ON "funding_rounds" USING gin ("investor_ids");--> statement-breakpoint
CREATE UNIQUE INDEX "investors_slug_idx" ON "investors" USING btree ("slug");--> statement-breakpoint
CREATE INDEX "investors_name_idx" ON "investors" USING btree (lower("name"),"id");--> statement-breakpoint
CREATE INDEX "investors_portfolio_idx" ON "investors" USING btree ("portfolio_count" desc,"id");--> statement-breakpoint
CREATE INDEX "investors_type_idx" ON "investors" USING btree ("type","id");