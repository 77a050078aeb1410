/** The server process as operators run it: configuration checks, logs, shutdown, restart on its data. */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENV_VARIABLES, loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/lib/logger.ts';
import { resolveEncryptionKey } from '../../server/platform/start.ts';
import { statSync } from 'node:fs';
import { PRODUCTION_RUNTIME, startServer } from '../harness/server-process.ts';

const DASHBOARD = 'dash_process_0123456789abcdef0123456789';
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'pipo-server-'));
  dirs.push(dir);
  return dir;
};

describe('configuration', () => {
  test.each([
    ['TRADING_ENCRYPTION_KEY', 'abc123', '64 hexadecimal'],
    ['DASHBOARD_KEYS', 'short-key', 'at least 32'],
    ['PORT', 'eighty', 'whole number'],
    ['DATABASE_URL', 'mysql://x', 'postgres://'],
    ['CORS_ORIGINS', 'https://app.example.com/', 'no trailing slash'],
    ['COST_PER_REQUEST_USD', '0.0000001', 'at most 6 decimals'],
    ['RATE_LIMIT_KEY_RPS', '-5', 'positive'],
    ['REDIS_URL', 'localhost:6379', 'redis://'],
    ['TRUST_PROXY', 'maybe', 'true or false'],
  ])('a bad %s names the variable', (name, value, hint) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}: .*${hint}`));
  });

  test('the relayer credentials come all three or none; the settlement interval is a whole number of ms', () => {
    expect(() => loadConfig({ POLYMARKET_BUILDER_API_KEY: 'k' })).toThrow(/POLYMARKET_BUILDER_API_KEY, POLYMARKET_BUILDER_SECRET, POLYMARKET_BUILDER_PASSPHRASE: set all three or none/);
    const config = loadConfig({ POLYMARKET_BUILDER_API_KEY: 'k', POLYMARKET_BUILDER_SECRET: 'c2VjcmV0', POLYMARKET_BUILDER_PASSPHRASE: 'p' });
    expect(config.polymarket).toMatchObject({ relayerUrl: 'https://relayer-v2.polymarket.com', builder: { apiKey: 'k', secret: 'c2VjcmV0', passphrase: 'p' } });
    expect(loadConfig({}).polymarket.builder).toBeUndefined();
    expect(loadConfig({}).settlementIntervalMs).toBe(60_000);
    expect(() => loadConfig({ SETTLEMENT_INTERVAL_MS: '-1' })).toThrow(/SETTLEMENT_INTERVAL_MS/);
  });

  test('.env.example lists every variable, and its defaults parse', async () => {
    const example = await Bun.file(new URL('../../.env.example', import.meta.url)).text();
    const entries = Object.fromEntries(
      example.split('\n').filter((l) => /^[A-Z_]+=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    expect(Object.keys(entries).sort()).toEqual(ENV_VARIABLES.filter((v) => v !== 'NODE_ENV').sort());
    expect(loadConfig(entries)).toEqual(loadConfig({}));
  });

  test('the credential key: required with PostgreSQL; generated once into the embedded data directory', () => {
    const silent = createLogger('silent');
    expect(() => resolveEncryptionKey(loadConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/db' }), silent)).toThrow('TRADING_ENCRYPTION_KEY: required with DATABASE_URL');
    // …with the command that makes one.
    expect(() => resolveEncryptionKey(loadConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/db' }), silent)).toThrow("export TRADING_ENCRYPTION_KEY=$(node -e \"console.log(require('crypto').randomBytes(32).toString('hex'))\")");
    expect(resolveEncryptionKey(loadConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/db', TRADING_ENCRYPTION_KEY: 'AB'.repeat(32) }), silent)).toBe('ab'.repeat(32));
    const dir = tempDir();
    const first = resolveEncryptionKey(loadConfig({ DATA_DIR: dir }), silent);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(resolveEncryptionKey(loadConfig({ DATA_DIR: dir }), silent)).toBe(first);
    expect(statSync(join(dir, 'trading-encryption.key')).mode & 0o777).toBe(0o600);
    expect(resolveEncryptionKey(loadConfig({ DATA_DIR: ':memory:' }), silent)).not.toBe(first);
  });

  test('defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      database: { kind: 'pglite', dataDir: './.data' },
      costPerRequestMicros: 2000,
      rateLimits: { key: { rps: 50, burst: 100 }, trade: { rps: 10, burst: 20 }, ip: { rps: 20, burst: 40 }, authFailure: { rps: 1, burst: 20 } },
      corsOrigins: [],
      dashboardKeys: [],
    });
  });

  test('the server refuses to start on a bad value, naming it', async () => {
    const child = Bun.spawn([process.execPath, 'server/main.ts'], {
      env: { PATH: process.env.PATH!, TRADING_ENCRYPTION_KEY: 'nothex', DATA_DIR: ':memory:' },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    expect(await child.exited).toBe(78);
    expect(await new Response(child.stderr).text()).toContain('TRADING_ENCRYPTION_KEY: must be 64 hexadecimal characters');
  });
});

describe('a running server', () => {
  test('the tests and the benchmark run the server with the same runtime settings as npm start', async () => {
    const { scripts } = await Bun.file(new URL('../../package.json', import.meta.url)).json();
    const start: string = scripts.start;
    for (const arg of PRODUCTION_RUNTIME.args) expect(start).toContain(` ${arg} `);
    expect(start).toContain('NODE_ENV=production');
    expect(start).toContain(`BUN_JSC_forceRAMSize=\${BUN_JSC_forceRAMSize:-${PRODUCTION_RUNTIME.env.BUN_JSC_forceRAMSize}}`);
  });

  test('logs one JSON line per request without keys, and stops cleanly on SIGTERM', async () => {
    const server = await startServer({ DATA_DIR: tempDir(), DASHBOARD_KEYS: DASHBOARD });
    const created = await fetch(`${server.url}/api/keys`, {
      method: 'POST',
      headers: { 'x-api-key': DASHBOARD, 'x-account-id': 'proc', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'p' }),
    }).then((r) => r.json());
    const billed = await fetch(`${server.url}/api/billing?apiKey=${created.key}`, { headers: { 'x-request-id': 'trace-1' } });
    expect(billed.status).toBe(402);
    const line = await server.waitFor((l) => l.msg === 'request' && l.requestId === 'trace-1');
    expect(line).toMatchObject({ level: 'info', method: 'GET', path: '/api/billing', status: 402, accountId: 'proc' });
    expect(typeof line.durationMs).toBe('number');
    const everything = server.lines.join('\n');
    expect(everything).not.toContain(created.key);
    expect(everything).not.toContain(DASHBOARD);

    expect(await server.stop('SIGTERM')).toBe(0);
    expect(server.lines.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
  }, 60_000); // a fresh PGlite directory: initdb alone takes several seconds on a loaded machine

  test('a Host header that is not a host is a 400 in our error shape; a host like api.example.com is just a host', async () => {
    const server = await startServer({ DATA_DIR: ':memory:' });
    // Started without DASHBOARD_KEYS: it says how to set one, with an example of the right length.
    const hint = await server.waitFor((l) => l.level === 'warn' && String(l.msg).startsWith('DASHBOARD_KEYS is empty'));
    expect(hint.msg).toMatch(/restart with a secret of at least 32 characters, e\.g\. DASHBOARD_KEYS=dash_[0-9a-f]{32} npm start$/);
    const { port } = new URL(server.url);
    // fetch() will not send an invalid Host, so these go over a raw socket.
    const raw = async (host: string, path: string) => {
      let text = '';
      const done = Promise.withResolvers<void>();
      const socket = await Bun.connect({
        hostname: '127.0.0.1',
        port: Number(port),
        socket: { data: (_s, chunk) => void (text += chunk.toString()), close: () => done.resolve(), error: () => done.resolve() },
      });
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      await done.promise;
      const [head, body] = [text.slice(0, text.indexOf('\r\n\r\n')), text.slice(text.indexOf('\r\n\r\n') + 4)];
      return { status: Number(head.split(' ')[1]), head: head.toLowerCase(), body };
    };
    for (const host of ['a/b', 'a?b', 'a#b']) {
      for (const path of ['/api/pricing', '/trpc/pricing.get', '/healthz']) {
        const res = await raw(host, path);
        expect(res.status).toBe(400);
        expect(res.head).toContain('x-request-id: req_');
        expect(JSON.parse(res.body)).toMatchObject({ code: 'BAD_REQUEST', message: 'Invalid Host header', status: 400 });
      }
    }
    for (const path of ['/api/pricing', '/trpc/pricing.get']) expect((await raw('api.example.com', path)).status).toBe(200);
    expect(await server.stop()).toBe(0);
  }, 60_000);

  test('in-flight requests finish during shutdown', async () => {
    const server = await startServer({ DATA_DIR: ':memory:' });
    const inflight = Array.from({ length: 20 }, () => fetch(`${server.url}/api/pricing`).then((r) => r.status));
    await Bun.sleep(5);
    const exited = server.stop('SIGTERM');
    const statuses = await Promise.allSettled(inflight);
    expect(await exited).toBe(0);
    // Requests either completed (200) or were never accepted (connection refused); none failed mid-way.
    for (const s of statuses) if (s.status === 'fulfilled') expect(s.value).toBe(200);
  }, 60_000);

  test('a restart on the same data directory keeps accounts and keys', async () => {
    const dataDir = tempDir();
    const first = await startServer({ DATA_DIR: dataDir, DASHBOARD_KEYS: DASHBOARD });
    const headers = { 'x-api-key': DASHBOARD, 'x-account-id': 'persist', 'content-type': 'application/json' };
    const created = await fetch(`${first.url}/api/keys`, { method: 'POST', headers, body: '{"name":"kept"}' }).then((r) => r.json());
    await fetch(`${first.url}/api/accounts/credits`, { method: 'POST', headers, body: '{"amountUsd":1.02,"reference":"r1"}' });
    expect(await first.stop()).toBe(0);

    const seededFirst = await first.waitFor((l) => l.msg === 'seeded' && l.step === 'companies');
    expect(seededFirst.inserted).toBeGreaterThanOrEqual(150);

    const second = await startServer({ DATA_DIR: dataDir, DASHBOARD_KEYS: DASHBOARD });
    const billing = await fetch(`${second.url}/api/billing`, { headers: { 'x-api-key': created.key } }).then((r) => r.json());
    expect(billing).toMatchObject({ usageCount: 1, balanceUsd: 1.018 });
    // The second start seeds nothing twice.
    expect(await second.waitFor((l) => l.msg === 'seeded' && l.step === 'companies')).toMatchObject({ inserted: 0, updated: 0 });
    expect(await first.waitFor((l) => l.msg === 'seeded' && l.step === 'events')).toMatchObject({ inserted: 17, updated: 0 });
    expect(await second.waitFor((l) => l.msg === 'seeded' && l.step === 'events')).toMatchObject({ inserted: 0, updated: 0 });
    const stats = await fetch(`${second.url}/api/private-companies/stats`, { headers: { 'x-api-key': created.key } }).then((r) => r.json());
    expect(stats.totalCompanies).toBe(seededFirst.inserted);
    expect(await second.stop()).toBe(0);
  }, 40_000);
});
