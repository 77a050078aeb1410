/**
 * What every domain is handed at start: the configuration, the database, the logger and the job
 * metrics. A domain that needs more names it in its own handles.ts (trading needs the venue, the
 * market data and the credential cipher, say), extending this. The platform's Services
 * (platform/services.ts) satisfies each of them by its shape, so a domain never imports the
 * platform: it states what it uses, and a test can hand it just that.
 */
import type { Database } from '../db/client.ts';
import type { Config } from './config.ts';
import type { JobRecorder } from './lib/jobs.ts';
import type { Logger } from './lib/logger.ts';

export interface CoreHandles {
  config: Config;
  database: Database;
  logger: Logger;
  metrics: { jobs: JobRecorder };
}
