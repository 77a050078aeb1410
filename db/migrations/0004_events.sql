CREATE TABLE "event_bands" (
	"event_id" text NOT NULL,
	"band_index" integer NOT NULL,
	"id" text NOT NULL,
	"label" text NOT NULL,
	"min_valuation" double precision NOT NULL,
	"max_valuation" double precision,
	"seed_price" double precision NOT NULL,
	"venue" jsonb NOT NULL,
	CONSTRAINT "event_bands_event_id_band_index_pk" PRIMARY KEY("event_id","band_index")
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"company" text NOT NULL,
	"company_source_id" text,
	"status" text NOT NULL,
	"resolved_band_index" integer,
	"end_date" timestamp with time zone,
	"volume_usd" double precision,
	"venue" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "event_bands" ADD CONSTRAINT "event_bands_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "event_bands_id_idx" ON "event_bands" USING btree ("id");--> statement-breakpoint
CREATE INDEX "event_bands_event_idx" ON "event_bands" USING btree ("event_id");