/**
 * Opens everything the service needs (database, migrations, seeds, rate limiter) from a Config.
 * Used by the server process, the CLI and the seed script; tests build Services themselves.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../db/client.ts';
import { seedDatabase } from '../seeds/index.ts';
import { ConfigError, type Config } from './config.ts';
import type { Logger } from './lib/logger.ts';
import { createLogger } from './lib/logger.ts';
import { MemoryRateLimiter } from './ratelimit/rate-limiter.ts';
import { RedisRateLimiter } from './ratelimit/redis-rate-limiter.ts';
import { createServices, type Services } from './services.ts';

/**
 * The credential key: TRADING_ENCRYPTION_KEY when set. Without it, the embedded database keeps a
 * generated key in its data directory (0600), and `:memory:` uses a key that dies with the process.
 * PostgreSQL deployments must set it: a key lost with a container would lose every credential.
 */
export function resolveEncryptionKey(config: Config, logger: Logger): string {
  if (config.tradingEncryptionKey) return config.tradingEncryptionKey;
  if (config.database.kind === 'postgres') {
    throw new ConfigError('Invalid configuration:\n  TRADING_ENCRYPTION_KEY: required with DATABASE_URL (64 hexadecimal characters)');
  }
  const random = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex');
  if (config.database.dataDir === ':memory:') {
    logger.warn('TRADING_ENCRYPTION_KEY is not set: using a key that lasts only as long as this in-memory database');
    return random();
  }
  const file = join(config.database.dataDir, 'trading-encryption.key');
  if (!existsSync(file)) writeFileSync(file, random() + '\n', { mode: 0o600 });
  logger.warn('TRADING_ENCRYPTION_KEY is not set: using the key kept in the data directory', { file });
  return readFileSync(file, 'utf8').trim();
}

export async function openServices(config: Config, options: { seed?: boolean } = {}): Promise<Services> {
  const logger = createLogger(config.logLevel);
  if (config.database.kind === 'pglite' && config.database.dataDir !== ':memory:') {
    mkdirSync(config.database.dataDir, { recursive: true });
  }
  config = { ...config, tradingEncryptionKey: resolveEncryptionKey(config, logger) };
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
