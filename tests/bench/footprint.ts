/**
 * `npm run bench:footprint` — not a test: measures, asserts nothing. Starts the real server the way
 * `npm start` does (the runtime flags and environment of package.json's `start` script, read from
 * there; the dashboard built once first, as `prestart` does) on a random port and a fresh temporary
 * DATA_DIR, with the full company seed (SEED_COMPANIES unset), and records:
 *
 *   first start   time from spawn to /readyz 200, peak RSS while starting (VmHWM), RSS when ready
 *   idle          RSS after FOOTPRINT_IDLE_SECONDS (default 30) of idling
 *   second start  the same on the same directory (or database), after a clean stop (SIGTERM)
 *
 * and the same on PostgreSQL when FOOTPRINT_DATABASE_URL, TEST_DATABASE_URL or DATABASE_URL is set
 * (an admin URL: a scratch database `pipo_bench_footprint` is dropped and made anew on it). Prints a
 * table, then one JSON line. RSS is the server process's own (/proc/<pid>/status; Linux only).
 *
 *   FOOTPRINT_IDLE_SECONDS   idle time before the idle sample (default 30)
 *   FOOTPRINT_KEEP=1         keep the temporary data directory (its path is printed)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';

const root = new URL('../..', import.meta.url).pathname;
const idleSeconds = Number(process.env.FOOTPRINT_IDLE_SECONDS ?? 30);
const READY_TIMEOUT_MS = 180_000;
const MB = 1024 * 1024;

/** `npm start`'s command, taken apart: VAR=value assignments (with `${VAR:-default}` resolved), then `bun` and its arguments. */
function startCommand(): { env: Record<string, string>; args: string[] } {
  const script: string = (require(join(root, 'package.json')) as { scripts: Record<string, string> }).scripts.start!;
  const env: Record<string, string> = {};
  const tokens = script.split(/\s+/).filter(Boolean);
  let i = 0;
  for (; i < tokens.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(tokens[i]!); i++) {
    const [name, ...rest] = tokens[i]!.split('=');
    const value = rest.join('=').replace(/^\$\{([A-Za-z_][A-Za-z0-9_]*):-([^}]*)\}$/, (_, v: string, d: string) => process.env[v] || d);
    env[name!] = value;
  }
  if (tokens[i] !== 'bun') throw new Error(`package.json start script does not run bun: ${script}`);
  return { env, args: tokens.slice(i + 1) };
}

function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const { port } = probe;
  probe.stop(true);
  return port;
}

/** VmRSS and VmHWM (peak) of a process, in bytes; null once it has gone. */
async function memory(pid: number): Promise<{ rss: number; peak: number } | null> {
  try {
    const status = await Bun.file(`/proc/${pid}/status`).text();
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  } catch {
    return null;
  }
}

export interface StartMeasure {
  readyMs: number;
  /** Highest RSS while starting (the kernel's high-water mark, read when ready). */
  peakRssMb: number;
  readyRssMb: number;
  idleRssMb?: number;
  /** Highest RSS over the whole run (start and idle). */
  runPeakRssMb?: number;
}

const mb = (bytes: number) => Math.round((bytes / MB) * 10) / 10;

