CREATE TABLE "paper_accounts" (
	"account_key" text PRIMARY KEY NOT NULL,
	"collateral_micros" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "paper_accounts_collateral_non_negative" CHECK ("paper_accounts"."collateral_micros" >= 0)
);
--> statement-breakpoint
CREATE TABLE "paper_holdings" (
	"account_key" text NOT NULL,
	"token_id" text NOT NULL,
	"shares_micros" bigint NOT NULL,
	CONSTRAINT "paper_holdings_account_key_token_id_pk" PRIMARY KEY("account_key","token_id"),
	CONSTRAINT "paper_holdings_non_negative" CHECK ("paper_holdings"."shares_micros" >= 0)
);
--> statement-breakpoint
CREATE TABLE "paper_orders" (
	"id" text PRIMARY KEY NOT NULL,
	"account_key" text NOT NULL,
	"client_order_id" text NOT NULL,
	"token_id" text NOT NULL,
	"side" text NOT NULL,
	"requested_micros" bigint NOT NULL,
	"filled_micros" bigint NOT NULL,
	"notional_micros" bigint NOT NULL,
	"status" text NOT NULL,
	"reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "paper_orders_client_idx" ON "paper_orders" USING btree ("account_key","client_order_id");