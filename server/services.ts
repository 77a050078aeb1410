/**
 * Everything a request may use, built once at start (or once per test app) and shared by both
 * transports. Nothing here is rebuilt per request.
 */
import { AggregateCache } from './companies/aggregate-cache.ts';
import type { Config } from './config.ts';
import type { Database } from '../db/client.ts';
import type { Logger } from './lib/logger.ts';
import type { RateLimiter } from './ratelimit/rate-limiter.ts';

export interface Services {
  config: Config;
  database: Database;
  rateLimiter: RateLimiter;
  logger: Logger;
  /** SHA-256 digests of the configured dashboard keys, compared in constant time. */
  dashboardKeyDigests: Uint8Array[];
  /** Company aggregates, valid while the dataset version is unchanged. */
  companyAggregates: AggregateCache;
}

export function digestOf(text: string): Uint8Array {
  return new Bun.CryptoHasher('sha256').update(text).digest() as Uint8Array;
}

export function createServices(parts: Omit<Services, 'dashboardKeyDigests' | 'companyAggregates'>): Services {
  return { ...parts, dashboardKeyDigests: parts.config.dashboardKeys.map(digestOf), companyAggregates: new AggregateCache() };
}
