/**
 * `npm run bench:streams` — not a test. One real server process (production settings: --smol and
 * BUN_JSC_forceRAMSize, as `npm start`) holding BENCH_SUBSCRIBERS (10,000) subscribers of the public
 * valuation stream, each following one of the seeded events, while the market recorder takes a
 * snapshot every BENCH_RECORD_MS and every event's valuation changes between snapshots. For every
 * message the delay from the snapshot's time (the valuation's `timestamp`, the recording's takenAt)
 * to its receipt at the subscriber is measured; the server's RSS is sampled throughout.
 * Targets: p99 ≤ 250 ms, RSS ≤ 400 MB.
 *
 * How the valuations change: on PostgreSQL (default) the bench moves one band's reference price of
 * every event (`event_bands.seed_price`, which the paper venue centres its books on) between
 * snapshots, so every recording changes every event and every subscriber gets one message per
 * recording. With BENCH_DATABASE=pglite the server's embedded database is its own, so changes come
 * from the paper venue's drift only (PAPER_DRIFT=0.5: a few events per snapshot).
 *
 * Subscribers are raw HTTP/1.1 connections (a chunked-transfer and SSE reader on Bun.connect) spread
 * over BENCH_CLIENTS client processes (this file, run with --client), so that no client process
 * holds more file descriptors than the limit allows and one busy client does not stall the others.
 *
 *   BENCH_SUBSCRIBERS (10000)  BENCH_CLIENTS (4)  BENCH_SECONDS (30)  BENCH_RECORD_MS (1000)
 *   BENCH_DATABASE (postgres | pglite)  BENCH_DATABASE_URL (postgres://postgres@127.0.0.1:5432/postgres)
 */
import { spawn, type Subprocess } from 'bun';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { openDatabase } from '../../db/client.ts';
import { seedDatabase } from '../../seeds/index.ts';
import { createLogger } from '../../server/lib/logger.ts';
import { freePort, PRODUCTION_RUNTIME } from '../harness/server-process.ts';

const repositoryRoot = new URL('../..', import.meta.url).pathname;

// --- the client process ------------------------------------------------------------------------

interface ClientPlan {
  port: number;
  paths: string[];
  /** The event index each path follows. */
  events: number[];
  /** Connections opened at once while ramping up. */
  parallel: number;
  out: string;
}

const PATTERN = Buffer.from('"timestamp":"');
const STAMP_LENGTH = 24; // 2026-11-24T19:50:38.970Z

/**
 * One subscriber: reads the HTTP response head, then chunked data, and records for each message the
 * receipt time minus its `timestamp`. Only the valuation's top-level `timestamp` matches the pattern
 * (one per message); a pattern split across reads is found through the carried tail.
 */
class Subscriber {
  headDone = false;
  head = '';
  status = 0;
  messages = 0;
  /** Chunked decoding: bytes left in the current chunk, or -1 while reading a size line. */
  private left = -1;
  private sizeLine = '';
  private skipCrlf = 0;
  private carry: Buffer = Buffer.alloc(0);
  closed = false;

  constructor(private readonly record: (delayMs: number, stampMs: number) => void) {}


  feed(bytes: Buffer, now: number) {
    let offset = 0;
    if (!this.headDone) {
      const text = bytes.toString('latin1');
      const end = (this.head + text).indexOf('\r\n\r\n');
      if (end < 0) {
        this.head += text;
        return;
      }
      const headLength = end + 4 - this.head.length;
      this.head = (this.head + text).slice(0, end);
      this.status = Number(this.head.slice(9, 12));
      this.headDone = true;
      offset = headLength;
    }
    while (offset < bytes.length) {
      if (this.skipCrlf > 0) {
        const n = Math.min(this.skipCrlf, bytes.length - offset);
        this.skipCrlf -= n;
        offset += n;
        continue;
      }
      if (this.left < 0) {
        const lf = bytes.indexOf(10, offset);
        if (lf < 0) {
          this.sizeLine += bytes.toString('latin1', offset);
          return;
        }
        this.sizeLine += bytes.toString('latin1', offset, lf);
        offset = lf + 1;
        const size = parseInt(this.sizeLine.trim(), 16);
        this.sizeLine = '';
        if (size === 0) {
          this.closed = true;
          return;
        }
        this.left = size;
        continue;
      }
      const n = Math.min(this.left, bytes.length - offset);
      this.data(bytes.subarray(offset, offset + n), now);
      offset += n;
      this.left -= n;
      if (this.left === 0) {
        this.left = -1;
        this.skipCrlf = 2;
      }
    }
  }

