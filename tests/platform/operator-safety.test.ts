/**
 * What an operator can get wrong, and what the process does about it ("Data loss and
 * operator safety"): one process per embedded data directory, the port checked before any data is
 * touched, private file modes, a PostgreSQL that is down at start or frozen, and a CLI whose stdout
 * is one JSON document and which never creates an account by typo. Real processes where the process
 * itself is under test.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { chmodSync, existsSync, lstatSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { openDatabase } from '../../db/client.ts';
import { accounts } from '../../db/schema.ts';
import { runCli } from '../../server/commands/cli.ts';
import { createTestApp } from '../harness/app.ts';
import { startCuttableProxy } from '../harness/cuttable-proxy.ts';
import { engine, freshDatabase } from '../harness/databases.ts';
import { freePort, runToExit, spawnServer, startServer, type Finished } from '../harness/server-process.ts';

const DASHBOARD = 'dash_operator_0123456789abcdef0123456789';
const KEY = 'b'.repeat(64);
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'pipo-operator-'));
  dirs.push(dir);
  return dir;
};

const cli = (args: string[], env: Record<string, string>) => runToExit(['server/commands/cli.ts', ...args], env);
const server = (env: Record<string, string>) => runToExit(['server/main.ts'], { HOST: '127.0.0.1', ...env });

/** Exactly one line on stderr, and no stack trace anywhere. */
function expectOneLine(run: Finished): string {
  const lines = run.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(run.stderr + run.stdout).not.toMatch(/^\s+at /m);
  return lines[0]!;
}

/** Every path under `dir`, `dir` included. */
function walk(dir: string): string[] {
  const all = [dir];
  for (let i = 0; i < all.length; i++) {
    if (lstatSync(all[i]!).isDirectory()) for (const name of readdirSync(all[i]!)) all.push(join(all[i]!, name));
  }
  return all;
}

describe('one process per embedded data directory', () => {
  test('a second server and the CLI (writes and reads) refuse a directory a server holds; kill -9 leaves no lock behind', async () => {
    const dataDir = join(tempDir(), 'data');
    const first = await startServer({ DATA_DIR: dataDir, DASHBOARD_KEYS: DASHBOARD, TRADING_ENCRYPTION_KEY: KEY });
    const pid = first.process.pid;

    const second = await server({ DATA_DIR: dataDir, PORT: String(freePort()), TRADING_ENCRYPTION_KEY: KEY });
    expect(second.exitCode).toBe(75);
    const line = expectOneLine(second);
    expect(line).toContain(`DATA_DIR ${dataDir} is in use by process ${pid}`);
    expect(line).toContain('stop that process first');
    expect(second.stdout).not.toContain('seeded'); // refused before touching the database

    for (const args of [
      ['credit', '--account', 'acme', '--usd', '1', '--reference', 'X'],
      ['show', '--account', 'acme'],
    ]) {
      const run = await cli(args, { DATA_DIR: dataDir, TRADING_ENCRYPTION_KEY: KEY });
      expect(run.exitCode).toBe(75);
      expect(run.stdout).toBe('');
      expect(expectOneLine(run)).toContain('use its HTTP/dashboard routes instead of the CLI');
    }

    // The kernel drops the lock with the process: after kill -9 the CLI works, and what it wrote is
    // there for the next server.
    await first.stop('SIGKILL');
    const created = await cli(['create-key', '--account', 'acme', '--name', 'ops'], { DATA_DIR: dataDir, TRADING_ENCRYPTION_KEY: KEY });
    expect(created.exitCode).toBe(0);
    const key = JSON.parse(created.stdout).key as string;
    const credited = await cli(['credit', '--account', 'acme', '--usd', '1', '--reference', 'X'], { DATA_DIR: dataDir, TRADING_ENCRYPTION_KEY: KEY });
    expect(JSON.parse(credited.stdout)).toMatchObject({ credited: true, balanceUsd: 1 });

    const again = await startServer({ DATA_DIR: dataDir, DASHBOARD_KEYS: DASHBOARD, TRADING_ENCRYPTION_KEY: KEY });
    const billing = await fetch(`${again.url}/api/billing`, { headers: { 'x-api-key': key } }).then((r) => r.json());
    expect(billing.balanceUsd).toBeCloseTo(1 - 0.002, 6);
    expect(await again.stop()).toBe(0);
  }, 90_000);
});

