CREATE TABLE "paper_payouts" (
	"account_id" text NOT NULL,
	"user_id" text NOT NULL,
	"settlement_id" text NOT NULL,
	"amount_micros" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "paper_payouts_account_id_user_id_settlement_id_pk" PRIMARY KEY("account_id","user_id","settlement_id")
);
--> statement-breakpoint
CREATE TABLE "settlements" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"user_id" text NOT NULL,
	"position_id" text NOT NULL,
	"event_id" text NOT NULL,
	"side" text NOT NULL,
	"outcome" text NOT NULL,
	"winning_band_index" integer,
	"winning_band_id" text,
	"units_micros" bigint NOT NULL,
	"winning_shares_micros" bigint NOT NULL,
	"proceeds_micros" bigint NOT NULL,
	"cost_micros" bigint NOT NULL,
	"realized_pnl_micros" bigint NOT NULL,
	"holdings" jsonb NOT NULL,
	"settled_at" timestamp with time zone DEFAULT now() NOT NULL,
	"paid_at" timestamp with time zone,
	"tx_hash" text
);
--> statement-breakpoint
ALTER TABLE "settlements" ADD CONSTRAINT "settlements_position_id_positions_id_fk" FOREIGN KEY ("position_id") REFERENCES "public"."positions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "settlements_position_idx" ON "settlements" USING btree ("position_id");--> statement-breakpoint
CREATE INDEX "settlements_user_idx" ON "settlements" USING btree ("account_id","user_id","settled_at");--> statement-breakpoint
CREATE INDEX "settlements_unpaid_idx" ON "settlements" USING btree ("settled_at") WHERE "settlements"."paid_at" is null;