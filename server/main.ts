/**
 * The server process: configuration → the port (bound first, answering 503 "starting") → database
 * (locked if embedded, waited for if PostgreSQL, migrated, seeded) → the app on that port.
 * Nothing touches data before the port is ours, and whatever stops a start is one line on stderr
 * and an exit code (lib/startup-error.ts), never a stack trace.
 * SIGTERM/SIGINT: stop accepting, let in-flight requests finish (up to SHUTDOWN_TIMEOUT_MS), close
 * the database, exit. While starting, they stop the start at once (exit 0).
 */
import { randomBytes } from 'node:crypto';
import { createApp } from './app.ts';
import { errorResponse } from './errors.ts';
import { requestTarget } from './platform/http/request-target.ts';
import { serveOptions } from './platform/http/serve-options.ts';
import { loadConfig, type Config } from './config.ts';
import { newId } from './lib/ids.ts';
import { createLogger } from './lib/logger.ts';
import { EXIT, StartAborted } from './lib/startup-error.ts';
import type { Services } from './platform/services.ts';
import { closeServices, exitOnStartupFailure, openServices } from './platform/start.ts';
import { startSettlementWorker } from './trading/settlement-worker.ts';
import { startCandleRecording } from './history/recording.ts';
import { startHistoryFill } from './history/fill.ts';
import { startWebhookWorker } from './webhooks/worker.ts';
import { liftStreamIdleTimeout, stopStreams } from './streams/registry.ts';
import { startMeterExporter } from './billing/meter-export.ts';
import { startLapsedUnitRefunds } from './billing/lapsed-units.ts';
import { startDepositWatcher } from './deposits/watcher.ts';
import { startEventDiscovery } from './events/discovery-pass.ts';
import { metricsListener } from './platform/http/metrics-access.ts';
import { errorFirstLine, errorMessage } from './lib/error-message.ts';

function exitWith(message: string, code: number): never {
  console.error(message);
  process.exit(code);
}

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  exitOnStartupFailure(error);
  throw error;
}
const logger = createLogger(config.logLevel);

/**
 * Every request while the database is being opened: 503 in our error shape, retry shortly — except
 * /healthz, which says the process is alive (200, status "starting"): a liveness probe must not kill
 * a server that is waiting for its database. /readyz is 503 until the app serves.
 */
function starting(request: Request): Response {
  const requestId = newId('req');
  // (requestTarget, not new URL: with an invalid Host header Bun's request.url is a bare path.)
  if (requestTarget(request.url)?.path === '/healthz') return Response.json({ status: 'starting' }, { headers: { 'x-request-id': requestId } });
  return errorResponse(
    { code: 'SERVICE_UNAVAILABLE', message: 'The server is starting; retry shortly', status: 503, requestId },
    { 'retry-after': '1', 'x-request-id': requestId },
  );
}

function listen(fetch: (request: Request, srv: Bun.Server<undefined>) => Response | Promise<Response>) {
  try {
    return Bun.serve({
      port: config.port,
      hostname: config.host,
      ...serveOptions(config),
      fetch,
    });
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'EADDRINUSE') exitWith(`port ${config.port} on ${config.host} is in use; stop the other process or set PORT`, EXIT.tempfail);
    exitWith(`cannot listen on ${config.host}:${config.port}: ${errorMessage(error)}`, 1);
  }
}

const server = listen(starting);
const startup = new AbortController();
let services: Services | undefined;
/** The background jobs running (server/lib/jobs.ts), in the order they stop. */
let jobs: Array<{ stop(): Promise<void> }> = [];
let metricsServer: Bun.Server<undefined> | undefined;
let stopping = false;

