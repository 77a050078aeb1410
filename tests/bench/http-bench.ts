/**
 * `npm run bench` — not a test. Throughput and latency of the real server process, measured with wrk
 * the way clients load it: wrk pinned to CPU 0, the server to CPU 1, 64 connections, a 3 s warm-up,
 * then 10 s measured. Every figure is also given as a ratio to a bare `Bun.serve` JSON hello on the
 * same core, measured in slices interleaved with the case's (5 × 2 s each), so both see the same
 * machine: on this shared VM a core's speed drifts by tens of percent within a minute, and a baseline
 * measured once at the start made the ratios a lottery. PostgreSQL backs the
 * server (a scratch database, seeded, with one funded account, users holding 10, 50 and 200
 * positions, 64 users with paper venue credentials for the buy case, 8 accounts the company case
 * rotates over, an account with BENCH_USAGE_ROWS (1,000,000) usage rows and a user with
 * BENCH_TRADES (10,000) trades for the reads whose cost must not grow with history).
 *
 *   BENCH_DATABASE_URL   admin connection (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_SECONDS        measured seconds per case (default 10); BENCH_CONNECTIONS (default 64)
 *   BENCH_ONLY           run only cases whose name contains this text (or one of several, comma-separated)
 *   METRICS_ENABLED      passed to the server (false: without request metrics)
 *   BENCH_REUSE=1        reuse the database the last run prepared (its keys are kept in the temp directory)
 *   BENCH_USAGE_ROWS, BENCH_TRADES   the heavy account's usage rows (1,000,000) and the heavy user's trades (10,000)
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { openDatabase } from '../../db/client.ts';
import { seedDatabase } from '../../seeds/index.ts';
import { creditAccount, ensureAccount } from '../../server/accounts/accounts.ts';
import { createApiKey } from '../../server/accounts/api-keys.ts';
import { createApp } from '../../server/app.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/lib/logger.ts';
import { MemoryRateLimiter } from '../../server/platform/ratelimit/rate-limiter.ts';
import { createServices } from '../../server/platform/services.ts';
import { PRODUCTION_RUNTIME } from '../harness/server-process.ts';

const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const only = process.env.BENCH_ONLY;
/** Each case's measured time is split into this many slices, each preceded by a bare slice. */
const SLICES = 5;
const sliceSeconds = Math.max(1, Math.round(seconds / SLICES));
const dbName = 'pipo_bench_http';
const ENCRYPTION_KEY = 'b'.repeat(64);
const work = mkdtempSync(join(tmpdir(), 'pipo-bench-'));

const benchUrl = (() => {
  const u = new URL(adminUrl);
  u.pathname = `/${dbName}`;
  return u.toString();
})();

function requireTools() {
  for (const tool of ['wrk', 'taskset']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) {
      console.error(`${tool} is required: apt-get install -y ${tool === 'wrk' ? 'wrk' : 'util-linux'}`);
      process.exit(2);
    }
  }
}

/** Positions per user for the growth cases (the 50 case is also measured over /trpc). */
const POSITION_COUNTS = [10, 50, 200];
const userWith = (count: number) => `0x${count.toString(16).padStart(40, '0')}`;
/** Distinct users for the buy case: one user's buys serialize on its venue account, many users' do not. */
const BUYERS = Array.from({ length: 64 }, (_, i) => `0x${(0xb0000 + i).toString(16).padStart(40, '0')}`);

/** Accounts the company case rotates over (one key each), and the heavy readers' rows. */
const ROTATED_ACCOUNTS = 8;
const HEAVY_USAGE_ROWS = Number(process.env.BENCH_USAGE_ROWS ?? 1_000_000);
const HEAVY_TRADES = Number(process.env.BENCH_TRADES ?? 10_000);
const HEAVY_TRADER = `0x${'7'.repeat(40)}`;

interface Prepared {
  apiKey: string;
  /** One key per rotated account. */
  rotatedKeys: string[];
  /** The key of the account with HEAVY_USAGE_ROWS usage rows. */
  heavyKey: string;
}

