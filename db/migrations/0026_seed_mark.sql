ALTER TABLE "company_dataset_state" ADD COLUMN "seed_build" text;--> statement-breakpoint
ALTER TABLE "company_dataset_state" ADD COLUMN "seeded_version" bigint;