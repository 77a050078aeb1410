/**
 * Background job lag: each periodic job (settlement worker, webhook deliveries, deposit scans, market
 * recording, candle writes and pruning, the Stripe meter export) registers with its interval and
 * reports each pass's outcome — the job runner (server/lib/jobs.ts) does both. Exposed per job:
 *   preipo_job_lag_seconds        how far past due its next success is: now − last success − interval
 *                                 (0 while on schedule; from registration until the first success).
 *                                 A job that keeps failing, hangs, or whose timer stopped firing grows it.
 *   preipo_job_interval_seconds   the configured period (jobs that are off are not registered)
 *   preipo_job_runs_total         passes by outcome (ok, error)
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export interface JobClock {
  /** A pass ended: `ok` false when it failed (it was logged where it happened). */
  ran(ok: boolean): void;
}

export class JobMetrics {
  private readonly jobs = new Map<string, { intervalMs: number; lastSuccess: number }>();
  private readonly runs: Counter<'job' | 'outcome'>;

  constructor(
    registry: Registry,
    private readonly now: () => number = Date.now,
  ) {
    const jobs = this.jobs;
    const clock = this.now;
    this.runs = new Counter({ name: 'preipo_job_runs_total', help: 'Background job passes, by job and outcome (ok, error).', labelNames: ['job', 'outcome'], registers: [registry] });
    new Gauge({
      name: 'preipo_job_lag_seconds',
      help: 'How far past due each background job is: seconds since its last successful pass minus its interval (0 while on schedule).',
      labelNames: ['job'],
      registers: [registry],
      collect() {
        const at = clock();
        for (const [job, state] of jobs) this.set({ job }, Math.max(0, at - state.lastSuccess - state.intervalMs) / 1000);
      },
    });
    new Gauge({
      name: 'preipo_job_interval_seconds',
      help: 'The configured period of each running background job.',
      labelNames: ['job'],
      registers: [registry],
      collect() {
        for (const [job, state] of jobs) this.set({ job }, state.intervalMs / 1000);
      },
    });
  }

  /** A job that runs every `intervalMs` from now on (call once per start; a restart resets it). */
  register(job: string, intervalMs: number): JobClock {
    const state = { intervalMs, lastSuccess: this.now() };
    this.jobs.set(job, state);
    const ok = this.runs.labels(job, 'ok');
    const error = this.runs.labels(job, 'error');
    ok.inc(0);
    error.inc(0);
    return {
      ran: (succeeded) => {
        if (succeeded) {
          state.lastSuccess = this.now();
          ok.inc();
        } else {
          error.inc();
        }
      },
    };
  }
}
