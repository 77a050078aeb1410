/**
 * Configuration: every environment variable the service reads, parsed once at start with zod.
 * A bad value stops the server with a message naming the variable. `.env.example` mirrors this file.
 */
import { z } from 'zod';
import { parseUsd } from './lib/money.ts';

const csv = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const boolean = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
    .optional()
    .transform((v) => (v === undefined ? fallback : ['true', '1', 'yes'].includes(v)));

const int = (fallback: number, min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return fallback;
      const n = /^\d+$/.test(v) ? Number(v) : NaN;
      if (!(n >= min && n <= max)) {
        ctx.addIssue({ code: 'custom', message: `must be a whole number from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    });

/** A whole number, or undefined when unset (its default depends on other settings). */
const optionalInt = (min: number, max: number) => int(-1, min, max).transform((n) => (n === -1 ? undefined : n));

const rate = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return fallback;
      const n = /^\d+(\.\d+)?$/.test(v) ? Number(v) : NaN;
      if (!(n > 0 && n <= 1_000_000)) {
        ctx.addIssue({ code: 'custom', message: 'must be a positive number of requests per second' });
        return z.NEVER;
      }
      return n;
    });

/** A DASHBOARD_KEYS entry: `name=key` names its operator (letters, digits, . _ -; up to 32); else the whole entry is the key. */
const OPERATOR_NAME = /^([A-Za-z0-9._-]{1,32})=(.+)$/;
function operatorEntry(entry: string, index: number): { name: string; key: string } {
  const named = OPERATOR_NAME.exec(entry);
  return named ? { name: named[1]!, key: named[2]! } : { name: `operator-${index + 1}`, key: entry };
}

const usdAmount = (fallback: string, example: string) =>
  z
    .string()
    .default(fallback)
    .transform((v, ctx) => {
      const micros = parseUsd(v);
      if (micros === undefined) {
        ctx.addIssue({ code: 'custom', message: `must be a decimal USD amount with at most 6 decimals, e.g. ${example}` });
        return z.NEVER;
      }
      return micros;
    });

const origin = z.string().refine((o) => {
  try {
    const u = new URL(o);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === o;
  } catch {
    return false;
  }
}, 'must be an origin such as https://app.example.com (scheme and host, no path, no trailing slash)');

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: int(3000, 0, 65535),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL (leave unset for the embedded database)')
    .optional(),
  DATA_DIR: z.string().min(1).default('./.data'),
  DATABASE_POOL_SIZE: int(10, 1, 200),
  // Each entry `name=key` (a named operator) or a bare key (named operator-<n> by its position).
  DASHBOARD_KEYS: z
    .string()
    .optional()
    .transform(csv)
    .transform((entries) => entries.map(operatorEntry))
    .pipe(z.array(z.object({ name: z.string(), key: z.string().min(32, 'each dashboard key must be at least 32 characters') })))
    .refine((operators) => new Set(operators.map((o) => o.name)).size === operators.length, 'each operator name once'),
  TRADING_ENCRYPTION_KEY: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hexadecimal characters (32 bytes)')
    .optional(),
  TRADING_ENCRYPTION_PREVIOUS_KEYS: z
    .string()
    .optional()
    .transform(csv)
    .pipe(z.array(z.string().regex(/^[0-9a-fA-F]{64}$/, 'each key must be 64 hexadecimal characters'))),
  COST_PER_REQUEST_USD: usdAmount('0.002', '0.002'),
  TEST_COST_PER_REQUEST_USD: usdAmount('0', '0'),
  BILLING_SYNCHRONOUS_COMMIT: boolean(false),
  CORS_ORIGINS: z.string().optional().transform(csv).pipe(z.array(origin)),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .optional(),
  RATE_LIMIT_KEY_RPS: rate(50),
  RATE_LIMIT_KEY_BURST: int(100, 1, 1_000_000),
  RATE_LIMIT_TRADE_RPS: rate(10),
  RATE_LIMIT_TRADE_BURST: int(20, 1, 1_000_000),
  RATE_LIMIT_TEST_RPS: rate(5),
  RATE_LIMIT_TEST_BURST: int(50, 1, 1_000_000),
  RATE_LIMIT_IP_RPS: rate(20),
  RATE_LIMIT_IP_BURST: int(40, 1, 1_000_000),
  TRUST_PROXY: boolean(false),
  TRUST_PROXY_HOPS: int(1, 1, 10),
  RATE_LIMIT_AUTH_FAILURE_RPS: rate(1),
  RATE_LIMIT_AUTH_FAILURE_BURST: int(20, 1, 1_000_000),
  RATE_LIMIT_SIGN_IN_RPS: rate(0.2),
  RATE_LIMIT_SIGN_IN_BURST: int(10, 1, 1_000_000),
  RATE_LIMIT_DEPOSIT_FAILURE_RPS: rate(0.1),
  RATE_LIMIT_DEPOSIT_FAILURE_BURST: int(10, 1, 1_000_000),
  REDIS_TIMEOUT_MS: int(50, 5, 10_000),
  DATABASE_START_TIMEOUT_MS: int(30_000, 0, 600_000),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  SEED_ON_START: boolean(true),
  SHUTDOWN_TIMEOUT_MS: int(10_000, 0, 600_000),
  MAX_BODY_BYTES: int(1_048_576, 1024, 100 * 1_048_576),
  VENUE: z.enum(['paper', 'polymarket'], { error: 'must be paper or polymarket' }).default('paper'),
  POLYMARKET_CLOB_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).default('https://clob.polymarket.com'),
  POLYGON_RPC_URL: z.url({ protocol: /^(https?|wss?)$/, error: 'must be an http(s) or ws(s) URL' }).optional(),
  POLYMARKET_RELAYER_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).default('https://relayer-v2.polymarket.com'),
  POLYMARKET_BUILDER_API_KEY: z.string().max(200).optional(),
  POLYMARKET_BUILDER_SECRET: z.string().max(200).optional(),
  POLYMARKET_BUILDER_PASSPHRASE: z.string().max(200).optional(),
  SETTLEMENT_INTERVAL_MS: int(60_000, 0, 86_400_000),
  UNIT_LEASE_MS: int(300_000, 1_000, 86_400_000),
  GAMMA_API_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  EVENT_DISCOVERY_INTERVAL_MS: optionalInt(0, 86_400_000),
  EVENT_AUTO_LIST: boolean(false),
  PUBLIC_URL: origin.optional(),
  SIWE_CHAIN_ID: int(137, 1, 2 ** 31 - 1),
  SESSION_TTL_HOURS: int(168, 1, 24 * 365),
  SESSION_MAX_PER_ACCOUNT: int(10, 1, 1_000),
  DEPOSIT_ADDRESS: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte address')
    .optional(),
  DEPOSIT_TOKENS: z
    .string()
    .default('0x3c499c542cef5e3811e1192ce70d8cc03d5c3359,0x2791bca1f2de4661ed88a30c99a7a9449aa84174')
    .transform(csv)
    .pipe(z.array(z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'each token must be a 0x-prefixed 20-byte address')).min(1)),
  DEPOSIT_MIN_USD: usdAmount('1', '1'),
  DEPOSIT_SCAN_INTERVAL_MS: int(15_000, 0, 86_400_000),
  DEPOSIT_NOT_FOUND_TTL_MS: int(10_000, 0, 600_000),
  DEPOSIT_NOT_FOUND_CACHE_SIZE: int(10_000, 1, 1_000_000),
  STRIPE_SECRET_KEY: z.string().max(300).optional(),
  STRIPE_API_BASE: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).default('https://api.stripe.com'),
  STRIPE_METER_EVENT_NAME: z.string().min(1).max(100).default('api_usage_micro_usd'),
  METER_EXPORT_INTERVAL_MS: int(60_000, 0, 86_400_000),
  PAPER_SEED: int(1, 0, 2 ** 31 - 1),
  PAPER_DRIFT: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const n = v === undefined ? 0.03 : /^\d+(\.\d+)?$/.test(v) ? Number(v) : NaN;
      if (!(n >= 0 && n <= 0.5)) {
        ctx.addIssue({ code: 'custom', message: 'must be a price amplitude from 0 to 0.5' });
        return z.NEVER;
      }
      return n;
    }),
  MARKET_DATA_TTL_MS: int(2000, 0, 600_000),
  MARKET_RECORD_INTERVAL_MS: int(2000, 0, 600_000),
  CANDLE_MINUTE_RETENTION_DAYS: int(30, 1, 3650),
  HISTORY_FILL_INTERVAL_MS: int(3_600_000, 0, 86_400_000),
  STREAM_HEARTBEAT_MS: int(15_000, 1000, 600_000),
  STREAM_MAX_PER_KEY: int(5, 1, 10_000),
  STREAM_MAX_PER_ACCOUNT: int(20, 1, 100_000),
  STREAM_MAX_PER_IP: int(20, 1, 100_000),
  WEBHOOK_INTERVAL_MS: int(1000, 0, 3_600_000),
  WEBHOOK_TIMEOUT_MS: int(10_000, 100, 120_000),
  WEBHOOK_SLOW_TIMEOUT_MS: int(3_000, 100, 120_000),
  WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: int(2, 1, 1000),
  WEBHOOK_RETRY_HOURS: int(24, 1, 720),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: boolean(false),
  WEBHOOK_LOCAL_RECEIVERS: z
    .string()
    .optional()
    .transform((v) => csv(v).map((s) => s.toLowerCase()))
    .pipe(z.array(z.string().regex(/^(localhost|127\.0\.0\.1|\[::1\]):([1-9]\d{0,3}|[1-5]\d{4}|6[0-4]\d{3}|65[0-4]\d{2}|655[0-2]\d|6553[0-5])$/, 'must list receivers on this machine as host:port, e.g. localhost:9000 (host localhost, 127.0.0.1 or [::1])'))),
  BALANCE_LOW_USD: usdAmount('1', '1'),
  PAPER_STARTING_BALANCE_USD: usdAmount('10000', '10000'),
  VENUE_TIMEOUT_MS: int(10_000, 100, 120_000),
  METRICS_ENABLED: boolean(true),
  METRICS_PORT: int(0, 1, 65535),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
});

export type Env = z.input<typeof envSchema>;

/** Every variable the service reads (kept in step with .env.example by a test). */
export const ENV_VARIABLES = Object.keys(envSchema.shape);

export interface RateRule {
  rps: number;
  burst: number;
}

export interface Config {
  nodeEnv: 'development' | 'production' | 'test';
  port: number;
  host: string;
  database: { kind: 'postgres'; url: string; poolSize: number } | { kind: 'pglite'; dataDir: string };
  dashboardKeys: string[];
  /** The operators: a name each, and the dashboard key they present (the audit log names them). */
  operators: { name: string; key: string }[];
  tradingEncryptionKey?: string;
  /** Older keys that still open rows sealed before a rotation. */
  tradingEncryptionPreviousKeys: string[];
  costPerRequestMicros: number;
  /** The standard price of a test key's call (docs/accounts.md, "Test mode"), from its account's test balance; 0 = free. */
  testCostPerRequestMicros: number;
  /** Wait for the WAL flush when committing a request's charge (see accounts/billing.ts). */
  billingSynchronousCommit: boolean;
  corsOrigins: string[];
  redisUrl?: string;
  /**
   * authFailure: failed authentications (unknown, revoked or malformed keys) per client IP.
   * signIn: wallet sign-ins — nonces per client IP, verifications per client IP and per wallet (server/platform/procedures/sign-in-limits.ts).
   * depositFailure: failed deposit claims, per account and per client IP (server/platform/procedures/deposit-claim-limits.ts).
   */
  /** `test`: a test key's calls, per account (its test side) and per client address (accounts/modes.ts): free calls are bounded where money is not. */
  rateLimits: { key: RateRule; trade: RateRule; test: RateRule; ip: RateRule; authFailure: RateRule; depositFailure: RateRule; signIn: RateRule };
  trustProxy: boolean;
  /** How many proxies we run in front of the service: the client IP is the address the outermost one saw. */
  trustProxyHops: number;
  /** Deadline of one Redis call; past it the request goes unlimited (rate limiting fails open). */
  redisTimeoutMs: number;
  /** How long a starting server retries an unreachable PostgreSQL before it gives up (exit 69). */
  databaseStartTimeoutMs: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  seedOnStart: boolean;
  shutdownTimeoutMs: number;
  maxBodyBytes: number;
  venue: 'paper' | 'polymarket';
  polymarket: {
    clobUrl: string;
    polygonRpcUrl?: string;
    relayerUrl: string;
    /** Builder API credentials for the relayer (live redemption); all three or none. */
    builder?: { apiKey: string; secret: string; passphrase: string };
  };
  /** How often the settlement worker finishes deferred and unpaid settlements; 0: never (events:sync and resolutions still do). */
  settlementIntervalMs: number;
  /**
   * How long a provisional unit of a call priced in units (the company export) waits to be written:
   * a stream keeps extending its units while it runs; units a dead process left behind are refunded
   * this long after their last extension (accounts/unit-charges.ts).
   */
  unitLeaseMs: number;
  /**
   * The market universe: Gamma's base URL; how often discovery looks for new IPO valuation events
   * (0: never; unset, every hour, except on the paper venue without GAMMA_API_URL); whether what it
   * finds is listed at once (else proposed to an operator).
   */
  discovery: { gammaUrl: string; intervalMs: number; autoList: boolean };
  /** Wallet sign-in: the service's own origin (the SIWE domain and URI), the chain id, session lifetime. */
  /** sessionMaxPerAccount: live sessions an account may hold; a sign-in beyond revokes the oldest. */
  /**
   * publicUrl: the service's origin (PUBLIC_URL, else http://localhost:PORT). origins: the origins that
   * are this service — PUBLIC_URL alone when it is set; else localhost, 127.0.0.1 and [::1] on PORT,
   * which on a developer's machine are one service (docs/decisions.md §3).
   */
  auth: { publicUrl: string; origins: string[]; chainId: number; sessionTtlMs: number; sessionMaxPerAccount: number };
  /**
   * Stablecoin deposits; `address` unset: deposits are off. Tokens in lower case.
   * notFound: how long (ms, 0: never) and how many hashes the chain did not know a claim answers
   * without reading again, per instance (server/deposits/claim-reads.ts).
   */
  deposits: { address?: string; tokens: string[]; minMicros: number; scanIntervalMs: number; notFound?: { ttlMs: number; maxEntries: number } };
  /** Metered usage export to Stripe; `secretKey` unset: no export. */
  stripe: { secretKey?: string; apiBase: string; meterEventName: string; exportIntervalMs: number };
  paper: { seed: number; drift: number; startingBalanceMicros: number };
  marketDataTtlMs: number;
  /**
   * Market data over time: how often the recorder takes a snapshot for candles and live
   * streams (0: never, e.g. in tests that drive it by hand), and how long 1-minute candles are kept.
   */
  marketRecord: { intervalMs: number; oneMinuteRetentionDays: number; fillIntervalMs: number };
  /**
   * Live streams : heartbeat period; private streams one credential (key or session) and
   * one account (all its credentials) may hold open; streams of any kind one client address may hold open.
   */
  streams: { heartbeatMs: number; maxPerKey: number; maxPerAccount: number; maxPerIp: number };
  /**
   * Signed webhooks: worker period (0: off), one delivery's deadline, how long retries go on, SSRF guard;
   * fairness: the deadline of an endpoint that timed out twice in a row, attempts of one account in flight per instance.
   */
  webhooks: { intervalMs: number; timeoutMs: number; retryHours: number; allowPrivateNetworks: boolean; slowTimeoutMs: number; maxInFlightPerAccount: number;
    /** WEBHOOK_LOCAL_RECEIVERS: loopback host:port pairs a development server may deliver to (server/webhooks/ssrf.ts, localReceiversOf). */
    localReceivers: string[] };
  /** A prepaid balance under this (micro-USD) emits balance.low once per crossing. */
  balanceLowMicros: number;
  /** Deadline of one venue call; an order whose placement outlives it stays PENDING for orders/sync. */
  venueTimeoutMs: number;
  /**
   * Operator metrics (docs/metrics.md): `enabled` false records nothing per request and answers /metrics
   * 404; `port` set: a second listener on `host` serves /metrics without a key (never expose it publicly).
   */
  metrics: { enabled: boolean; port?: number; host: string };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses the environment; throws ConfigError listing every bad variable by name. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // An empty value (`NAME=` in a .env file) means unset, for every variable.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${String(i.path[0])}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const builderParts = [e.POLYMARKET_BUILDER_API_KEY, e.POLYMARKET_BUILDER_SECRET, e.POLYMARKET_BUILDER_PASSPHRASE];
  if (builderParts.some(Boolean) && !builderParts.every(Boolean)) {
    throw new ConfigError('Invalid configuration:\n  POLYMARKET_BUILDER_API_KEY, POLYMARKET_BUILDER_SECRET, POLYMARKET_BUILDER_PASSPHRASE: set all three or none');
  }
  return {
    nodeEnv: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    database: e.DATABASE_URL
      ? { kind: 'postgres', url: e.DATABASE_URL, poolSize: e.DATABASE_POOL_SIZE }
      : { kind: 'pglite', dataDir: e.DATA_DIR },
    dashboardKeys: e.DASHBOARD_KEYS.map((o) => o.key),
    operators: e.DASHBOARD_KEYS,
    tradingEncryptionKey: e.TRADING_ENCRYPTION_KEY?.toLowerCase(),
    tradingEncryptionPreviousKeys: e.TRADING_ENCRYPTION_PREVIOUS_KEYS.map((k) => k.toLowerCase()),
    costPerRequestMicros: e.COST_PER_REQUEST_USD,
    testCostPerRequestMicros: e.TEST_COST_PER_REQUEST_USD,
    billingSynchronousCommit: e.BILLING_SYNCHRONOUS_COMMIT,
    corsOrigins: e.CORS_ORIGINS,
    redisUrl: e.REDIS_URL,
    rateLimits: {
      key: { rps: e.RATE_LIMIT_KEY_RPS, burst: e.RATE_LIMIT_KEY_BURST },
      trade: { rps: e.RATE_LIMIT_TRADE_RPS, burst: e.RATE_LIMIT_TRADE_BURST },
      test: { rps: e.RATE_LIMIT_TEST_RPS, burst: e.RATE_LIMIT_TEST_BURST },
      ip: { rps: e.RATE_LIMIT_IP_RPS, burst: e.RATE_LIMIT_IP_BURST },
      authFailure: { rps: e.RATE_LIMIT_AUTH_FAILURE_RPS, burst: e.RATE_LIMIT_AUTH_FAILURE_BURST },
      signIn: { rps: e.RATE_LIMIT_SIGN_IN_RPS, burst: e.RATE_LIMIT_SIGN_IN_BURST },
      depositFailure: { rps: e.RATE_LIMIT_DEPOSIT_FAILURE_RPS, burst: e.RATE_LIMIT_DEPOSIT_FAILURE_BURST },
    },
    trustProxy: e.TRUST_PROXY,
    trustProxyHops: e.TRUST_PROXY_HOPS,
    redisTimeoutMs: e.REDIS_TIMEOUT_MS,
    databaseStartTimeoutMs: e.DATABASE_START_TIMEOUT_MS,
    logLevel: e.LOG_LEVEL,
    seedOnStart: e.SEED_ON_START,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    maxBodyBytes: e.MAX_BODY_BYTES,
    venue: e.VENUE,
    polymarket: {
      clobUrl: e.POLYMARKET_CLOB_URL.replace(/\/$/, ''),
      polygonRpcUrl: e.POLYGON_RPC_URL,
      relayerUrl: e.POLYMARKET_RELAYER_URL.replace(/\/$/, ''),
      builder: e.POLYMARKET_BUILDER_API_KEY ? { apiKey: e.POLYMARKET_BUILDER_API_KEY, secret: e.POLYMARKET_BUILDER_SECRET!, passphrase: e.POLYMARKET_BUILDER_PASSPHRASE! } : undefined,
    },
    settlementIntervalMs: e.SETTLEMENT_INTERVAL_MS,
    unitLeaseMs: e.UNIT_LEASE_MS,
    discovery: {
      gammaUrl: (e.GAMMA_API_URL ?? 'https://gamma-api.polymarket.com').replace(/\/$/, ''),
      intervalMs: e.EVENT_DISCOVERY_INTERVAL_MS ?? (e.VENUE === 'paper' && !e.GAMMA_API_URL ? 0 : 3_600_000),
      autoList: e.EVENT_AUTO_LIST,
    },
    auth: {
      publicUrl: e.PUBLIC_URL ?? `http://localhost:${e.PORT}`,
      origins: e.PUBLIC_URL ? [new URL(e.PUBLIC_URL).origin] : ['localhost', '127.0.0.1', '[::1]'].map((host) => `http://${host}:${e.PORT}`),
      chainId: e.SIWE_CHAIN_ID, sessionTtlMs: e.SESSION_TTL_HOURS * 3_600_000, sessionMaxPerAccount: e.SESSION_MAX_PER_ACCOUNT },
    deposits: { address: e.DEPOSIT_ADDRESS?.toLowerCase(), tokens: e.DEPOSIT_TOKENS.map((t) => t.toLowerCase()), minMicros: e.DEPOSIT_MIN_USD, scanIntervalMs: e.DEPOSIT_SCAN_INTERVAL_MS,
      notFound: { ttlMs: e.DEPOSIT_NOT_FOUND_TTL_MS, maxEntries: e.DEPOSIT_NOT_FOUND_CACHE_SIZE },
    },
    stripe: { secretKey: e.STRIPE_SECRET_KEY, apiBase: e.STRIPE_API_BASE.replace(/\/$/, ''), meterEventName: e.STRIPE_METER_EVENT_NAME, exportIntervalMs: e.METER_EXPORT_INTERVAL_MS },
    paper: { seed: e.PAPER_SEED, drift: e.PAPER_DRIFT, startingBalanceMicros: e.PAPER_STARTING_BALANCE_USD },
    marketDataTtlMs: e.MARKET_DATA_TTL_MS,
    marketRecord: { intervalMs: e.MARKET_RECORD_INTERVAL_MS, oneMinuteRetentionDays: e.CANDLE_MINUTE_RETENTION_DAYS, fillIntervalMs: e.HISTORY_FILL_INTERVAL_MS },
    streams: { heartbeatMs: e.STREAM_HEARTBEAT_MS, maxPerKey: e.STREAM_MAX_PER_KEY, maxPerAccount: e.STREAM_MAX_PER_ACCOUNT, maxPerIp: e.STREAM_MAX_PER_IP },
    webhooks: { intervalMs: e.WEBHOOK_INTERVAL_MS, timeoutMs: e.WEBHOOK_TIMEOUT_MS, retryHours: e.WEBHOOK_RETRY_HOURS, allowPrivateNetworks: e.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
      slowTimeoutMs: e.WEBHOOK_SLOW_TIMEOUT_MS, maxInFlightPerAccount: e.WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT, localReceivers: e.WEBHOOK_LOCAL_RECEIVERS },
    balanceLowMicros: e.BALANCE_LOW_USD,
    venueTimeoutMs: e.VENUE_TIMEOUT_MS,
    metrics: { enabled: e.METRICS_ENABLED, port: e.METRICS_PORT || undefined, host: e.METRICS_HOST },
  };
}
