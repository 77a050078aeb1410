-- Trigram matching for company search (close spellings, indexed substring search).
-- PGlite loads the extension's code through its `extensions` option (db/client.ts).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