/**
 * An account with `rows` usage rows over the last 90 days (four paths), written directly, with the
 * cells, running totals and credit that billing would have left: what a heavy customer's history looks like.
 */
async function heavyUsageAccount(db: Awaited<ReturnType<typeof openDatabase>>['db'], rows: number): Promise<string> {
  await ensureAccount(db, 'heavy');
  const { key, id } = await createApiKey(db, { accountId: 'heavy', name: 'heavy' });
  const run = postgres(benchUrl, { max: 1, onnotice: () => {} });
  await run.unsafe(`
    insert into usage_records (id, account_id, api_key_id, method, path, cost_micros, request_id, billed_to, created_at)
    select 'use_heavy_' || g, 'heavy', '${id}', 'GET', (array['/api/billing', '/api/private-companies/1', '/api/usage', '/trpc/billing.get'])[1 + g % 4],
           case when g % 4 = 1 then 20000 else 2000 end, 'req_heavy_' || g, 'balance', now() - make_interval(secs => (g::double precision * 90 * 86400 / ${rows}))
      from generate_series(1, ${rows}) g`);
  await run.unsafe(`
    insert into usage_hours (account_id, hour, key_id, path, requests, cost_micros)
    select account_id, date_trunc('hour', created_at, 'UTC'), api_key_id, path, count(*), sum(cost_micros) from usage_records where account_id = 'heavy' group by 1, 2, 3, 4`);
  const [used] = await run.unsafe(`select count(*)::bigint as n, sum(cost_micros)::bigint as cost from usage_records where account_id = 'heavy'`);
  await run.unsafe(`update accounts set usage_count = ${used!.n}, usage_cost_micros = ${used!.cost} where id = 'heavy'`);
  await run.end();
  // What those requests paid, and plenty more: balance = credits − Σ usage.
  await creditAccount(db, { accountId: 'heavy', amountMicros: Number(used!.cost) + 1_000_000 * 1_000_000, reference: 'heavy' });
  await db.execute(sql`update accounts set balance_micros = balance_micros - ${Number(used!.cost)} where id = 'heavy'`);
  return key;
}

/** A fresh database with the seed data, a funded account, users holding 10/50/200 positions, 64 buyers, 8 rotated accounts, a 1M-row usage history and a 10,000-trade user. */
async function prepare(): Promise<Prepared> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.unsafe(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const database = await openDatabase({ kind: 'postgres', url: benchUrl, poolSize: 10 });
  await database.migrate();
  await seedDatabase(database.db, createLogger('silent'));
  await ensureAccount(database.db, 'bench');
  await creditAccount(database.db, { accountId: 'bench', amountMicros: 1_000_000_000 * 1_000_000, reference: 'bench' });
  const { key } = await createApiKey(database.db, { accountId: 'bench', name: 'bench' });

  const config = loadConfig({ ...serverEnv(0), NODE_ENV: 'production' });
  const services = createServices({ config, database, rateLimiter: new MemoryRateLimiter(), logger: createLogger('silent') });
  const app = createApp(services);
  const post = (user: string, path: string, body: unknown) =>
    app.handle(new Request(`http://localhost${path}`, { method: 'POST', headers: { 'x-api-key': key, 'x-user-id': user, 'content-type': 'application/json' }, body: JSON.stringify(body) }));
  // Each user has its own paper account (paper balances are per account and user).
  const enrol = (user: string) => post(user, '/api/trading/credentials', { apiKey: `bench-${user}`, secret: 's', passphrase: 'p' });
  const events = ['openai-ipo', 'kraken-ipo', 'ledger-ipo', 'consensys-ipo', 'perplexity-ipo'];
  for (const count of POSITION_COUNTS) {
    await enrol(userWith(count));
    for (let i = 0; i < count; i++) {
      const res = await post(userWith(count), '/api/trading/buy', { eventId: events[i % events.length], side: i % 2 ? 'LONG' : 'SHORT', amount: 60 });
      if (res.status !== 200) throw new Error(`seeding positions: buy answered ${res.status} ${await res.text()}`);
    }
  }
  for (const buyer of BUYERS) await enrol(buyer);
  const rotatedKeys: string[] = [];
  for (let i = 0; i < ROTATED_ACCOUNTS; i++) {
    await ensureAccount(database.db, `rotated-${i}`);
    await creditAccount(database.db, { accountId: `rotated-${i}`, amountMicros: 1_000_000_000 * 1_000_000, reference: `rotated-${i}` });
    rotatedKeys.push((await createApiKey(database.db, { accountId: `rotated-${i}`, name: 'rotated' })).key);
  }
  console.log(`writing ${HEAVY_USAGE_ROWS} usage rows …`);
  const heavyKey = await heavyUsageAccount(database.db, HEAVY_USAGE_ROWS);
  // A trader with HEAVY_TRADES trades: buys of a 7-band event (7 trades each), through the real buy path.
  console.log(`making ${HEAVY_TRADES} trades …`);
  await enrol(HEAVY_TRADER);
  for (let trades = 0; trades < HEAVY_TRADES; ) {
    const res = await post(HEAVY_TRADER, '/api/trading/buy', { eventId: events[trades % events.length], side: trades % 2 ? 'LONG' : 'SHORT', amount: 60 });
    if (res.status !== 200) throw new Error(`seeding trades: buy answered ${res.status} ${await res.text()}`);
    trades += ((await res.json()) as { orders?: unknown[] }).orders?.length ?? 7;
  }
  await database.close();
  // Statistics for the rows just written, as autovacuum would gather them within a minute or so.
  const analyze = postgres(benchUrl, { max: 1, onnotice: () => {} });
  await analyze.unsafe('ANALYZE');
  await analyze.end();
  return { apiKey: key, rotatedKeys, heavyKey };
}

