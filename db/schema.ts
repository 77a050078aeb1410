/**
 * The one drizzle schema for both drivers (PostgreSQL via postgres.js, embedded PGlite), one file per
 * area under db/tables/. Migrations in db/migrations are generated from it (`npm run db:generate`).
 */
export * from './tables/accounts.ts';
export * from './tables/companies.ts';
export * from './tables/company-graph.ts';
export * from './tables/events.ts';
export * from './tables/paper.ts';
export * from './tables/trading.ts';
export * from './tables/positions.ts';
export * from './tables/polymarket.ts';
export * from './tables/auth.ts';
export * from './tables/deposits.ts';
export * from './tables/metering.ts';
export * from './tables/market-history.ts';
export * from './tables/notifications.ts';
export * from './tables/audit.ts';
