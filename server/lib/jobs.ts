/**
 * The one way to run a background loop: `startJob({ name, intervalMs, run, logger, metrics })`.
 * Every periodic job of the service (settlement, deposits, meter export, webhooks, candles, market
 * recording) runs through it, so they share one rule:
 *  - Off: intervalMs ≤ 0 schedules nothing and registers no metric (runNow() still runs a pass).
 *  - Never overlaps itself: a run is scheduled only when the previous one has ended, and runNow()
 *    queues behind the run in flight.
 *  - Timing: the first run after `firstRunMs` (default: one interval); each next one `intervalMs`
 *    after the previous one ENDED — after n failures in a row, min(intervalMs × 2^n, cap) instead,
 *    cap = max(intervalMs, maxBackoffMs, default 60 s). One success resets it.
 *  - A failed run is logged (the job, the error's message — never the error object, which may carry
 *    a query's parameters or a request's headers — failures in a row, the next delay) and counted.
 *  - Metrics (server/platform/metrics/jobs.ts): each run's outcome, so preipo_job_lag_seconds grows when a job
 *    keeps failing, hangs, or stops being run.
 *  - stop(): no more runs, the AbortSignal given to `run` is aborted, and it resolves once the run in
 *    flight has ended. A run ending in an error after stop() is a shutdown, not a failure.
 *  - Timers are unref'd: a job never keeps the process alive.
 * This file is a lower layer: domains import it; it imports nothing from them (the metrics are a
 * structural interface, the `JobMetrics` of server/platform/metrics/jobs.ts in practice).
 */
import type { Logger } from './logger.ts';
import { errorFirstLine } from './error-message.ts';

/** Where runs are counted: `register` once per start, `ran` after every run. */
export interface JobRecorder {
  register(job: string, intervalMs: number): { ran(ok: boolean): void };
}

export interface JobOptions<T> {
  /** The `job` label of the metrics and the logs (snake_case, e.g. `settlement`). */
  name: string;
  /** The period between runs; ≤ 0: never started. */
  intervalMs: number;
  /** One pass. `signal` is aborted by stop(): a long pass should stop early and clean up. */
  run: (signal: AbortSignal) => Promise<T>;
  logger: Logger;
  metrics?: JobRecorder;
  /** Delay of the first run (default: intervalMs; 0: at once). */
  firstRunMs?: number;
  /** The backoff cap's floor (default 60 s; the cap is never under intervalMs). */
  maxBackoffMs?: number;
  /** What a failure's log line says (default: the error's message, first line). */
  describeError?: (error: unknown) => string;
}

export interface Job<T = unknown> {
  /** One run now, after the one in flight (tests, or a caller that needs a pass at once); rejects with its error. */
  runNow(): Promise<T>;
  /** Stops scheduling, aborts the run in flight, resolves once it has ended. */
  stop(): Promise<void>;
}

export const DEFAULT_MAX_BACKOFF_MS = 60_000;

/** The wait before the next run after `failures` failed runs in a row (0: the interval). */
export function nextDelayMs(intervalMs: number, failures: number, maxBackoffMs = DEFAULT_MAX_BACKOFF_MS): number {
  if (failures <= 0) return intervalMs;
  return Math.min(intervalMs * 2 ** failures, Math.max(intervalMs, maxBackoffMs));
}


export function startJob<T>(options: JobOptions<T>): Job<T> {
  const { name, intervalMs, run, logger } = options;
  const on = intervalMs > 0;
  const clock = on ? options.metrics?.register(name, intervalMs) : undefined;
  const describe = options.describeError ?? errorFirstLine;
  const controller = new AbortController();
  let failures = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Every run, timed or asked for, is chained on the one before: this is the no-overlap rule.
  let tail: Promise<unknown> = Promise.resolve();

  const execute = async (): Promise<T> => {
    if (controller.signal.aborted) throw new Error(`job ${name} is stopped`);
    const started = Date.now();
    try {
      const value = await run(controller.signal);
      failures = 0;
      clock?.ran(true);
      return value;
    } catch (error) {
      if (controller.signal.aborted) throw error;
      failures++;
      clock?.ran(false);
      const fields = { job: name, error: describe(error), failures, durationMs: Date.now() - started };
      logger.warn('background job failed', on ? { ...fields, nextRunInMs: nextDelayMs(intervalMs, failures, options.maxBackoffMs) } : fields);
      throw error;
    }
  };

  const enqueue = (): Promise<T> => {
    const pass = tail.then(execute);
    tail = pass.catch(() => {});
    return pass;
  };

  const schedule = (ms: number) => {
    if (controller.signal.aborted) return;
    timer = setTimeout(() => {
      timer = undefined;
      // Failures were logged and counted in execute; the next run is timed by how many there were in a row.
      void enqueue()
        .catch(() => {})
        .finally(() => schedule(nextDelayMs(intervalMs, failures, options.maxBackoffMs)));
    }, ms);
    timer.unref?.();
  };
  if (on) schedule(options.firstRunMs ?? intervalMs);

  return {
    runNow: enqueue,
    async stop() {
      controller.abort();
      clearTimeout(timer);
      await tail;
    },
  };
}
