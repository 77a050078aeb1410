CREATE TABLE "account_wallets" (
	"address" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "auth_nonces" (
	"nonce" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "auth_sessions" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"address" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "deposit_scans" (
	"id" text PRIMARY KEY NOT NULL,
	"scanned_through" bigint NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "deposits" (
	"id" text PRIMARY KEY NOT NULL,
	"chain_id" integer NOT NULL,
	"tx_hash" text NOT NULL,
	"log_index" integer NOT NULL,
	"token" text NOT NULL,
	"from_address" text NOT NULL,
	"to_address" text NOT NULL,
	"amount_micros" bigint NOT NULL,
	"block_number" bigint NOT NULL,
	"block_hash" text NOT NULL,
	"account_id" text,
	"status" text NOT NULL,
	"credited_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "deposits_amount_positive" CHECK ("deposits"."amount_micros" > 0)
);
--> statement-breakpoint
CREATE TABLE "meter_cursor" (
	"id" text PRIMARY KEY NOT NULL,
	"exported_through" timestamp with time zone NOT NULL,
	"lease_owner" text,
	"lease_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "meter_exports" (
	"account_id" text NOT NULL,
	"minute" timestamp with time zone NOT NULL,
	"stripe_customer_id" text NOT NULL,
	"value_micros" bigint NOT NULL,
	"identifier" text NOT NULL,
	"sent_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "meter_exports_account_id_minute_pk" PRIMARY KEY("account_id","minute")
);
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "billing_plan" text DEFAULT 'prepaid' NOT NULL;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "stripe_customer_id" text;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "monthly_cap_micros" bigint;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "metered_month" text;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "metered_spent_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "spend_cap_micros" bigint;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "cap_period" text;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "cap_window" text;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "cap_spent_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_records" ADD COLUMN "billed_to" text DEFAULT 'balance' NOT NULL;--> statement-breakpoint
CREATE INDEX "account_wallets_account_idx" ON "account_wallets" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "auth_sessions_account_idx" ON "auth_sessions" USING btree ("account_id");--> statement-breakpoint
CREATE UNIQUE INDEX "deposits_log_idx" ON "deposits" USING btree ("chain_id","tx_hash","log_index");--> statement-breakpoint
CREATE INDEX "deposits_account_idx" ON "deposits" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "deposits_from_idx" ON "deposits" USING btree ("from_address");--> statement-breakpoint
CREATE INDEX "meter_exports_unsent_idx" ON "meter_exports" USING btree ("sent_at","minute");--> statement-breakpoint
CREATE INDEX "usage_records_metered_time_idx" ON "usage_records" USING btree ("created_at") WHERE "usage_records"."billed_to" = 'meter';