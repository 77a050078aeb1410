CREATE TABLE "trading_settings" (
	"account_id" text NOT NULL,
	"user_id" text NOT NULL,
	"floor_l" double precision,
	"floor_s" double precision,
	"wallet_address" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "trading_settings_account_id_user_id_pk" PRIMARY KEY("account_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "venue_credentials" (
	"account_id" text NOT NULL,
	"user_id" text NOT NULL,
	"key_id" text NOT NULL,
	"iv" text NOT NULL,
	"ciphertext" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "venue_credentials_account_id_user_id_pk" PRIMARY KEY("account_id","user_id")
);
