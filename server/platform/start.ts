/**
 * Opens everything the service needs (database, migrations, seeds, rate limiter) from a Config.
 * Used by the server process, the CLI and the seed script; tests build Services themselves.
 * What can stop a start is a StartupError (one line, an exit code: lib/startup-error.ts).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase, type Database } from '../../db/client.ts';
import { seedDatabase } from '../../seeds/index.ts';
import { ConfigError, type Config } from '../config.ts';
import type { Logger } from '../lib/logger.ts';
import { createLogger } from '../lib/logger.ts';
import { lockDataDir, type DataDirLock } from '../lib/data-dir-lock.ts';
import { createPrivateDir, tightenModes } from '../lib/data-dir-modes.ts';
import { giveBackMemory } from '../lib/memory.ts';
import { EXIT, StartAborted, StartupError } from '../lib/startup-error.ts';
import { waitForPostgres } from '../lib/wait-for-postgres.ts';
import { MemoryRateLimiter, type RateLimiter } from './ratelimit/rate-limiter.ts';
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
    throw new ConfigError(
      'Invalid configuration:\n  TRADING_ENCRYPTION_KEY: required with DATABASE_URL (64 hexadecimal characters); make one with\n' +
        `    export TRADING_ENCRYPTION_KEY=$(node -e "console.log(require('crypto').randomBytes(32).toString('hex'))")\n` +
        '  and keep it: the venue credentials stored under it cannot be read without it',
    );
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

export interface OpenOptions {
  /** Seed the database (default: SEED_ON_START). */
  seed?: boolean;
  /**
   * Compare every seed record even when the database holds this build of the seed, unchanged since
   * (seeds/seed-mark.ts; a start skips that comparison): `npm run seed` does.
   */
  forceSeed?: boolean;
  /** Where log lines go (default: a JSON-lines logger on stdout at LOG_LEVEL). */
  logger?: Logger;
  /** Aborted when the process is told to stop while starting: openServices unwinds with StartAborted. */
  signal?: AbortSignal;
}

/**
 * Claims the embedded data directory before anything opens it: created 0700, locked for this process
 * (or a StartupError naming the holder), an existing tree made private (said in a warning: it was
 * readable by other users until now).
 */
async function claimDataDir(dataDir: string, logger: Logger): Promise<DataDirLock> {
  createPrivateDir(dataDir);
  const lock = await lockDataDir(dataDir);
  const tightened = tightenModes(dataDir);
  if (tightened > 0) {
    logger.warn('DATA_DIR was readable by other users: made its directories 0700 and its files 0600', { dataDir, entries: tightened });
  }
  if (lock.kind === 'pid-file') {
    logger.warn('flock is not available here: DATA_DIR is guarded by its pid file only; never run two processes on it', { dataDir });
  }
  return lock;
}

function throwIfAborted(signal: AbortSignal | undefined) {
  if (signal?.aborted) throw new StartAborted();
}

/**
 * The database, migrated (and seeded when asked), then everything built on it. On the embedded
 * database the data directory is locked first; on PostgreSQL an unreachable server is waited for
 * (wait-for-postgres.ts). A failure releases whatever was already opened.
 */
export async function openServices(config: Config, options: OpenOptions = {}): Promise<Services> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const { signal } = options;
  const dataDir = config.database.kind === 'pglite' && config.database.dataDir !== ':memory:' ? config.database.dataDir : undefined;
  let lock: DataDirLock | undefined;
  let database: Database | undefined;
  let rateLimiter: RateLimiter | undefined;
  try {
    if (dataDir) lock = await claimDataDir(dataDir, logger);
    config = { ...config, tradingEncryptionKey: resolveEncryptionKey(config, logger) };
    database = await openDatabase(config.database);
    if (dataDir) tightenModes(dataDir); // PGlite's own 0666/0644 files (data-dir-modes.ts)
    if (config.database.kind === 'postgres') {
      await waitForPostgres(database, { url: config.database.url, timeoutMs: config.databaseStartTimeoutMs, logger, signal });
    }
    throwIfAborted(signal);
    await database.migrate();
    throwIfAborted(signal);
    const seeded = options.seed ?? config.seedOnStart ? await seedDatabase(database.db, logger, undefined, { force: options.forceSeed }) : 0;
    if (seeded > 0 && dataDir) {
      // A seed that wrote rows (a first start) grew PGlite's WebAssembly memory, which never shrinks:
      // opened again, the database starts from what an idle one needs (279 → ~240 MB idle after a
      // first start; docs/performance.md). Half a second, once.
      await database.close();
      database = await openDatabase(config.database);
      tightenModes(dataDir); // the files PostgreSQL wrote on opening again (its relation cache's pg_internal.init)
    }
    // What opening, migrating and seeding left (a restored template, parsed seed files): collected
    // now, before the first request, rather than whenever the heap next fills, and the freed pages
    // given back (docs/performance.md).
    giveBackMemory();
    throwIfAborted(signal);
    rateLimiter = config.redisUrl ? new RedisRateLimiter(config.redisUrl, { timeoutMs: config.redisTimeoutMs }) : new MemoryRateLimiter();
    return createServices({ config, database: lock ? releasingOnClose(database, lock) : database, rateLimiter, logger });
  } catch (error) {
    await rateLimiter?.close().catch(() => {});
    // Bounded: closing a PostgreSQL pool waits for its unanswered queries (5 s) otherwise.
    if (database) await Promise.race([database.close().catch(() => {}), Bun.sleep(1_000)]);
    lock?.release();
    throw error;
  }
}

/** The same database, whose close also releases the data directory's lock. */
function releasingOnClose(database: Database, lock: DataDirLock): Database {
  return {
    ...database,
    close: async () => {
      try {
        await database.close();
      } finally {
        lock.release();
      }
    },
  };
}

/**
 * For entry points: a ConfigError or StartupError is printed as its one line on stderr and ends the
 * process with its exit code (78 for configuration); any other error returns to the caller.
 */
export function exitOnStartupFailure(error: unknown): void {
  if (error instanceof ConfigError || error instanceof StartupError) {
    console.error(error.message);
    process.exit(error instanceof StartupError ? error.exitCode : EXIT.config);
  }
}

export async function closeServices(services: Services) {
  await services.rateLimiter.close();
  await services.database.close();
}
