/**
 * `npm run seed`: migrates and loads the seed data into the configured database (idempotent),
 * comparing every record (a start skips the companies when the database holds this build, unchanged).
 */
import { loadConfig } from '../config.ts';
import { closeServices, exitOnStartupFailure, openServices } from '../platform/start.ts';

try {
  const services = await openServices(loadConfig(), { seed: true, forceSeed: true });
  await closeServices(services);
} catch (error) {
  exitOnStartupFailure(error); // a bad variable, a locked data directory, PostgreSQL not answering: one line
  throw error;
}