describe('the port', () => {
  test('a port in use is one line and exit 75, before the data directory is even created', async () => {
    const running = await startServer({ DATA_DIR: ':memory:' });
    const port = new URL(running.url).port;
    const dataDir = join(tempDir(), 'never-created');
    const second = await server({ DATA_DIR: dataDir, PORT: port });
    expect(second.exitCode).toBe(75);
    expect(expectOneLine(second)).toBe(`port ${port} on 127.0.0.1 is in use; stop the other process or set PORT`);
    expect(existsSync(dataDir)).toBe(false);
    expect(await running.stop()).toBe(0);
  }, 60_000);

  test('while the database opens, the port answers 503 in our shape', async () => {
    const starting = spawnServer({ DATA_DIR: join(tempDir(), 'data'), TRADING_ENCRYPTION_KEY: KEY });
    let res: Response | undefined;
    for (const deadline = Date.now() + 10_000; !res && Date.now() < deadline; ) {
      res = await fetch(`${starting.url}/api/pricing`).catch(() => undefined);
      if (!res) await Bun.sleep(20);
    }
    // The first answer comes while PGlite creates and seeds a new cluster (seconds).
    expect(res!.status).toBe(503);
    expect(res!.headers.get('retry-after')).toBe('1');
    const body = await res!.json();
    expect(body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'The server is starting; retry shortly', status: 503 });
    expect(body.requestId).toBe(res!.headers.get('x-request-id'));
    // Alive but not ready: a liveness probe must not kill a server waiting for its database.
    const [health, ready] = await Promise.all([fetch(`${starting.url}/healthz`), fetch(`${starting.url}/readyz`)]);
    if (ready.status === 503) {
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'starting' });
    }
    expect(await starting.stop()).toBe(0);
  }, 60_000);
});

describe('file modes', () => {
  test('DATA_DIR is created 0700 with every file 0600; a loose existing directory is tightened, with a warning', async () => {
    const dataDir = join(tempDir(), 'nested', 'data');
    const first = await startServer({ DATA_DIR: dataDir, TRADING_ENCRYPTION_KEY: KEY });
    const loose = () => walk(dataDir).filter((path) => (statSync(path).mode & 0o077) !== 0);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(walk(dataDir).length).toBeGreaterThan(100);
    expect(loose()).toEqual([]);
    expect(first.lines.join('\n')).not.toContain('readable by other users');
    expect(await first.stop()).toBe(0);
    expect(loose()).toEqual([]);

    // A data directory made by an older version (0755 / 0644).
    for (const path of walk(dataDir)) chmodSync(path, statSync(path).isDirectory() ? 0o755 : 0o644);
    const second = await startServer({ DATA_DIR: dataDir, TRADING_ENCRYPTION_KEY: KEY });
    const warning = await second.waitFor((l) => l.level === 'warn' && l.msg.includes('readable by other users'));
    expect(warning.entries).toBeGreaterThan(100);
    expect(loose()).toEqual([]);
    expect(await second.stop()).toBe(0);
  }, 60_000);
});

describe('PostgreSQL down at start', () => {
  test('nobody listening: one warning naming host:port (never the password), retries, then exit 69 with one line', async () => {
    const port = freePort();
    const run = await server({
      DATABASE_URL: `postgres://pipo:hunter2secret@127.0.0.1:${port}/pipo`,
      TRADING_ENCRYPTION_KEY: KEY,
      DATABASE_START_TIMEOUT_MS: '1500',
      PORT: String(freePort()),
    });
    expect(run.exitCode).toBe(69);
    expect(expectOneLine(run)).toMatch(new RegExp(`^PostgreSQL at 127\\.0\\.0\\.1:${port} did not answer within 1\\.5 s \\(.*ECONNREFUSED.*\\); giving up`));
    const warning = JSON.parse(run.stdout.split('\n').find((l) => l.includes('unreachable'))!);
    expect(warning).toMatchObject({ level: 'warn', host: `127.0.0.1:${port}` });
    expect(run.stdout + run.stderr).not.toContain('hunter2secret');
  }, 60_000);

  test('SIGTERM while waiting for PostgreSQL stops at once', async () => {
    const waiting = spawnServer({ DATABASE_URL: `postgres://pipo@127.0.0.1:${freePort()}/pipo`, TRADING_ENCRYPTION_KEY: KEY, DATABASE_START_TIMEOUT_MS: '60000' });
    await waiting.waitFor((l) => l.msg.includes('unreachable'));
    const signalled = performance.now();
    expect(await waiting.stop('SIGTERM')).toBe(0);
    expect(performance.now() - signalled).toBeLessThan(3_000);
  }, 60_000);

  test.skipIf(engine !== 'postgres')('a PostgreSQL that comes back in time: the server starts normally', async () => {
    const database = await freshDatabase();
    const url = new URL(database.url!);
    const proxy = await startCuttableProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.host = `127.0.0.1:${proxy.port}`;
    proxy.cut();
    const waiting = spawnServer({ DATABASE_URL: url.toString(), TRADING_ENCRYPTION_KEY: KEY, DATABASE_START_TIMEOUT_MS: '30000' });
    try {
      await waiting.waitFor((l) => l.msg.includes('unreachable'));
      proxy.restore();
      await waiting.waitFor((l) => l.msg === 'PostgreSQL is reachable');
      for (const deadline = Date.now() + 20_000; ; await Bun.sleep(100)) {
        const ready = await fetch(`${waiting.url}/readyz`).catch(() => undefined);
        if (ready?.status === 200) break;
        if (Date.now() > deadline) throw new Error(`not ready: ${waiting.lines.join('\n')}`);
      }
      expect(await waiting.stop()).toBe(0);
    } finally {
      waiting.process.kill('SIGKILL');
      await proxy.close();
      await database.close();
    }
  }, 60_000);
});

