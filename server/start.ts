/**
 * Opens everything the service needs (database, migrations, seeds, rate limiter) from a Config.
 * Used by the server process, the CLI and the seed script; tests build Services themselves.
 */
import { mkdirSync } from 'node:fs';
import { openDatabase } from '../db/client.ts';
import { seedDatabase } from '../seeds/index.ts';
import type { Config } from './config.ts';
import { createLogger } from './lib/logger.ts';
import { MemoryRateLimiter } from './ratelimit/rate-limiter.ts';
import { RedisRateLimiter } from './ratelimit/redis-rate-limiter.ts';
import { createServices, type Services } from './services.ts';

export async function openServices(config: Config, options: { seed?: boolean } = {}): Promise<Services> {
  const logger = createLogger(config.logLevel);
  if (config.database.kind === 'pglite' && config.database.dataDir !== ':memory:') {
    mkdirSync(config.database.dataDir, { recursive: true });
  }
  const database = await openDatabase(config.database);
  await database.migrate();
  if (options.seed ?? config.seedOnStart) await seedDatabase(database.db, logger);
  const rateLimiter = config.redisUrl ? new RedisRateLimiter(config.redisUrl) : new MemoryRateLimiter();
  return createServices({ config, database, rateLimiter, logger });
}

export async function closeServices(services: Services) {
  await services.rateLimiter.close();
  await services.database.close();
}