function serverEnv(port: number): Record<string, string> {
  return {
    PATH: process.env.PATH!,
    HOME: process.env.HOME ?? '/tmp',
    ...PRODUCTION_RUNTIME.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: benchUrl,
    TRADING_ENCRYPTION_KEY: ENCRYPTION_KEY,
    SEED_ON_START: 'false',
    // The history fill's first pass computes and writes a month of candles (~15 s of both cores):
    // a steady-state server is not doing that, so the cases would measure the fill instead.
    HISTORY_FILL_INTERVAL_MS: '0',
    LOG_LEVEL: 'warn',
    PAPER_STARTING_BALANCE_USD: '999999999',
    RATE_LIMIT_KEY_RPS: '1000000',
    RATE_LIMIT_KEY_BURST: '1000000',
    RATE_LIMIT_TRADE_RPS: '1000000',
    RATE_LIMIT_TRADE_BURST: '1000000',
    RATE_LIMIT_IP_RPS: '1000000',
    RATE_LIMIT_IP_BURST: '1000000',
    // METRICS_ENABLED=false measures the server without request metrics (docs/metrics.md).
    ...(process.env.METRICS_ENABLED ? { METRICS_ENABLED: process.env.METRICS_ENABLED } : {}),
  };
}

interface Running {
  pid: number;
  url: string;
  stop(): void;
}

async function startOnCore1(args: string[], env: Record<string, string>, port: number): Promise<Running> {
  const child = spawn('taskset', ['-c', '1', process.execPath, ...args], { env, stdio: ['ignore', 'ignore', 'inherit'], cwd: new URL('../..', import.meta.url).pathname });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {}
    await Bun.sleep(100);
  }
  return { pid: child.pid!, url, stop: () => child.kill('SIGTERM') };
}

/**
 * CPU time the hypervisor gave to other guests (steal), as a share of all CPU time since `from`.
 * On this shared VM it swings from 0 to 40% within minutes; the table shows it per case so a run
 * taken while the machine was stolen from can be recognised.
 */
function cpuTimes(): number[] {
  return readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
}
function stealPercent(from: number[]): number {
  const now = cpuTimes();
  const delta = now.map((v, i) => v - (from[i] ?? 0));
  const total = delta.slice(0, 8).reduce((a, b) => a + b, 0);
  return total > 0 ? (100 * (delta[7] ?? 0)) / total : 0;
}