/** One start of the server: spawn, wait for /readyz, optionally idle, stop with SIGTERM. */
async function measureStart(label: string, env: Record<string, string>, idle: number): Promise<StartMeasure> {
  const { env: runtimeEnv, args } = startCommand();
  const port = freePort();
  const base = { ...process.env } as Record<string, string>;
  for (const name of ['SEED_COMPANIES', 'DATABASE_URL', 'DATA_DIR', 'PORT', 'SEED_ON_START']) delete base[name];
  const started = performance.now();
  const child = Bun.spawn(['bun', ...args], {
    cwd: root,
    env: { ...base, ...runtimeEnv, LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: String(port), ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const output: string[] = [];
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) output.push(decoder.decode(chunk, { stream: true }));
  };
  void collect(child.stdout);
  void collect(child.stderr);
  let readyMs: number | undefined;
  while (readyMs === undefined) {
    if (child.exitCode !== null) throw new Error(`${label}: the server exited (${child.exitCode}) before it was ready:\n${output.join('').slice(-2000)}`);
    if (performance.now() - started > READY_TIMEOUT_MS) {
      child.kill('SIGKILL');
      throw new Error(`${label}: not ready after ${READY_TIMEOUT_MS} ms:\n${output.join('').slice(-2000)}`);
    }
    try {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`);
      if (response.ok) readyMs = performance.now() - started;
    } catch {}
    if (readyMs === undefined) await Bun.sleep(25);
  }
  const atReady = (await memory(child.pid))!;
  const result: StartMeasure = { readyMs: Math.round(readyMs), peakRssMb: mb(atReady.peak), readyRssMb: mb(atReady.rss) };
  if (idle > 0) {
    await Bun.sleep(idle * 1000);
    const idleMemory = (await memory(child.pid))!;
    result.idleRssMb = mb(idleMemory.rss);
    result.runPeakRssMb = mb(idleMemory.peak);
  }
  child.kill('SIGTERM');
  const code = await child.exited;
  if (code !== 0) console.error(`${label}: exited with ${code} after SIGTERM:\n${output.join('').slice(-2000)}`);
  console.error(`${label}: ready in ${result.readyMs} ms, peak ${result.peakRssMb} MB${result.idleRssMb !== undefined ? `, idle ${result.idleRssMb} MB` : ''}`);
  return result;
}

interface Run {
  database: 'pglite' | 'postgres';
  first: StartMeasure;
  second: StartMeasure;
}

async function pgliteRun(): Promise<Run> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pipo-footprint-'));
  try {
    const env = { DATA_DIR: dataDir };
    const first = await measureStart('pglite first start', env, idleSeconds);
    const second = await measureStart('pglite second start', env, idleSeconds);
    return { database: 'pglite', first, second };
  } finally {
    if (process.env.FOOTPRINT_KEEP === '1') console.error(`kept ${dataDir}`);
    else rmSync(dataDir, { recursive: true, force: true });
  }
}

async function postgresRun(adminUrl: string): Promise<Run> {
  const name = 'pipo_bench_footprint';
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  const recreate = async () => {
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.unsafe(`create database ${name}`);
  };
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const env = { DATABASE_URL: url.toString(), TRADING_ENCRYPTION_KEY: process.env.TRADING_ENCRYPTION_KEY ?? '0'.repeat(63) + '1' };
  try {
    await recreate();
    const first = await measureStart('postgres first start', env, idleSeconds);
    const second = await measureStart('postgres second start', env, idleSeconds);
    return { database: 'postgres', first, second };
  } finally {
    await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin.end();
  }
}

function table(runs: Run[]): string {
  const rows = [['database', 'start', 'ready (ms)', 'peak RSS while starting (MB)', 'RSS at ready (MB)', `RSS after ${idleSeconds} s idle (MB)`]];
  for (const run of runs) {
    for (const [which, m] of [['first', run.first], ['second', run.second]] as const) {
      rows.push([run.database, which, String(m.readyMs), String(m.peakRssMb), String(m.readyRssMb), String(m.idleRssMb ?? '-')]);
    }
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const line = (r: string[]) => `| ${r.map((cell, c) => cell.padEnd(widths[c]!)).join(' | ')} |`;
  return [line(rows[0]!), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}

if (import.meta.main) {
  if (process.platform !== 'linux') throw new Error('bench:footprint reads /proc: Linux only');
  // What `prestart` does before `npm start`: not part of the measured start.
  const build = Bun.spawnSync(['bun', 'scripts/build-dashboard.ts'], { cwd: root, stdout: 'ignore', stderr: 'inherit' });
  if (build.exitCode !== 0) throw new Error('building the dashboard failed');
  const runs: Run[] = [await pgliteRun()];
  const pgUrl = process.env.FOOTPRINT_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  if (pgUrl) runs.push(await postgresRun(pgUrl));
  const { env, args } = startCommand();
  console.log(table(runs));
  console.log(
    JSON.stringify({
      date: new Date().toISOString(),
      cores: navigator.hardwareConcurrency,
      bun: Bun.version,
      runtime: { env, args },
      idleSeconds,
      seed: 'full',
      runs,
    }),
  );
}
