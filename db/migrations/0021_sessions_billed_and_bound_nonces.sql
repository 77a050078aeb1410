ALTER TABLE "usage_records" ALTER COLUMN "api_key_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "auth_nonces" ADD COLUMN "binding_hash" text;--> statement-breakpoint
ALTER TABLE "auth_nonces" ADD COLUMN "client_ip" text;--> statement-breakpoint
CREATE INDEX "auth_sessions_account_live_idx" ON "auth_sessions" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "stream_leases_account_idx" ON "stream_leases" USING btree ("account_id","expires_at");