function rssMb(pid: number): number {
  // taskset execs the runtime in place, so the pid is the server's.
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

interface Case {
  name: string;
  transport: 'rest' | 'trpc' | 'bare';
  path: string;
  method?: 'GET' | 'POST';
  body?: unknown;
  headers?: Record<string, string>;
  /** x-user-id rotates over these, one per request. */
  users?: string[];
  /** x-api-key rotates over these, one per request (several accounts). */
  keys?: string[];
  /** Measured slices (default SLICES). One long slice for cases whose latency exceeds a short one. */
  slices?: number;
}

interface Result {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

function wrk(c: Case, url: string, duration: number): Result {
  const lines = [`wrk.method = ${JSON.stringify(c.method ?? 'GET')}`];
  for (const [k, v] of Object.entries(c.headers ?? {})) lines.push(`wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`);
  if (c.body !== undefined) {
    lines.push(`wrk.headers["content-type"] = "application/json"`);
    lines.push(`wrk.body = ${JSON.stringify(JSON.stringify(c.body))}`);
  }
  const rotations = [...(c.users ? [['x-user-id', c.users] as const] : []), ...(c.keys ? [['x-api-key', c.keys] as const] : [])];
  if (rotations.length) {
    lines.push('local n = 0');
    rotations.forEach(([, values], i) => lines.push(`local r${i} = { ${values.map((v) => JSON.stringify(v)).join(', ')} }`));
    const sets = rotations.map(([header], i) => `wrk.headers[${JSON.stringify(header)}] = r${i}[(n % #r${i}) + 1]`).join('; ');
    lines.push(`request = function() n = n + 1; ${sets}; return wrk.format() end`);
  }
  const script = join(work, 'case.lua');
  writeFileSync(script, lines.join('\n'));
  const run = spawnSync('taskset', ['-c', '0', 'wrk', '-t1', `-c${connections}`, `-d${duration}s`, '--timeout', '10s', '--latency', '-s', script, url + c.path], { encoding: 'utf8' });
  const out = run.stdout;
  const ms = (label: string) => {
    const m = new RegExp(`^\\s+${label}%\\s+([\\d.]+)(us|ms|s)`, 'm').exec(out);
    if (!m) return NaN;
    const value = Number(m[1]);
    return m[2] === 'us' ? value / 1000 : m[2] === 's' ? value * 1000 : value;
  };
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
    p50: ms('50'),
    p99: ms('99'),
    errors: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0) + Number(/Socket errors:.*?timeout (\d+)/.exec(out)?.[1] ?? 0),
  };
}

