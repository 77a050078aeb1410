CREATE TABLE "polymarket_orders" (
	"client_order_id" text PRIMARY KEY NOT NULL,
	"api_key" text NOT NULL,
	"order_hash" text,
	"token_id" text NOT NULL,
	"side" text NOT NULL,
	"requested_micros" bigint NOT NULL,
	"order_type" text NOT NULL,
	"signed_order" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "venue_credentials" ADD COLUMN "signer_address" text;--> statement-breakpoint
CREATE UNIQUE INDEX "polymarket_orders_hash_idx" ON "polymarket_orders" USING btree ("order_hash");