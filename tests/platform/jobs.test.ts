/**
 * The job runner (server/lib/jobs.ts), the one rule every background loop follows: a run never
 * overlaps itself, failures back off (interval × 2^failures, capped) and one success resets that,
 * stop() aborts the run in flight and waits for it, interval 0 schedules nothing, and every run is
 * counted in the job metrics (preipo_job_lag_seconds, preipo_job_runs_total). No database needed.
 */
import { expect, test } from 'bun:test';
import { Registry } from 'prom-client';
import { nextDelayMs, startJob } from '../../server/lib/jobs.ts';
import { createLogger } from '../../server/lib/logger.ts';
import { JobMetrics } from '../../server/platform/metrics/jobs.ts';

function logged() {
  const lines: any[] = [];
  return { lines, logger: createLogger('debug', (line) => lines.push(JSON.parse(line))) };
}

async function until(check: () => boolean, what: string) {
  for (let i = 0; i < 500 && !check(); i++) await Bun.sleep(5);
  if (!check()) throw new Error(`timed out waiting for ${what}`);
}

test('a run never overlaps itself: the timer waits for a slow run, runNow queues behind it', async () => {
  const { logger } = logged();
  let inFlight = 0;
  let most = 0;
  let runs = 0;
  const job = startJob({
    name: 'slow',
    intervalMs: 1,
    firstRunMs: 0,
    logger,
    run: async () => {
      most = Math.max(most, ++inFlight);
      await Bun.sleep(20);
      inFlight--;
      return ++runs;
    },
  });
  try {
    await until(() => runs >= 2, 'two timed runs');
    const asked = await Promise.all([job.runNow(), job.runNow()]);
    expect(asked[1]).toBe(asked[0] + 1); // one after the other, each a run of its own
    expect(most).toBe(1);
  } finally {
    await job.stop();
  }
});

test('backoff: interval × 2^failures up to the cap; one success resets it', async () => {
  expect([0, 1, 2, 3, 10].map((n) => nextDelayMs(1_000, n))).toEqual([1_000, 2_000, 4_000, 8_000, 60_000]);
  expect(nextDelayMs(120_000, 1)).toBe(120_000); // the cap is never under the interval
  expect(nextDelayMs(10, 3, 50)).toBe(50);

  const { lines, logger } = logged();
  const outcomes = [false, false, false, true, false];
  const at: number[] = [];
  const job = startJob({
    name: 'flaky',
    intervalMs: 10,
    firstRunMs: 0,
    logger,
    run: async () => {
      at.push(Date.now());
      if (!outcomes[at.length - 1]) throw new Error('the database is down\nwith a second line');
    },
  });
  try {
    await until(() => at.length >= 5, 'five runs');
  } finally {
    await job.stop();
  }
  const failures = lines.filter((l) => l.msg === 'background job failed');
  expect(failures.map((l) => [l.job, l.failures, l.nextRunInMs])).toEqual([
    ['flaky', 1, 20],
    ['flaky', 2, 40],
    ['flaky', 3, 80],
    ['flaky', 1, 20], // after the success: counted from 1 again
  ]);
  expect(failures[0].error).toBe('the database is down'); // the message's first line, nothing else of the error
  // The waits really were that long (lower bounds only: a busy machine may make them longer).
  for (const [i, wait] of [20, 40, 80, 10].entries()) expect(at[i + 1]! - at[i]!).toBeGreaterThanOrEqual(wait - 2);
});

test('stop() aborts the run in flight through its signal, waits for it to end, and nothing runs after', async () => {
  const { lines, logger } = logged();
  let started = 0;
  let ended = false;
  const job = startJob({
    name: 'long',
    intervalMs: 5,
    firstRunMs: 0,
    logger,
    run: async (signal) => {
      started++;
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      await Bun.sleep(30); // cleaning up after the abort
      ended = true;
      throw new Error('aborted');
    },
  });
  await until(() => started === 1, 'the run to start');
  await job.stop();
  expect(ended).toBe(true);
  await Bun.sleep(30);
  expect(started).toBe(1);
  expect(lines.filter((l) => l.msg === 'background job failed')).toEqual([]); // a stop is not a failure
  await expect(job.runNow()).rejects.toThrow('stopped');
});

test('interval 0: never runs by itself and registers no metric; runNow still runs a pass', async () => {
  const { logger } = logged();
  const registry = new Registry();
  let runs = 0;
  const job = startJob({ name: 'off', intervalMs: 0, firstRunMs: 0, logger, metrics: new JobMetrics(registry), run: async () => ++runs });
  await Bun.sleep(30);
  expect(runs).toBe(0);
  expect(await job.runNow()).toBe(1);
  const lag = await registry.getSingleMetric('preipo_job_lag_seconds')!.get();
  expect(lag.values).toEqual([]);
  await job.stop();
});

test('metrics: runs counted by outcome; lag is 0 on schedule and grows past due while runs fail', async () => {
  const { logger } = logged();
  const registry = new Registry();
  let clock = 1_000_000;
  const metrics = new JobMetrics(registry, () => clock);
  let fail = false;
  // A long interval: only runNow runs it here, on the injected clock.
  const job = startJob({ name: 'counted', intervalMs: 60_000, logger, metrics, run: async () => { if (fail) throw new Error('no'); } });
  const read = async (name: string, labels: Record<string, string>) =>
    (await registry.getSingleMetric(name)!.get()).values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value;
  try {
    expect(await read('preipo_job_interval_seconds', { job: 'counted' })).toBe(60);
    await job.runNow();
    clock += 30_000;
    expect(await read('preipo_job_lag_seconds', { job: 'counted' })).toBe(0);
    fail = true;
    clock += 60_000; // 90 s since the last success: 30 s past due
    await expect(job.runNow()).rejects.toThrow('no');
    expect(await read('preipo_job_lag_seconds', { job: 'counted' })).toBe(30);
    expect(await read('preipo_job_runs_total', { job: 'counted', outcome: 'ok' })).toBe(1);
    expect(await read('preipo_job_runs_total', { job: 'counted', outcome: 'error' })).toBe(1);
    fail = false;
    await job.runNow();
    expect(await read('preipo_job_lag_seconds', { job: 'counted' })).toBe(0);
  } finally {
    await job.stop();
  }
});

test('timers are unref\'d: a process with only a job scheduled exits', () => {
  const runner = new URL('../../server/lib/jobs.ts', import.meta.url).pathname;
  const script = `import { startJob } from '${runner}'; startJob({ name: 'idle', intervalMs: 3_600_000, logger: console, run: async () => {} });`;
  const child = Bun.spawnSync([process.execPath, '-e', script], { timeout: 10_000 });
  expect(child.exitCode).toBe(0);
});