function cases({ apiKey, rotatedKeys, heavyKey }: Prepared): Case[] {
  const key = { 'x-api-key': apiKey };
  const heavy = { 'x-api-key': heavyKey };
  const trader = { ...key, 'x-user-id': HEAVY_TRADER };
  const user = (count: number) => ({ ...key, 'x-user-id': userWith(count) });
  const input = (value: unknown) => `?input=${encodeURIComponent(JSON.stringify(value))}`;
  const buy = { eventId: 'openai-ipo', side: 'LONG', amount: 40 };
  const list = { industry: 'Artificial Intelligence', sort: '-valuationUsd', limit: 20 };
  const weekAgo = new Date(Date.now() - 7 * 86_400_000).toISOString().slice(0, 10);
  return [
    { name: 'GET /api/pricing (no database)', transport: 'rest', path: '/api/pricing' },
    { name: 'GET /api/pricing (no database)', transport: 'trpc', path: '/trpc/pricing.get' },
    { name: 'GET /api/trading/valuation (cached market data)', transport: 'rest', path: '/api/trading/valuation?eventSlug=openai-ipo' },
    { name: 'GET /api/trading/valuation (cached market data)', transport: 'trpc', path: `/trpc/tradingMarket.valuation${input({ eventSlug: 'openai-ipo' })}` },
    { name: 'GET /api/trading/valuation/all', transport: 'rest', path: '/api/trading/valuation/all' },
    { name: 'GET /api/trading/valuation/all', transport: 'trpc', path: '/trpc/tradingMarket.valuationAll' },
    { name: 'GET /api/private-companies/:id (billed, one account)', transport: 'rest', path: '/api/private-companies/1', headers: key },
    { name: 'GET /api/private-companies/:id (billed, one account)', transport: 'trpc', path: `/trpc/privateCompanies.byId${input({ id: 1 })}`, headers: key },
    { name: `GET /api/private-companies/:id (billed, ${ROTATED_ACCOUNTS} accounts)`, transport: 'rest', path: '/api/private-companies/1', keys: rotatedKeys },
    // After the cases above, the bench account has made well over 30,000 billed calls.
    { name: 'GET /api/usage?limit=1 (the account above, ≥ 30,000 calls)', transport: 'rest', path: '/api/usage?limit=1', headers: key },
    { name: `GET /api/usage?limit=1 (${HEAVY_USAGE_ROWS.toLocaleString('en')} usage rows)`, transport: 'rest', path: '/api/usage?limit=1', headers: heavy },
    { name: 'GET /api/usage?limit=100 (last week, filtered total)', transport: 'rest', path: `/api/usage?limit=100&from=${weekAgo}`, headers: heavy },
    { name: 'GET /api/usage/summary (days, the whole history)', transport: 'rest', path: '/api/usage/summary', headers: heavy },
    { name: 'GET /api/usage/summary (hours, last week)', transport: 'rest', path: `/api/usage/summary?bucket=hour&from=${weekAgo}`, headers: heavy },
    { name: `GET /api/trading/history (${HEAVY_TRADES.toLocaleString('en')} trades)`, transport: 'rest', path: '/api/trading/history?limit=50', headers: trader },
    { name: `GET /api/trading/positions (${HEAVY_TRADES.toLocaleString('en')} trades)`, transport: 'rest', path: '/api/trading/positions', headers: trader },
    { name: `GET /api/trading/orders (${HEAVY_TRADES.toLocaleString('en')} trades)`, transport: 'rest', path: '/api/trading/orders?limit=50', headers: trader },
    { name: 'GET /api/private-companies filtered (billed)', transport: 'rest', path: '/api/private-companies?industry=Artificial%20Intelligence&sort=-valuationUsd&limit=20', headers: key },
    { name: 'GET /api/private-companies filtered (billed)', transport: 'trpc', path: `/trpc/privateCompanies.list${input(list)}`, headers: key },
    ...POSITION_COUNTS.map((count): Case => ({ name: `GET /api/trading/positions (${count} positions, billed)`, transport: 'rest', path: '/api/trading/positions', headers: user(count) })),
    { name: 'GET /api/trading/positions (50 positions, billed)', transport: 'trpc', path: '/trpc/positions.list', headers: user(50) },
    // A buy under 64 concurrent users takes ~2 s: one 10 s slice, or a 2 s slice would complete nothing.
    { name: 'POST /api/trading/buy (paper venue, 64 users)', transport: 'rest', path: '/api/trading/buy', method: 'POST', body: buy, headers: key, users: BUYERS, slices: 1 },
    { name: 'POST /api/trading/buy (paper venue, 64 users)', transport: 'trpc', path: '/trpc/trading.buy', method: 'POST', body: buy, headers: key, users: BUYERS, slices: 1 },
  ];
}

/** Which migrations a prepared database has: a reused one must have them all. */
function migrationsStamp(): string {
  return readFileSync(new URL('../../db/migrations/meta/_journal.json', import.meta.url), 'utf8').length.toString();
}

