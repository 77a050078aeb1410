CREATE TABLE "valuation_candles" (
	"event_id" text NOT NULL,
	"interval" text NOT NULL,
	"start" timestamp with time zone NOT NULL,
	"end" timestamp with time zone NOT NULL,
	"implied_open" double precision,
	"implied_high" double precision,
	"implied_low" double precision,
	"implied_close" double precision,
	"long_open_micros" bigint NOT NULL,
	"long_high_micros" bigint NOT NULL,
	"long_low_micros" bigint NOT NULL,
	"long_close_micros" bigint NOT NULL,
	"short_open_micros" bigint NOT NULL,
	"short_high_micros" bigint NOT NULL,
	"short_low_micros" bigint NOT NULL,
	"short_close_micros" bigint NOT NULL,
	"bands" jsonb NOT NULL,
	"samples" integer NOT NULL,
	"source" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "valuation_candles_event_id_interval_start_pk" PRIMARY KEY("event_id","interval","start"),
	CONSTRAINT "valuation_candles_span" CHECK ("valuation_candles"."end" > "valuation_candles"."start")
);
--> statement-breakpoint
CREATE TABLE "account_events" (
	"seq" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "account_events_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"id" text NOT NULL,
	"account_id" text NOT NULL,
	"user_id" text,
	"type" text NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "stream_leases" (
	"id" text PRIMARY KEY NOT NULL,
	"key_hash" text,
	"account_id" text,
	"client_ip" text,
	"kind" text NOT NULL,
	"opened_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"webhook_id" text NOT NULL,
	"account_id" text NOT NULL,
	"event_id" text NOT NULL,
	"type" text NOT NULL,
	"payload" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"lease_owner" text,
	"lease_until" timestamp with time zone,
	"last_status_code" integer,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone,
	CONSTRAINT "webhook_deliveries_attempts" CHECK ("webhook_deliveries"."attempts" >= 0)
);
--> statement-breakpoint
CREATE TABLE "webhooks" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"url" text NOT NULL,
	"events" jsonb NOT NULL,
	"secret_sealed" text NOT NULL,
	"previous_secret_sealed" text,
	"previous_secret_until" timestamp with time zone,
	"status" text DEFAULT 'active' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "valuation_candles_interval_start_idx" ON "valuation_candles" USING btree ("interval","start");--> statement-breakpoint
CREATE UNIQUE INDEX "account_events_id_idx" ON "account_events" USING btree ("id");--> statement-breakpoint
CREATE INDEX "account_events_account_seq_idx" ON "account_events" USING btree ("account_id","seq");--> statement-breakpoint
CREATE INDEX "stream_leases_key_idx" ON "stream_leases" USING btree ("key_hash","expires_at");--> statement-breakpoint
CREATE INDEX "stream_leases_ip_idx" ON "stream_leases" USING btree ("client_ip","expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_once_idx" ON "webhook_deliveries" USING btree ("webhook_id","event_id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_webhook_idx" ON "webhook_deliveries" USING btree ("webhook_id","created_at");--> statement-breakpoint
CREATE INDEX "webhooks_account_idx" ON "webhooks" USING btree ("account_id","created_at");