/**
 * A server started before its PostgreSQL (a reboot, a compose file starting both) waits for it
 * instead of dying with a driver stack trace: one log line naming the host and the error (again only
 * when the error changes), retries with exponential backoff (0.25 s doubling to 5 s) until
 * DATABASE_START_TIMEOUT_MS, then gives up with exit 69 (EX_UNAVAILABLE) and one line on stderr.
 */
import type { Database } from '../../db/client.ts';
import type { Logger } from './logger.ts';
import { EXIT, StartAborted, StartupError } from './startup-error.ts';

const FIRST_PAUSE_MS = 250;
const MAX_PAUSE_MS = 5_000;
/** One attempt's bound: ample for a connect, short enough that the first line comes quickly. */
const ATTEMPT_MS = 2_500;

/** `host:port` of a postgres:// URL: never its user or password. */
export function postgresHost(url: string): string {
  try {
    const { hostname, port } = new URL(url);
    return `${hostname || 'localhost'}:${port || 5432}`;
  } catch {
    return 'DATABASE_URL'; // a form URL does not parse (several hosts): still name no secret
  }
}

/** A driver error in one short phrase (postgres.js messages name hosts and users, never passwords). */
function describe(error: unknown): string {
  while (error instanceof Error && error.cause !== undefined) error = error.cause; // drizzle's "Failed query" wraps the driver's error
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const message = error.message.split('\n')[0]!;
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}

/** Resolves with `work`, or rejects with StartAborted as soon as `signal` aborts. */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(new StartAborted());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new StartAborted());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export async function waitForPostgres(
  database: Database,
  options: { url: string; timeoutMs: number; logger: Logger; signal?: AbortSignal },
): Promise<void> {
  const { url, timeoutMs, logger, signal } = options;
  const host = postgresHost(url);
  const deadline = Date.now() + timeoutMs;
  let pauseMs = FIRST_PAUSE_MS;
  let lastReason: string | undefined;
  for (;;) {
    try {
      await unlessAborted(database.ping(Math.max(FIRST_PAUSE_MS, Math.min(ATTEMPT_MS, deadline - Date.now()))), signal);
      if (lastReason) logger.info('PostgreSQL is reachable', { host });
      return;
    } catch (error) {
      if (error instanceof StartAborted) throw error;
      const reason = describe(error);
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new StartupError(`PostgreSQL at ${host} did not answer within ${timeoutMs / 1000} s (${reason}); giving up (DATABASE_START_TIMEOUT_MS)`, EXIT.unavailable);
      }
      if (reason !== lastReason) {
        logger.warn(`PostgreSQL at ${host} is unreachable (${reason}); retrying for up to ${Math.ceil(left / 1000)} s`, { host, error: reason });
        lastReason = reason;
      }
      await unlessAborted(Bun.sleep(Math.min(pauseMs, left)), signal);
      pauseMs = Math.min(pauseMs * 2, MAX_PAUSE_MS);
    }
  }
}