async function main() {
  requireTools();
  // BENCH_REUSE=1: the database and keys of the last run (kept beside it), when the migrations match.
  const keptFile = join(tmpdir(), `${dbName}.json`);
  let prepared: Prepared | undefined;
  if (process.env.BENCH_REUSE === '1') {
    try {
      const kept = JSON.parse(readFileSync(keptFile, 'utf8')) as Prepared & { migrations: string };
      if (kept.migrations === migrationsStamp()) prepared = kept;
    } catch {}
  }
  if (!prepared) {
    console.log(`preparing PostgreSQL database ${dbName} …`);
    prepared = await prepare();
    writeFileSync(keptFile, JSON.stringify({ ...prepared, migrations: migrationsStamp() }));
  } else console.log(`reusing PostgreSQL database ${dbName} (BENCH_REUSE=1)`);

  const barePath = join(work, 'bare.ts');
  writeFileSync(barePath, `Bun.serve({ port: Number(process.env.PORT), hostname: '127.0.0.1', fetch: (r) => new URL(r.url).pathname === '/healthz' ? new Response('ok') : Response.json({ hello: 'world' }) });`);
  const bare = await startOnCore1([barePath], { PATH: process.env.PATH!, PORT: '18080' }, 18080);
  const bareCase: Case = { name: 'bare Bun.serve JSON hello', transport: 'bare', path: '/' };
  wrk(bareCase, bare.url, 3);

  // As `npm start` runs it (PRODUCTION_RUNTIME: --smol and the heap's memory budget).
  const server = await startOnCore1([...PRODUCTION_RUNTIME.args, 'server/main.ts'], serverEnv(18081), 18081);
  const rows: string[] = [];
  const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '—');
  const bareSlices: Result[] = [];
  let peakRss = 0;
  for (const c of cases(prepared)) {
    if (only && !only.split(',').some((part) => c.name.includes(part))) continue;
    wrk(c, server.url, 3);
    // Interleaved: `SLICES` pairs of (bare, case), so both are measured under the same machine
    // conditions (on a shared VM the speed of a core drifts by tens of percent within a minute).
    const slices = { bare: [] as Result[], case: [] as Result[] };
    const cpuBefore = cpuTimes();
    const count = c.slices ?? SLICES;
    for (let i = 0; i < count; i++) {
      slices.bare.push(wrk(bareCase, bare.url, sliceSeconds));
      slices.case.push(wrk(c, server.url, Math.max(1, Math.round(seconds / count))));
    }
    bareSlices.push(...slices.bare);
    const r = combine(slices.case);
    const ratio = r.rps / combine(slices.bare).rps;
    const rss = rssMb(server.pid);
    peakRss = Math.max(peakRss, rss);
    rows.push(`| ${c.name} | ${c.transport} | ${fmt(r.rps)} | ${ratio.toFixed(2)} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} | ${r.errors} | ${fmt(rss)} | ${fmt(stealPercent(cpuBefore))} |`);
    console.log(rows.at(-1));
  }
  const baseline = combine(bareSlices);
  rows.unshift(`| bare Bun.serve JSON hello (all its slices) | — | ${fmt(baseline.rps)} | 1.00 | ${fmt(baseline.p50, 2)} | ${fmt(baseline.p99, 2)} | 0 | ${fmt(rssMb(bare.pid))} | — |`);
  server.stop();
  bare.stop();

  console.log(
    `\n${connections} connections; per case a 3 s warm-up, then ${SLICES} × (${sliceSeconds} s bare, ${sliceSeconds} s case); ` +
      '× bare = case req/s ÷ bare req/s of the same slices; p50 = median of the slices, p99 = worst slice; steal = CPU time the hypervisor took during the case; wrk on CPU 0, servers on CPU 1; PostgreSQL; LOG_LEVEL=warn.\n',
  );
  console.log('| case | transport | req/s | × bare | p50 ms | p99 ms | non-2xx | server RSS MB | steal % |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) console.log(row);
  console.log(`\npeak server RSS: ${fmt(peakRss)} MB`);
}

/** Slices of equal length as one run: mean rate, median p50, worst p99, all errors. */
function combine(slices: Result[]): Result {
  const p50s = slices.map((s) => s.p50).sort((a, b) => a - b);
  return {
    rps: slices.reduce((sum, s) => sum + s.rps, 0) / slices.length,
    p50: p50s[Math.floor(p50s.length / 2)]!,
    p99: Math.max(...slices.map((s) => s.p99)),
    errors: slices.reduce((sum, s) => sum + s.errors, 0),
  };
}

await main();
