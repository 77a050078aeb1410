/**
 * A child process for the crash test: the real app on the given database, whose venue kills this
 * process (SIGKILL, no cleanup) right after the venue filled the N-th order and before we record it.
 *   CRASH_DATABASE_URL or CRASH_DATA_DIR, CRASH_AFTER (placement number), CRASH_PATH, CRASH_BODY,
 *   CRASH_HEADERS (JSON); VENUE and POLYMARKET_CLOB_URL for the live venue against the stand-in.
 */
import { openDatabase } from '../../db/client.ts';
import { createApp } from '../../server/app.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/lib/logger.ts';
import { MemoryRateLimiter } from '../../server/platform/ratelimit/rate-limiter.ts';
import { createServices } from '../../server/platform/services.ts';
import { createVenue } from '../../server/venues/index.ts';
import { TEST_ENV } from './app.ts';
import { FaultyVenue } from './faulty-venue.ts';

const env = process.env;
const url = env.CRASH_DATABASE_URL;
const venueEnv = env.VENUE ? { VENUE: env.VENUE, POLYMARKET_CLOB_URL: env.POLYMARKET_CLOB_URL! } : {};
const config = loadConfig({ ...TEST_ENV, ...venueEnv, ...(url ? { DATABASE_URL: url } : { DATA_DIR: env.CRASH_DATA_DIR! }) });
const database = await openDatabase(url ? { kind: 'postgres', url, poolSize: 4 } : { kind: 'pglite', dataDir: env.CRASH_DATA_DIR! });
const venue = new FaultyVenue(createVenue(config, database.db));
const crashAfter = Number(env.CRASH_AFTER);
venue.afterPlacement = (n) => {
  if (n === crashAfter) process.kill(process.pid, 'SIGKILL');
};
const services = createServices({ config, database, rateLimiter: new MemoryRateLimiter(), logger: createLogger('silent') }, { venue });
const app = createApp(services);
const response = await app.handle(
  new Request(`http://localhost${env.CRASH_PATH}`, {
    method: 'POST',
    headers: { ...JSON.parse(env.CRASH_HEADERS!), 'content-type': 'application/json' },
    body: env.CRASH_BODY,
  }),
);
// Reaching this line means the crash did not happen.
console.log(JSON.stringify({ unexpected: response.status, body: await response.text() }));
process.exit(3);
