-- The paper ledger was keyed by the venue API key a user stored, so tenants who stored the same key
-- shared one paper account. It is now keyed by its owner, (account id, user id) (decisions §8).
-- Every paper order carries our order id as its client order id, and our orders know their owner, so
-- the old ledger is handed to the owners its orders name:
--  * an API key whose orders name one owner: that owner gets its collateral and holdings as they were;
--  * an API key several owners shared: each gets the shared account's starting balance (collateral +
--    what its orders paid − what they received) minus what its own orders paid plus what they
--    received, and the shares its own orders moved, both floored at 0: nobody inherits what another
--    tenant paid for;
--  * a user who traded under several API keys (credentials replaced) gets their sum;
--  * what no order of ours accounts for is dropped: an account that never traded (its owner is
--    opened afresh with PAPER_STARTING_BALANCE_USD on first use) and orders placed from outside.
CREATE TEMP TABLE "paper_legacy_orders" AS
  SELECT p."account_key", o."account_id", o."user_id", p."id", p."client_order_id", p."token_id", p."side",
         p."requested_micros", p."filled_micros", p."notional_micros", p."status", p."reason", p."created_at"
    FROM "paper_orders" p LEFT JOIN "orders" o ON o."id" = p."client_order_id";--> statement-breakpoint
CREATE TEMP TABLE "paper_legacy_shares" AS
  SELECT l."account_key", l."account_id", l."user_id", l."token_id",
         sum(CASE WHEN l."side" = 'BUY' THEN l."filled_micros" ELSE -l."filled_micros" END) AS "shares_micros",
         sum(CASE WHEN l."side" = 'BUY' THEN l."notional_micros" ELSE -l."notional_micros" END) AS "spent_micros"
    FROM "paper_legacy_orders" l
   GROUP BY l."account_key", l."account_id", l."user_id", l."token_id";--> statement-breakpoint
CREATE TEMP TABLE "paper_legacy_owners" AS
  SELECT s."account_key", s."account_id", s."user_id", sum(s."spent_micros") AS "spent_micros",
         count(*) OVER (PARTITION BY s."account_key") AS "owners"
    FROM "paper_legacy_shares" s
   WHERE s."account_id" IS NOT NULL
   GROUP BY s."account_key", s."account_id", s."user_id";--> statement-breakpoint
CREATE TEMP TABLE "paper_legacy_accounts" AS
  SELECT a."account_key", a."collateral_micros", a."created_at",
         a."collateral_micros" + coalesce((SELECT sum(s."spent_micros") FROM "paper_legacy_shares" s WHERE s."account_key" = a."account_key"), 0) AS "starting_micros"
    FROM "paper_accounts" a;--> statement-breakpoint
CREATE TEMP TABLE "paper_legacy_holdings" AS SELECT * FROM "paper_holdings";--> statement-breakpoint
DROP TABLE "paper_orders";--> statement-breakpoint
DROP TABLE "paper_holdings";--> statement-breakpoint
DROP TABLE "paper_accounts";--> statement-breakpoint
CREATE TABLE "paper_accounts" (
	"account_id" text NOT NULL,
	"user_id" text NOT NULL,
	"collateral_micros" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "paper_accounts_account_id_user_id_pk" PRIMARY KEY("account_id","user_id"),
	CONSTRAINT "paper_accounts_collateral_non_negative" CHECK ("paper_accounts"."collateral_micros" >= 0)
);
--> statement-breakpoint
CREATE TABLE "paper_holdings" (
	"account_id" text NOT NULL,
	"user_id" text NOT NULL,
	"token_id" text NOT NULL,
	"shares_micros" bigint NOT NULL,
	CONSTRAINT "paper_holdings_account_id_user_id_token_id_pk" PRIMARY KEY("account_id","user_id","token_id"),
	CONSTRAINT "paper_holdings_non_negative" CHECK ("paper_holdings"."shares_micros" >= 0)
);
--> statement-breakpoint
CREATE TABLE "paper_orders" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"user_id" text NOT NULL,
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
CREATE UNIQUE INDEX "paper_orders_client_idx" ON "paper_orders" USING btree ("account_id","user_id","client_order_id");--> statement-breakpoint
INSERT INTO "paper_accounts" ("account_id", "user_id", "collateral_micros", "created_at")
  SELECT o."account_id", o."user_id",
         sum(CASE WHEN o."owners" = 1 THEN a."collateral_micros" ELSE greatest(0, a."starting_micros" - o."spent_micros") END),
         min(a."created_at")
    FROM "paper_legacy_owners" o JOIN "paper_legacy_accounts" a ON a."account_key" = o."account_key"
   GROUP BY o."account_id", o."user_id";--> statement-breakpoint
INSERT INTO "paper_holdings" ("account_id", "user_id", "token_id", "shares_micros")
  SELECT h."account_id", h."user_id", h."token_id", sum(h."shares_micros")
    FROM (
      SELECT o."account_id", o."user_id", lh."token_id", lh."shares_micros"
        FROM "paper_legacy_owners" o JOIN "paper_legacy_holdings" lh ON lh."account_key" = o."account_key"
       WHERE o."owners" = 1
      UNION ALL
      SELECT s."account_id", s."user_id", s."token_id", greatest(0, s."shares_micros")
        FROM "paper_legacy_owners" o
        JOIN "paper_legacy_shares" s ON s."account_key" = o."account_key" AND s."account_id" = o."account_id" AND s."user_id" = o."user_id"
       WHERE o."owners" > 1
    ) h
   GROUP BY h."account_id", h."user_id", h."token_id"
  HAVING sum(h."shares_micros") > 0;--> statement-breakpoint
INSERT INTO "paper_orders" ("id", "account_id", "user_id", "client_order_id", "token_id", "side", "requested_micros", "filled_micros", "notional_micros", "status", "reason", "created_at")
  SELECT DISTINCT ON (l."account_id", l."user_id", l."client_order_id")
         l."id", l."account_id", l."user_id", l."client_order_id", l."token_id", l."side", l."requested_micros", l."filled_micros", l."notional_micros", l."status", l."reason", l."created_at"
    FROM "paper_legacy_orders" l
   WHERE l."account_id" IS NOT NULL
   -- The same client order id under two API keys (a cancel recorded under new credentials): the real order wins.
   ORDER BY l."account_id", l."user_id", l."client_order_id", (l."reason" = 'cancelled-before-placement') NULLS FIRST, l."created_at";--> statement-breakpoint
DROP TABLE "paper_legacy_orders";--> statement-breakpoint
DROP TABLE "paper_legacy_shares";--> statement-breakpoint
DROP TABLE "paper_legacy_owners";--> statement-breakpoint
DROP TABLE "paper_legacy_accounts";--> statement-breakpoint
DROP TABLE "paper_legacy_holdings";
