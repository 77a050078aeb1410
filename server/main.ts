/**
 * The server process: configuration → database (migrated, seeded) → HTTP on PORT.
 * SIGTERM/SIGINT: stop accepting, let in-flight requests finish (up to SHUTDOWN_TIMEOUT_MS), close
 * the database, exit.
 */
import { createApp } from './app.ts';
import { serveOptions } from './http/serve-options.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { closeServices, openServices } from './start.ts';

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(78); // EX_CONFIG
}

const services = await openServices(config);
const app = createApp(services);
const server = Bun.serve({
  port: config.port,
  hostname: config.host,
  ...serveOptions(config),
  fetch: (request, srv) => app.handle(request, { clientIp: () => srv.requestIP(request)?.address }),
});
services.logger.info('listening', {
  url: `http://${config.host}:${server.port}`,
  database: config.database.kind,
  rateLimiter: config.redisUrl ? 'redis' : 'memory',
  nodeEnv: config.nodeEnv,
});

if (config.dashboardKeys.length === 0) {
  services.logger.warn('DASHBOARD_KEYS is empty: key management and account funding are disabled (npm run cli still works)');
}

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  services.logger.info('shutting down', { signal });
  const deadline = new Promise((resolve) => setTimeout(resolve, config.shutdownTimeoutMs).unref());
  // stop(false): close the listener now, resolve once in-flight requests have finished.
  await Promise.race([server.stop(false), deadline]);
  await server.stop(true);
  await closeServices(services);
  services.logger.info('stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
