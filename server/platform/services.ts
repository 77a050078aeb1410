/**
 * Everything a request may use, built once at start (or once per test app) and shared by both
 * transports. Nothing here is rebuilt per request.
 */
import { billingCommitsSynchronously } from '../accounts/billing.ts';
import { RecentKeys } from '../accounts/recent-keys.ts';
import { Refunds } from '../accounts/refunds.ts';
import { DatasetCache } from '../companies/aggregate-cache.ts';
import { companyForMarket } from '../companies/market-companies.ts';
import type { CompanyForMarket } from '../events/handles.ts';
import type { Config } from '../config.ts';
import type { Database } from '../../db/client.ts';
import type { Logger } from '../lib/logger.ts';
import { MarketRecorder } from '../market/recorder.ts';
import { MarketData } from '../market/market-data.ts';
import { CredentialCipher } from '../lib/credential-cipher.ts';
import { createTestVenue, createVenue } from '../venues/index.ts';
import type { Venue } from '../venues/venue.ts';
import type { PublicClient } from 'viem';
import { createPolygonClient } from '../chain/position-reader.ts';
import { createDepositChain, type DepositChain } from '../deposits/chain.ts';
import type { RateLimiter } from './ratelimit/rate-limiter.ts';
import { createMetrics, watchServices, type Metrics } from './metrics/index.ts';
import { bindBillingMetrics } from '../accounts/billing-metrics.ts';

export interface Services {
  config: Config;
  database: Database;
  rateLimiter: RateLimiter;
  logger: Logger;
  /** The operators (DASHBOARD_KEYS): each one's name and the SHA-256 of its key, compared in constant time. */
  operators: { name: string; digest: Uint8Array }[];
  /** Company aggregates and answers (details, pages), valid while the dataset version is unchanged. */
  companyCache: DatasetCache;
  /** Events and order books, refreshed at most once per MARKET_DATA_TTL_MS. */
  marketData: MarketData;
  /** Records a snapshot every MARKET_RECORD_INTERVAL_MS for candles and live streams (started by main.ts). */
  recorder: MarketRecorder;
  /** Seals and opens stored venue credentials. */
  credentialCipher: CredentialCipher;
  /** The execution venue (VENUE): live keys' orders go here. */
  venue: Venue;
  /** Test keys' venue: the paper venue (the same as `venue` when VENUE=paper). */
  testVenue: Venue;
  /** Refunds of failed billed requests, retried while the database is unreachable. */
  refunds: Refunds;
  /** API keys admitted recently: they skip the failed-authentication gate (accounts/recent-keys.ts). */
  recentKeys: RecentKeys;
  /** Reads stablecoin transfers for deposits (DEPOSIT_ADDRESS and POLYGON_RPC_URL set); undefined: deposits are off. */
  depositChain?: DepositChain;
  /** Polygon through POLYGON_RPC_URL, when set: smart-wallet sign-in signatures (ERC-1271/6492) are checked there. */
  polygon?: PublicClient;
  /** Operator metrics, one registry per Services (metrics/index.ts; served at /metrics). */
  metrics: Metrics;
  /** A discovered event's company record, found or created from the market (events/handles.ts). */
  companyForMarket: CompanyForMarket;
}

export function digestOf(text: string): Uint8Array {
  return new Bun.CryptoHasher('sha256').update(text).digest() as Uint8Array;
}

/** The chain deposits are read from: Polygon through POLYGON_RPC_URL, when a deposit address is configured. */
function defaultDepositChain(config: Config, polygon: PublicClient | undefined): DepositChain | undefined {
  if (!config.deposits.address || !polygon) return undefined;
  return createDepositChain(polygon);
}

export function createServices(
  parts: Omit<Services, 'operators' | 'companyCache' | 'marketData' | 'recorder' | 'credentialCipher' | 'venue' | 'testVenue' | 'refunds' | 'recentKeys' | 'depositChain' | 'polygon' | 'metrics' | 'companyForMarket'>,
  options: { venue?: Venue; now?: () => number; depositChain?: DepositChain; polygon?: PublicClient } = {},
): Services {
  const metrics = createMetrics({ enabled: parts.config.metrics.enabled, now: options.now });
  // Every venue call timed, by operation and outcome (metrics/venue.ts).
  const venue = metrics.venue.instrument(options.venue ?? createVenue(parts.config, parts.database.db, options.now));
  const testVenue = venue.name === 'paper' ? venue : metrics.venue.instrument(createTestVenue(parts.config, parts.database.db, venue, options.now));
  const rpc = parts.config.polymarket.polygonRpcUrl;
  const polygon = options.polygon ?? (rpc ? createPolygonClient(rpc, { timeoutMs: parts.config.venueTimeoutMs }) : undefined);
  const { tradingEncryptionKey, tradingEncryptionPreviousKeys } = parts.config;
  if (!tradingEncryptionKey) throw new Error('createServices needs a resolved TRADING_ENCRYPTION_KEY (see resolveEncryptionKey)');
  const marketData = new MarketData(parts.database.db, venue, parts.config.marketDataTtlMs, options.now);
  const services: Services = {
    ...parts,
    operators: parts.config.operators.map((o) => ({ name: o.name, digest: digestOf(o.key) })),
    companyCache: new DatasetCache(),
    companyForMarket,
    marketData,
    recorder: new MarketRecorder(marketData, parts.logger, metrics.jobs),
    credentialCipher: new CredentialCipher(tradingEncryptionKey, tradingEncryptionPreviousKeys),
    venue,
    testVenue,
    recentKeys: new RecentKeys(),
    depositChain: options.depositChain ?? defaultDepositChain(parts.config, polygon),
    polygon,
    refunds: new Refunds(parts.database.db, billingCommitsSynchronously(parts.config.billingSynchronousCommit, parts.database.kind), parts.logger, metrics.billing),
    metrics,
  };
  bindBillingMetrics(parts.database.db, metrics.billing);
  watchServices(metrics, {
    poolUsage: () => services.database.poolUsage(),
    marketSnapshotAgeMs: () => services.marketData.ageMs(),
    rateLimitStoreErrors: () => services.rateLimiter.storeErrors,
    refundsWaiting: () => services.refunds.waiting,
  });
  return services;
}
