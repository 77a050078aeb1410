import { defineConfig } from 'drizzle-kit';

// Only `drizzle-kit generate` is used: it writes SQL migrations, which the server applies at start.
export default defineConfig({ dialect: 'postgresql', schema: './db/schema.ts', out: './db/migrations' });
