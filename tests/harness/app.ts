/**
 * Builds the real app in-process on a fresh database. Requests go through `app.handle` (the same
 * function the server runs), and the typed tRPC client is wired to it without a socket.
 * `app.handle` (and so `request`) checks every /api response against the app's /openapi.json
 * (response-validator.ts; RESPONSE_VALIDATION=strict|report|off).
 */
import { createTRPCClient, httpLink } from '@trpc/client';
import type { AppRouter } from '../../routers/index.ts';
import { createApp, type App, type HandleOptions } from '../../server/app.ts';
import { GammaStandin } from './gamma-standin.ts';
import { loadConfig, type Config } from '../../server/config.ts';
import { createLogger } from '../../server/lib/logger.ts';
import { MemoryRateLimiter, type RateLimiter } from '../../server/platform/ratelimit/rate-limiter.ts';
import { RedisRateLimiter } from '../../server/platform/ratelimit/redis-rate-limiter.ts';
import { createServices, type Services } from '../../server/platform/services.ts';
import type { PublicClient } from 'viem';
import type { DepositChain } from '../../server/deposits/chain.ts';
import type { Venue } from '../../server/venues/venue.ts';
import { freshDatabase, type TestDatabase } from './databases.ts';
import { checkResponse, isCheckedPath, validationMode, validatorForDocument } from './response-validator.ts';

export const DASHBOARD_KEY = 'dash_test_0123456789abcdef0123456789abcdef';
export const BASE = 'http://localhost';

/** Test defaults: generous rate limits so only the rate-limit tests ever meet them. */
export const TEST_ENV: Record<string, string> = {
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  // The paper books stand still and no history is filled in behind a test's back (both move by default).
  PAPER_DRIFT: '0',
  HISTORY_FILL_INTERVAL_MS: '0',
  DASHBOARD_KEYS: DASHBOARD_KEY,
  TRADING_ENCRYPTION_KEY: 'a'.repeat(64),
  RATE_LIMIT_KEY_RPS: '100000',
  RATE_LIMIT_KEY_BURST: '100000',
  RATE_LIMIT_TRADE_RPS: '100000',
  RATE_LIMIT_TRADE_BURST: '100000',
  RATE_LIMIT_TEST_RPS: '100000',
  RATE_LIMIT_TEST_BURST: '100000',
  RATE_LIMIT_IP_RPS: '100000',
  RATE_LIMIT_IP_BURST: '100000',
  RATE_LIMIT_AUTH_FAILURE_RPS: '100000',
  RATE_LIMIT_AUTH_FAILURE_BURST: '100000',
  // Tests that count limits exactly must not see a busy machine's slow Redis answer as an outage
  // (the outage tests set their own deadline).
  REDIS_TIMEOUT_MS: '1000',
};

export interface TestApp {
  app: App;
  services: Services;
  database: TestDatabase;
  config: Config;
  /** `app.handle` on a path (or full URL) with the given init. */
  request(path: string, init?: RequestInit & { clientIp?: string }): Promise<Response>;
  close(): Promise<void>;
}

let localGamma: GammaStandin | undefined;
/**
 * Gamma for the apps that bring none: a stand-in with no IPO events, so event discovery (POST
 * /api/events/discover, which the route-table suites call too) finds nothing and nothing reaches the
 * internet. One per process.
 */
function emptyGamma(): string {
  // Unreferenced: a script that builds an app (the REST client's generator, a benchmark) still exits.
  localGamma ??= new GammaStandin([]).start().unref();
  return localGamma.url;
}

export async function createTestApp(
  env: Record<string, string> = {},
  options: { database?: TestDatabase; rateLimiter?: RateLimiter; logLines?: string[]; venue?: Venue; now?: () => number; depositChain?: DepositChain; polygon?: PublicClient } = {},
): Promise<TestApp> {
  const config = loadConfig({ ...TEST_ENV, GAMMA_API_URL: env.GAMMA_API_URL ?? emptyGamma(), ...env });
  const database = options.database ?? (await freshDatabase());
  const rateLimiter = options.rateLimiter ?? (config.redisUrl ? new RedisRateLimiter(config.redisUrl, { timeoutMs: config.redisTimeoutMs }) : new MemoryRateLimiter());
  const logger = options.logLines
    ? createLogger('info', (line) => options.logLines!.push(line))
    : createLogger(config.logLevel);
  const services = createServices({ config, database, rateLimiter, logger }, { venue: options.venue, now: options.now, depositChain: options.depositChain, polygon: options.polygon });
  const app = withResponseValidation(createApp(services));
  return {
    app,
    services,
    database,
    config,
    request: async (path, init = {}) => {
      const { clientIp, ...rest } = init;
      return app.handle(new Request(path.startsWith('http') ? path : BASE + path, rest), { clientIp });
    },
    close: async () => {
      await rateLimiter.close();
      if (!options.database) await database.close();
    },
  };
}

/**
 * The app with `handle` checking each /api response against the document the app serves at
 * /openapi.json (its `openApiDocument`, which /openapi.json is the JSON of: read here without a
 * request, so no test's request counts or logs change). Other paths go straight through.
 */
export function withResponseValidation(app: App): App {
  if (validationMode() === 'off') return app;
  const validator = validatorForDocument(app.openApiDocument);
  const handle = (request: Request, options?: HandleOptions): Response | Promise<Response> => {
    const { method, url } = request;
    const at = url.indexOf('/', url.indexOf('//') + 2);
    const pathname = at < 0 ? '/' : url.slice(at).split(/[?#]/, 1)[0]!;
    if (!isCheckedPath(method, pathname)) return app.handle(request, options);
    const answered = app.handle(request, options);
    const check = async (response: Response) => {
      await checkResponse(validator, { method, url }, response);
      return response;
    };
    return answered instanceof Promise ? answered.then(check) : check(answered);
  };
  return { ...app, handle };
}

/** The typed client a TypeScript user would write, talking to this app in-process. */
export function trpcClient(test: TestApp, headers: Record<string, string> = {}) {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${BASE}/trpc`,
        headers: () => headers,
        fetch: ((input: RequestInfo | URL, init?: RequestInit) => test.app.handle(new Request(input, init))) as never,
      }),
    ],
  });
}

export async function json<T = any>(response: Response): Promise<T> {
  return (await response.json()) as T;
}