async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info('shutting down', { signal });
  if (!services) {
    // The start unwinds at its next step (a PostgreSQL wait at once) and exits below; a step that
    // hangs (a database that never answers) gets SHUTDOWN_TIMEOUT_MS, as in-flight requests do.
    startup.abort();
    setTimeout(() => exitWith(`still starting after SHUTDOWN_TIMEOUT_MS (${config.shutdownTimeoutMs} ms); exiting`, 1), config.shutdownTimeoutMs).unref();
    return;
  }
  // Held streams end first (their clients reconnect to another instance) and give up their leases.
  await stopStreams(services);
  const deadline = new Promise((resolve) => setTimeout(resolve, config.shutdownTimeoutMs).unref());
  // stop(false): close the listener now, resolve once in-flight requests have finished.
  await Promise.race([server.stop(false), deadline]);
  await server.stop(true);
  await metricsServer?.stop(true);
  for (const job of jobs) await job.stop();
  await closeServices(services);
  logger.info('stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

try {
  services = await openServices(config, { logger, signal: startup.signal });
} catch (error) {
  await server.stop(true);
  if (error instanceof StartAborted) {
    logger.info('stopped', { while: 'starting' });
    process.exit(0);
  }
  exitOnStartupFailure(error);
  // Anything else is unexpected: still one line, with the stack only when asked for (LOG_LEVEL=debug).
  exitWith(config.logLevel === 'debug' && error instanceof Error ? String(error.stack) : `cannot start: ${describe(error)}`, 1);
}

/**
 * Every background job, listed in the order they stop: the market recorder first, then the candle
 * recording it feeds (so its last write has the last recording), then the rest. They start in the
 * reverse order, so the candles have subscribed before the first recording. Each is off when its
 * interval (or its setting) is.
 */
function startJobs(services: Services): Array<{ stop(): Promise<void> }> {
  const { depositChain: chain } = services;
  const starts: Array<() => { stop(): Promise<void> } | undefined> = [
    () => services.recorder.start(config.marketRecord.intervalMs),
    () => startCandleRecording(services),
    () => startHistoryFill(services),
    () => startSettlementWorker(services),
    () => startMeterExporter(services),
    () => startLapsedUnitRefunds(services),
    () => chain && startDepositWatcher({ db: services.database.db, chain, config: config.deposits, logger, jobs: services.metrics.jobs }),
    () => startWebhookWorker(services),
    () => startEventDiscovery(services),
  ];
  const started = starts.reverse().map((start) => start());
  return started.reverse().filter((job) => job !== undefined);
}

function describe(error: unknown): string {
  return errorFirstLine(error);
}

const app = createApp(services);
// METRICS_PORT: /metrics without a key on a second address, for a scraper on a private network (docs/metrics.md).
if (config.metrics.port !== undefined) {
  try {
    metricsServer = Bun.serve({ port: config.metrics.port, hostname: config.metrics.host, fetch: metricsListener(services) });
  } catch (error) {
    await server.stop(true);
    await closeServices(services);
    const code = (error as { code?: string }).code;
    if (code === 'EADDRINUSE') exitWith(`METRICS_PORT ${config.metrics.port} on ${config.metrics.host} is in use; stop the other process or change METRICS_PORT`, EXIT.tempfail);
    exitWith(`cannot listen on ${config.metrics.host}:${config.metrics.port} (METRICS_PORT): ${errorMessage(error)}`, 1);
  }
  logger.info('metrics listening', { url: `http://${config.metrics.host}:${metricsServer.port}/metrics` });
}
jobs = startJobs(services);
server.reload({
  ...serveOptions(config),
  fetch: (request, srv) => {
    liftStreamIdleTimeout(request, srv);
    return app.handle(request, { clientIp: () => srv.requestIP(request)?.address });
  },
});
logger.info('listening', {
  url: `http://${config.host}:${server.port}`,
  database: config.database.kind,
  rateLimiter: config.redisUrl ? 'redis' : 'memory',
  nodeEnv: config.nodeEnv,
});

if (config.dashboardKeys.length === 0) {
  // An example made here, never used by this process: what an operator pastes to turn the routes on.
  const example = `dash_${randomBytes(16).toString('hex')}`;
  logger.warn(`DASHBOARD_KEYS is empty: key management and account funding are disabled (npm run cli still works). To enable them, restart with a secret of at least 32 characters, e.g. DASHBOARD_KEYS=${example} npm start`);
}
