CREATE TABLE "polymarket_redemptions" (
	"settlement_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"user_id" text NOT NULL,
	"wallet" text NOT NULL,
	"condition_ids" jsonb NOT NULL,
	"token_ids" jsonb NOT NULL,
	"from_block" bigint NOT NULL,
	"state" text NOT NULL,
	"relayer_tx_id" text,
	"nonce" text,
	"tx_hash" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "settlements" ADD COLUMN "paying_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "settlements" ADD COLUMN "pay_error" text;--> statement-breakpoint
CREATE INDEX "polymarket_redemptions_wallet_idx" ON "polymarket_redemptions" USING btree ("wallet");