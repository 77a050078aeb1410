/**
 * `npm run billing:export` — one pass of the metered usage export to Stripe by hand (the server runs
 * the same pass every METER_EXPORT_INTERVAL_MS; see server/billing/meter-export.ts): marks the settled,
 * not yet exported metered usage rows as a new batch, writes their sums per account and minute into
 * the outbox, and delivers what is unsent. Prints one JSON line
 * {usageRows, rowsWritten, delivered, failed, pending} (plus "busy": true when another exporter
 * held the lease, and nothing was done); log lines go to stderr.
 * Exit codes: 0 done, 1 some rows not delivered (or an error), 2 configuration (e.g. no
 * STRIPE_SECRET_KEY); a database that cannot be opened exits with its start-up code (69, 75).
 * On the embedded database the data directory is locked by a running server: stop it first, or let
 * the server's own exporter do the pass.
 *
 *   STRIPE_SECRET_KEY, STRIPE_API_BASE, STRIPE_METER_EVENT_NAME, DATABASE_URL / DATA_DIR
 */
import { exportMeteredUsage } from '../billing/meter-export.ts';
import { redact } from '../billing/meter-delivery.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { createLogger } from '../lib/logger.ts';
import type { Services } from '../platform/services.ts';
import { closeServices, exitOnStartupFailure, openServices } from '../platform/start.ts';

if (import.meta.main) {
  let exitCode = 0;
  let services: Services | undefined;
  // Ctrl-C or SIGTERM: finish the rows in flight and release the lease instead of holding it LEASE_MS.
  const controller = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => controller.abort());
  try {
    const config = loadConfig({ LOG_LEVEL: 'warn', ...process.env });
    if (!config.stripe.secretKey) throw new ConfigError('STRIPE_SECRET_KEY is not set: there is nowhere to export metered usage to');
    services = await openServices(config, { seed: false, logger: createLogger(config.logLevel, 'stderr') });
    const summary = await exportMeteredUsage(services, { signal: controller.signal });
    const { usageRows, rowsWritten, delivered, failed, pending, busy } = summary;
    console.log(JSON.stringify({ usageRows, rowsWritten, delivered, failed, pending, ...(busy ? { busy } : {}) }));
    if (failed > 0) exitCode = 1;
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      exitCode = 2;
    } else {
      exitOnStartupFailure(error); // a locked data directory, PostgreSQL not answering: one line, its exit code
      console.error(redact(error, process.env.STRIPE_SECRET_KEY));
      exitCode = 1;
    }
  } finally {
    if (services) await closeServices(services);
  }
  process.exit(exitCode);
}