describe('PostgreSQL frozen', () => {
  test.skipIf(engine !== 'postgres')('/readyz answers 503 well within 1.5 s while the connection is up but nothing answers', async () => {
    const base = await freshDatabase();
    const url = new URL(base.url!);
    const proxy = await startCuttableProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.host = `127.0.0.1:${proxy.port}`;
    const proxied = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 2 });
    const t = await createTestApp({}, { database: proxied });
    try {
      expect((await t.request('/readyz')).status).toBe(200);
      proxy.freeze();
      const started = performance.now();
      const bounded = await Promise.race([t.request('/readyz'), Bun.sleep(5_000).then(() => undefined)]);
      const elapsed = performance.now() - started;
      expect(bounded?.status).toBe(503);
      expect(await bounded!.json()).toEqual({ status: 'unavailable', database: 'unreachable' });
      expect(elapsed).toBeLessThan(1_500);
      proxy.thaw();
      expect((await t.request('/readyz')).status).toBe(200);
    } finally {
      proxy.thaw();
      await t.close();
      await proxied.close();
      await proxy.close();
      await base.close();
    }
  }, 60_000);
});

describe('the CLI', () => {
  test('stdout is exactly one JSON document (logs go to stderr); a typo account is one line and exit 1', async () => {
    // No TRADING_ENCRYPTION_KEY: the embedded database's key warning is logged on every run.
    const env = { DATA_DIR: join(tempDir(), 'data') };
    const created = await cli(['create-key', '--account', 'acme', '--name', 'ops'], env);
    expect(created.exitCode).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ name: 'ops', key: expect.stringMatching(/^pipo_/) });
    expect(created.stderr).toContain('TRADING_ENCRYPTION_KEY is not set');

    const shown = await cli(['show', '--account', 'acme'], env);
    expect(JSON.parse(shown.stdout)).toMatchObject({ accountId: 'acme', balanceUsd: 0 });

    const typo = await cli(['credit', '--account', 'acmee', '--usd', '5', '--reference', 'wire-1'], env);
    expect(typo.exitCode).toBe(1);
    expect(typo.stdout).toBe('');
    expect(typo.stderr.trim().split('\n').at(-1)).toBe('no account acmee; create it with create-key');
  }, 60_000);

  test('only create-key creates an account: every other command on an unknown account fails and creates nothing', async () => {
    const t = await createTestApp();
    try {
      for (const args of [
        ['credit', '--usd', '1', '--reference', 'r'],
        ['set-rate', '--usd', '0.001'],
        ['show'],
        ['list-keys'],
        ['revoke-key', '--key', 'key_x'],
      ]) {
        const [command, ...rest] = args;
        await expect(runCli([command!, '--account', 'ghost', ...rest], t.services)).rejects.toThrow('no account ghost; create it with create-key');
      }
      expect(await t.services.database.db.select().from(accounts).where(eq(accounts.id, 'ghost'))).toEqual([]);
      await runCli(['create-key', '--account', 'ghost', '--name', 'first'], t.services);
      expect(await runCli(['credit', '--account', 'ghost', '--usd', '1', '--reference', 'r'], t.services)).toMatchObject({ credited: true, balanceUsd: 1 });
    } finally {
      await t.close();
    }
  });
});