  private data(piece: Buffer, now: number) {
    const buffer = this.carry.length ? Buffer.concat([this.carry, piece]) : piece;
    let from = 0;
    for (;;) {
      const at = buffer.indexOf(PATTERN, from);
      if (at < 0) {
        this.carry = Buffer.from(buffer.subarray(Math.max(from, buffer.length - PATTERN.length + 1)));
        return;
      }
      const start = at + PATTERN.length;
      if (start + STAMP_LENGTH > buffer.length) {
        this.carry = Buffer.from(buffer.subarray(at));
        return;
      }
      const stamp = Date.parse(buffer.toString('latin1', start, start + STAMP_LENGTH));
      this.messages++;
      this.record(now - stamp, stamp);
      from = start + STAMP_LENGTH;
    }
  }
}

async function runClient() {
  const plan = JSON.parse(process.argv[process.argv.indexOf('--client') + 1]!) as ClientPlan;
  let measuring = false;
  const delays: number[] = [];
  const stamps: number[] = [];
  const eventOf: number[] = [];
  const subscribers: Subscriber[] = [];
  let connected = 0;
  let failed = 0;
  const clock = () => performance.timeOrigin + performance.now();
  const report = (message: object) => process.stdout.write(JSON.stringify(message) + '\n');

  const connect = (path: string, event: number) =>
    new Promise<void>((resolve) => {
      const subscriber = new Subscriber((delay, stamp) => {
        if (!measuring) return;
        delays.push(delay);
        stamps.push(stamp);
        eventOf.push(event);
      });
      subscribers.push(subscriber);
      let settled = false;
      const done = () => {
        if (!settled) {
          settled = true;
          resolve();
        }
      };
      Bun.connect({
        hostname: '127.0.0.1',
        port: plan.port,
        socket: {
          open(socket) {
            socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${plan.port}\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\n\r\n`);
          },
          data(_socket, bytes) {
            subscriber.feed(bytes as Buffer, clock());
            if (subscriber.messages > 0 && !settled) {
              if (subscriber.status === 200) connected++;
              else failed++;
              done();
            } else if (subscriber.headDone && subscriber.status !== 200 && !settled) {
              failed++;
              done();
            }
          },
          close() {
            subscriber.closed = true;
            if (!settled) failed++;
            done();
          },
          error() {
            if (!settled) failed++;
            done();
          },
        },
      }).catch(() => {
        failed++;
        done();
      });
    });

  // Ramp up `parallel` connections at a time: each open takes a lease (one short transaction).
  for (let i = 0; i < plan.paths.length; i += plan.parallel) {
    await Promise.all(plan.paths.slice(i, i + plan.parallel).map((path, j) => connect(path, plan.events[i + j]!)));
    report({ connected, failed });
  }
  report({ ready: true, connected, failed });

  for await (const line of console) {
    if (line === 'measure') measuring = true;
    if (line === 'stop') break;
  }
  const closed = subscribers.filter((s) => s.closed).length;
  await Bun.write(plan.out, JSON.stringify({ delays, stamps, events: eventOf, closed, connected: subscribers.map((s) => s.status === 200 && !s.closed) }));
  report({ written: true });
  process.exit(0);
}

// --- the orchestrator --------------------------------------------------------------------------

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 10_000);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 4);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const RECORD_MS = Number(process.env.BENCH_RECORD_MS ?? 1_000);
const DATABASE = process.env.BENCH_DATABASE ?? 'postgres';
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DB_NAME = 'pipo_bench_streams';

function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    return kb / 1024;
  } catch {
    return 0;
  }
}

/** Lines of a child's stdout, as JSON. */
function jsonLines(child: Subprocess<'pipe', 'pipe', 'inherit'>, onLine: (message: any) => void) {
  void (async () => {
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const chunk of child.stdout) {
      buffered += decoder.decode(chunk);
      let newline;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        try {
          onLine(JSON.parse(line));
        } catch {
          // not ours
        }
      }
    }
  })();
}

async function prepareDatabase(): Promise<string> {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`);
  await admin.unsafe(`CREATE DATABASE ${DB_NAME}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${DB_NAME}`;
  const database = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 2 });
  await database.migrate();
  await seedDatabase(database.db, createLogger('silent'));
  await database.close();
  return url.toString();
}

async function runBench() {
  const work = mkdtempSync(join(tmpdir(), 'pipo-stream-bench-'));
  const databaseUrl = DATABASE === 'postgres' ? await prepareDatabase() : undefined;
  const port = freePort();
  const env: Record<string, string> = {
    PATH: process.env.PATH!,
    HOME: process.env.HOME ?? '/tmp',
    ...PRODUCTION_RUNTIME.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    TRADING_ENCRYPTION_KEY: 'c'.repeat(64),
    MARKET_RECORD_INTERVAL_MS: String(RECORD_MS),
    MARKET_DATA_TTL_MS: String(Math.min(RECORD_MS, 2000)),
    STREAM_MAX_PER_IP: String(SUBSCRIBERS + 100),
    RATE_LIMIT_IP_RPS: '1000000',
    RATE_LIMIT_IP_BURST: '1000000',
    SHUTDOWN_TIMEOUT_MS: '2000',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: '10', PAPER_DRIFT: '0' } : { DATA_DIR: join(work, 'data'), PAPER_DRIFT: '0.5' }),
  };
  const server = spawn([process.execPath, ...PRODUCTION_RUNTIME.args, 'server/main.ts'], { cwd: repositoryRoot, env, stdout: 'inherit', stderr: 'inherit' });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) break;
    } catch {}
    if (i > 600 || server.exitCode !== null) throw new Error('the server did not start');
    await Bun.sleep(100);
  }
  const events: string[] = ((await (await fetch(`${base}/api/trading/events`)).json()) as any).events.map((e: any) => e.id);
  const idleRss = rssMb(server.pid);
  console.error(`server up (pid ${server.pid}, ${DATABASE}), ${events.length} events, RSS ${idleRss.toFixed(0)} MB; opening ${SUBSCRIBERS} subscribers over ${CLIENTS} client processes…`);

  // Subscriber i follows event i mod n.
  const paths = Array.from({ length: SUBSCRIBERS }, (_, i) => `/api/trading/stream?eventSlug=${events[i % events.length]}`);
  const clients = Array.from({ length: CLIENTS }, (_, c) => {
    const mine = paths.map((_, i) => i).filter((i) => i % CLIENTS === c);
    const plan: ClientPlan = { port, paths: mine.map((i) => paths[i]!), events: mine.map((i) => i % events.length), parallel: 100, out: join(work, `client-${c}.json`) };
    const child = spawn([process.execPath, import.meta.path, '--client', JSON.stringify(plan)], { cwd: repositoryRoot, stdin: 'pipe', stdout: 'pipe', stderr: 'inherit', env: { ...process.env } });
    const state = { child, plan, connected: 0, failed: 0, ready: false, written: false };
    jsonLines(child, (m) => {
      if ('connected' in m) ((state.connected = m.connected), (state.failed = m.failed));
      if (m.ready) state.ready = true;
      if (m.written) state.written = true;
    });
    return state;
  });
  const started = performance.now();
  let lastPrint = 0;
  while (!clients.every((c) => c.ready)) {
    await Bun.sleep(200);
    if (performance.now() - lastPrint > 2000) {
      lastPrint = performance.now();
      console.error(`  connected ${clients.reduce((n, c) => n + c.connected, 0)}, failed ${clients.reduce((n, c) => n + c.failed, 0)}`);
    }
  }
  const connected = clients.reduce((n, c) => n + c.connected, 0);
  const failed = clients.reduce((n, c) => n + c.failed, 0);
  console.error(`all clients ready in ${((performance.now() - started) / 1000).toFixed(1)} s: ${connected} connected, ${failed} failed; RSS ${rssMb(server.pid).toFixed(0)} MB. Measuring ${SECONDS} s…`);

  // Every event's valuation changes between recordings: one band's reference price moves each period.
  let mover: ReturnType<typeof setInterval> | undefined;
  let adminSql: postgres.Sql | undefined;
  if (databaseUrl) {
    adminSql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    const bands = await adminSql<{ id: string; seed_price: number }[]>`
      select distinct on (event_id) id, seed_price from event_bands order by event_id, abs(seed_price - 0.5), band_index`;
    let step = 0;
    const move = async () => {
      step++;
      for (const band of bands) await adminSql!`update event_bands set seed_price = ${Math.min(0.95, Number(band.seed_price) + (step % 10) * 0.01)} where id = ${band.id}`;
    };
    mover = setInterval(() => void move().catch((e) => console.error('move failed', e)), RECORD_MS);
  }
  for (const c of clients) c.child.stdin.write('measure\n');
  const rss: number[] = [];
  const end = performance.now() + SECONDS * 1000;
  while (performance.now() < end) {
    rss.push(rssMb(server.pid));
    await Bun.sleep(250);
  }
  clearInterval(mover);
  for (const c of clients) c.child.stdin.write('stop\n');
  for (const c of clients) await c.child.exited;

  // Merge.
  const all: number[] = [];
  /** recording (its snapshot time) → event → messages received. */
  const perRecording = new Map<number, Map<number, number>>();
  const followers = new Map<number, number>();
  let closedEarly = 0;
  for (const c of clients) {
    const result = JSON.parse(readFileSync(c.plan.out, 'utf8')) as { delays: number[]; stamps: number[]; events: number[]; closed: number; connected: boolean[] };
    closedEarly += result.closed;
    result.connected.forEach((ok, i) => ok && followers.set(c.plan.events[i]!, (followers.get(c.plan.events[i]!) ?? 0) + 1));
    for (let i = 0; i < result.delays.length; i++) {
      all.push(result.delays[i]!);
      let byEvent = perRecording.get(result.stamps[i]!);
      if (!byEvent) perRecording.set(result.stamps[i]!, (byEvent = new Map()));
      byEvent.set(result.events[i]!, (byEvent.get(result.events[i]!) ?? 0) + 1);
    }
  }
  const sorted = Float64Array.from(all).sort();
  // Complete: every follower of every event a recording changed got that recording's message.
  const recordings = [...perRecording.entries()].sort((a, b) => a[0] - b[0]);
  const complete = recordings.filter(([, byEvent]) => [...byEvent].every(([event, n]) => n === followers.get(event))).length;
  const eventsPerRecording = recordings.length ? recordings.reduce((n, [, byEvent]) => n + byEvent.size, 0) / recordings.length : 0;
  const summary = {
    date: new Date().toISOString().slice(0, 10),
    machine: `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GB`,
    database: DATABASE,
    subscribers: connected,
    failedToConnect: failed,
    droppedDuringRun: closedEarly,
    recordingsMeasured: recordings.length,
    recordingsDeliveredToEveryFollower: complete,
    changedEventsPerRecording: Math.round(eventsPerRecording * 10) / 10,
    messages: sorted.length,
    p50Ms: Math.round(quantile(sorted, 0.5) * 10) / 10,
    p99Ms: Math.round(quantile(sorted, 0.99) * 10) / 10,
    maxMs: Math.round(quantile(sorted, 1) * 10) / 10,
    serverRssMb: { idle: Math.round(idleRss), max: Math.round(Math.max(...rss)), end: Math.round(rss.at(-1) ?? 0) },
  };
  console.log(JSON.stringify(summary, null, 2));
  console.log(
    `| ${summary.date} | ${summary.machine}, ${DATABASE} | ${summary.subscribers} | ${summary.p50Ms} ms | ${summary.p99Ms} ms | ${summary.serverRssMb.max} MB |`,
  );
  const pass = summary.p99Ms <= 250 && summary.serverRssMb.max <= 400 && failed === 0;
  console.error(pass ? 'targets met (p99 ≤ 250 ms, RSS ≤ 400 MB)' : 'TARGETS MISSED');

  server.kill('SIGTERM');
  await Promise.race([server.exited, Bun.sleep(5000)]);
  if (server.exitCode === null) server.kill('SIGKILL');
  await adminSql?.end();
  if (databaseUrl) {
    const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`);
    await admin.end();
  }
  rmSync(work, { recursive: true, force: true });
  process.exit(pass ? 0 : 1);
}

if (process.argv.includes('--client')) await runClient();
else await runBench();
