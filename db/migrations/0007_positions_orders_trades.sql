CREATE TABLE "idempotency_keys" (
	"account_id" text NOT NULL,
	"user_id" text NOT NULL,
	"key" text NOT NULL,
	"request_hash" text NOT NULL,
	"state" text NOT NULL,
	"response_status" integer,
	"response" jsonb,
	"position_id" text,
	"lease_until" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "idempotency_keys_account_id_user_id_key_pk" PRIMARY KEY("account_id","user_id","key")
);
--> statement-breakpoint
CREATE TABLE "orders" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"user_id" text NOT NULL,
	"position_id" text NOT NULL,
	"operation_id" text NOT NULL,
	"purpose" text NOT NULL,
	"band_index" integer NOT NULL,
	"band_id" text NOT NULL,
	"side" text NOT NULL,
	"limit_price_micros" bigint NOT NULL,
	"requested_micros" bigint NOT NULL,
	"filled_micros" bigint DEFAULT 0 NOT NULL,
	"notional_micros" bigint DEFAULT 0 NOT NULL,
	"fees_micros" bigint DEFAULT 0 NOT NULL,
	"status" text NOT NULL,
	"reason" text,
	"venue_order_id" text,
	"tx_hash" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"matched_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "position_bands" (
	"position_id" text NOT NULL,
	"band_index" integer NOT NULL,
	"band_id" text NOT NULL,
	"target_micros" bigint NOT NULL,
	"bought_micros" bigint DEFAULT 0 NOT NULL,
	"entry_cost_micros" bigint DEFAULT 0 NOT NULL,
	"shares_micros" bigint DEFAULT 0 NOT NULL,
	"reserved_micros" bigint DEFAULT 0 NOT NULL,
	"cost_micros" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "position_bands_position_id_band_index_pk" PRIMARY KEY("position_id","band_index"),
	CONSTRAINT "position_bands_shares_non_negative" CHECK ("position_bands"."shares_micros" >= 0 AND "position_bands"."cost_micros" >= 0),
	CONSTRAINT "position_bands_reserved_within_shares" CHECK ("position_bands"."reserved_micros" >= 0 AND "position_bands"."reserved_micros" <= "position_bands"."shares_micros")
);
--> statement-breakpoint
CREATE TABLE "positions" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"user_id" text NOT NULL,
	"event_id" text NOT NULL,
	"side" text NOT NULL,
	"floor_l" double precision NOT NULL,
	"floor_s" double precision NOT NULL,
	"status" text NOT NULL,
	"units_micros" bigint NOT NULL,
	"buy_failed" boolean DEFAULT false NOT NULL,
	"failure_reason" text,
	"close_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"closed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "trades" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"user_id" text NOT NULL,
	"position_id" text NOT NULL,
	"event_id" text NOT NULL,
	"order_id" text NOT NULL,
	"band_id" text NOT NULL,
	"side" text NOT NULL,
	"action" text NOT NULL,
	"shares_micros" bigint NOT NULL,
	"amount_micros" bigint NOT NULL,
	"fees_micros" bigint NOT NULL,
	"realized_pnl_micros" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_position_id_positions_id_fk" FOREIGN KEY ("position_id") REFERENCES "public"."positions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "position_bands" ADD CONSTRAINT "position_bands_position_id_positions_id_fk" FOREIGN KEY ("position_id") REFERENCES "public"."positions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "idempotency_keys_created_idx" ON "idempotency_keys" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "orders_user_idx" ON "orders" USING btree ("account_id","user_id","created_at");--> statement-breakpoint
CREATE INDEX "orders_position_idx" ON "orders" USING btree ("position_id");--> statement-breakpoint
CREATE INDEX "orders_pending_idx" ON "orders" USING btree ("account_id","user_id") WHERE "orders"."status" = 'PENDING';--> statement-breakpoint
CREATE INDEX "positions_user_idx" ON "positions" USING btree ("account_id","user_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "trades_order_idx" ON "trades" USING btree ("order_id");--> statement-breakpoint
CREATE INDEX "trades_user_idx" ON "trades" USING btree ("account_id","user_id","created_at");