/**
 * The published client package, @pre-ipo/client (client/README.md), as a user gets it: built and
 * packed as `npm pack` packs it, installed from the tarball into an empty project that has only
 * TypeScript and the package's peer dependencies, and used there by the programs in
 * client/consumer/: they must type-check (one uses every router of the service), the calls marked
 * wrong must not, and run against a live server they must get real answers, typed errors, and each
 * call's cost and request id. Also: the committed REST types are what the current OpenAPI document
 * generates (client/scripts/generate-rest.ts).
 *
 * The install uses the npm registry (through npm's cache when it has the packages).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { GENERATED_FILE, restClientSource } from '../../client/scripts/generate-rest.ts';
import { appRouter } from '../../routers/index.ts';
import { stopStreams, liftStreamIdleTimeout } from '../../server/streams/registry.ts';
import { createTestApp, DASHBOARD_KEY, type TestApp } from '../harness/app.ts';
import { fundedAccount, newUserId, type FundedAccount } from '../harness/factories.ts';

const REPOSITORY = new URL('../..', import.meta.url).pathname;
const CLIENT = join(REPOSITORY, 'client');
const CONSUMER = join(CLIENT, 'consumer');
/** What the installed package may bring along: itself, its peers, TypeScript and its one dependency. */
const EXPECTED_MODULES = ['@pre-ipo/client', '@trpc/client', '@trpc/server', 'openapi-fetch', 'openapi-typescript-helpers', 'typescript'];
const STARTING_USD = 100;

let project: string;
let packedFiles: string[];
/** tsc's errors in the consumer project, by file: `line: message`. */
const typeErrors = new Map<string, string[]>();
let tscOutput = '';

let t: TestApp;
let server: ReturnType<typeof Bun.serve>;
let account: FundedAccount;
const userId = newUserId();

interface Finished {
  exitCode: number;
  stdout: string;
  stderr: string;
}

async function run(command: string[], cwd: string, env: Record<string, string> = {}): Promise<Finished> {
  const child = Bun.spawn(command, { cwd, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { exitCode, stdout, stderr };
}

async function mustRun(command: string[], cwd: string): Promise<string> {
  const result = await run(command, cwd);
  if (result.exitCode !== 0) throw new Error(`${command.join(' ')} failed (${result.exitCode}):\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** Builds and packs the package, installs the tarball into a new project, copies the programs in and runs tsc once. */
async function packAndInstall() {
  project = mkdtempSync(join(tmpdir(), 'pre-ipo-client-'));
  await mustRun([process.execPath, 'scripts/build.ts'], CLIENT);
  const [packed] = JSON.parse(await mustRun(['npm', 'pack', '--ignore-scripts', '--json', '--pack-destination', project], CLIENT));
  packedFiles = packed.files.map((file: { path: string }) => file.path);

  const root = JSON.parse(readFileSync(join(REPOSITORY, 'package.json'), 'utf8'));
  const client = JSON.parse(readFileSync(join(CLIENT, 'package.json'), 'utf8'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  const install = [
    join(project, packed.filename),
    `typescript@${client.devDependencies.typescript}`,
    `@trpc/client@${root.dependencies['@trpc/client']}`,
    `@trpc/server@${root.dependencies['@trpc/server']}`,
  ];
  await mustRun(['npm', 'install', '--no-audit', '--no-fund', '--prefer-offline', '--no-package-lock', ...install], project);

  cpSync(CONSUMER, project, { recursive: true });
  const tsc = await run([join(project, 'node_modules/.bin/tsc'), '-p', '.'], project);
  tscOutput = tsc.stdout + tsc.stderr;
  for (const match of tscOutput.matchAll(/^(\S+?)\((\d+),\d+\): error (TS\d+: .*)$/gm)) {
    const [, file, line, message] = match;
    typeErrors.set(file!, [...(typeErrors.get(file!) ?? []), `${line}: ${message}`]);
  }
}

/** Runs a compiled consumer program with node against the live server; its last stdout line is its report. */
async function runProgram(name: string): Promise<any> {
  const result = await run(['node', join(project, 'out', `${name}.js`)], project, {
    PIPO_BASE_URL: `http://127.0.0.1:${server.port}`,
    PIPO_API_KEY: account.apiKey,
    PIPO_DASHBOARD_KEY: DASHBOARD_KEY,
    PIPO_ACCOUNT_ID: account.accountId,
    PIPO_USER_ID: userId,
  });
  if (result.exitCode !== 0) throw new Error(`${name} failed (${result.exitCode}):\n${result.stdout}\n${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!);
}

/** The account's balance in micro-USD, read over REST with the dashboard key (unbilled). */
async function balanceMicros(): Promise<number> {
  const response = await t.request('/api/accounts/me', { headers: { 'x-api-key': DASHBOARD_KEY, 'x-account-id': account.accountId } });
  return Math.round(((await response.json()) as { balanceUsd: number }).balanceUsd * 1e6);
}

const costMicrosOf = (calls: Array<{ costMicros: number | null }>) => calls.reduce((sum, call) => sum + call.costMicros!, 0);

beforeAll(async () => {
  const app = createTestApp();
  await Promise.all([app, packAndInstall()]);
  t = await app;
  account = await fundedAccount(t, { usd: STARTING_USD });
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (request, srv) => {
      liftStreamIdleTimeout(request, srv);
      return t.app.handle(request, { clientIp: srv.requestIP(request)?.address });
    },
  });
}, 300_000);

afterAll(async () => {
  if (t) await stopStreams(t.services);
  server?.stop(true);
  await t?.close();
  if (project) rmSync(project, { recursive: true, force: true });
}, 60_000);

const unitMicros = () => t.config.costPerRequestMicros;

describe('the package', () => {
  test('holds only its build: no server source, nothing outside dist but package.json and the README', () => {
    expect(packedFiles.filter((file) => !file.startsWith('dist/')).sort()).toEqual(['README.md', 'package.json']);
    expect(packedFiles.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
    expect(packedFiles).toContain('dist/app-router.d.ts');
  });

  test('installs with nothing of the server: only TypeScript, the peer dependencies and openapi-fetch', () => {
    const installed = readdirSync(join(project, 'node_modules')).flatMap((name) =>
      name.startsWith('@') ? readdirSync(join(project, 'node_modules', name)).map((scoped) => `${name}/${scoped}`) : name.startsWith('.') ? [] : [name],
    );
    expect(installed.sort()).toEqual(EXPECTED_MODULES);
    const routerTypes = readFileSync(join(project, 'node_modules/@pre-ipo/client/dist/app-router.d.ts'), 'utf8');
    expect([...routerTypes.matchAll(/from '([^']+)'|import\("([^"]+)"\)/g)].map((m) => m[1] ?? m[2])).toEqual(['@trpc/server']);
  });

  test('a program that uses every router type-checks', () => {
    const program = readFileSync(join(CONSUMER, 'every-router.ts'), 'utf8');
    // The top-level routers: the router's own members that are objects (tRPC's are a function and a private definition).
    const routers = Object.entries(appRouter).flatMap(([name, value]) => (typeof value === 'object' && !name.startsWith('_') ? [name] : []));
    expect(routers).toContain('privateCompanies');
    for (const router of routers) expect(`${router}: ${program.includes(`.${router}.`)}`).toBe(`${router}: true`);
    expect(typeErrors.get('every-router.ts') ?? []).toEqual([]);
    expect(typeErrors.get('rest.ts') ?? []).toEqual([]);
    expect(typeErrors.get('env.ts') ?? []).toEqual([]);
    // Nothing in the package's own declarations, tRPC's or openapi-fetch's (skipLibCheck is off).
    expect([...typeErrors.keys()].filter((file) => file.includes('node_modules'))).toEqual([]);
  });

  describe('each call marked wrong is a type error', () => {
    const lines = readFileSync(join(CONSUMER, 'wrong.ts'), 'utf8').split('\n');
    const marked = lines.flatMap((text, index) => (text.includes('// error:') ? [{ line: index + 1, what: text.split('// error:')[1]!.trim() }] : []));
    for (const { line, what } of marked) {
      test(`${what} (wrong.ts line ${line})`, () => {
        const errors = (typeErrors.get('wrong.ts') ?? []).filter((error) => error.startsWith(`${line}:`));
        expect(errors.length).toBeGreaterThan(0);
      });
    }
    test('and no other line of wrong.ts is', () => {
      const markedLines = new Set(marked.map((m) => String(m.line)));
      expect((typeErrors.get('wrong.ts') ?? []).filter((error) => !markedLines.has(error.split(':')[0]!))).toEqual([]);
    });
  });
});

describe('against a live server', () => {
  test('every router answers for real; a typed error; each call its cost and request id', async () => {
    const before = await balanceMicros();
    const report = await runProgram('every-router');
    const charged = before - (await balanceMicros());
    const unitUsd = unitMicros() / 1e6;
    expect(report.unitPrice).toBe(unitUsd);

    // Real answers: what the programs saw is what the service holds.
    expect(report.accountId).toBe(account.accountId);
    expect(report.keyIds).toContain(account.apiKeyId);
    expect(report.authStatus).toBe(false);
    expect(report.historyEventId).toBe(report.openEventId);
    expect(report.quote.eventId).toBe(report.openEventId);
    expect(report.quote.totalCost).toBeGreaterThan(0);
    expect(report.bought.totalCost).toBeGreaterThan(0);
    expect(report.positions).toContain(report.bought.positionId);
    expect(report.orders).toBeGreaterThan(0);
    expect(report.users).toEqual([userId]);
    expect(report.hasCredentials).toBe(true);
    expect(report.catchUpMessages).toBe(1);
    expect(report.streamed.slug).toBe(report.openEventId);
    expect(report.streamRefusal).toEqual({ code: 'NOT_FOUND', status: 404 });
    expect(report.unbatched.costMicros).toBe(unitMicros());
    const companies = (await (await t.request('/api/private-companies?limit=2&sort=-valuationUsd', { headers: account.headers })).json()) as any;
    expect(report.companies.names).toEqual(companies.companies.map((c: { name: string }) => c.name));
    expect(report.companies.total).toBe(companies.total);
    const rounds = (await (await t.request('/api/funding-rounds?limit=3', { headers: account.headers })).json()) as any;
    expect(report.rounds.ids).toEqual(rounds.rounds.map((r: { id: string }) => r.id));
    const investors = (await (await t.request('/api/investors?limit=3', { headers: account.headers })).json()) as any;
    expect(report.investors).toEqual(investors.investors.map((i: { name: string }) => i.name));
    expect(report.exportRefusal).toEqual({ code: 'BAD_REQUEST', status: 400 });
    expect(report.imported).toEqual({ added: 0, updated: 0, unchanged: 0, investors: 0 });

    // Costs as the service billed them: public calls 0, standard ones one unit, private-company data ten.
    expect(report.pricing).toMatchObject({ cost: 0, path: 'pricing.get' });
    expect(report.billing).toMatchObject({ cost: unitUsd, costMicros: unitMicros() });
    expect(report.companies.cost).toBe((unitMicros() * 10) / 1e6);
    expect(report.rounds.cost).toBe((unitMicros() * 10) / 1e6);
    expect(report.quote.cost).toBe(unitUsd);
    // Every call reported once, each awaited alone: a request id of its own each.
    expect(report.calls).toHaveLength(25);
    expect(report.calls.every((call: any) => typeof call.requestId === 'string' && call.requestId.length > 0)).toBe(true);
    expect(new Set(report.calls.map((call: any) => call.requestId)).size).toBe(report.calls.length);
    // The costs reported add up to what the account was charged, to the micro-dollar.
    expect(charged).toBe(costMicrosOf(report.calls));

    // The typed error: the service's code, status and request id; still a TRPCClientError.
    const failed = report.calls.find((call: any) => call.path === 'events.resolve');
    expect(report.refusal).toMatchObject({ code: 'UNAUTHORIZED', status: 401, isTrpcError: true, guard: true });
    expect(report.refusal.requestId).toBe(failed.requestId);
    expect(report.refusal.callInfo).toEqual({ ...failed, ok: false, cost: 0, costMicros: 0 });
  });

  test('the REST client: typed answers and error bodies, cost and request id from the headers', async () => {
    const report = await runProgram('rest');
    expect(report.pricing).toMatchObject({ unitPrice: unitMicros() / 1e6, cost: 0 });
    expect(report.pricing.requestId).toBeString();
    expect(report.quote.totalCost).toBeGreaterThan(0);
    expect(report.quote.costMicros).toBe(unitMicros());
    expect(report.companies).toMatchObject({ count: 1, costMicros: unitMicros() * 10 });
    expect(report.refused).toMatchObject({ status: 400, cost: 0, error: { code: 'BAD_REQUEST', status: 400 } });
    expect(report.refused.error.requestId).toBe(report.refused.requestId);
  });

  test('per-call user and idempotency key, and per-call costs, through batching', async () => {
    expect(typeErrors.get('per-call.ts') ?? []).toEqual([]);
    const report = await runProgram('per-call');
    // Three queries of one tick: one request, one request id, a cost each (public, billed, public).
    expect(new Set(report.batch.map((call: any) => call.requestId)).size).toBe(1);
    expect(report.batch.map((call: any) => [call.path, call.costMicros])).toEqual([
      ['pricing.get', 0],
      ['billing.get', unitMicros()],
      ['tradingMarket.events', 0],
    ]);
    // Two buys in one request, each for its own user under its own key: both bought.
    const [first, second] = report.buys;
    expect(first.requestId).toBe(second.requestId);
    expect([first.side, second.side]).toEqual(['LONG', 'SHORT']);
    expect(first.positionId).not.toBe(second.positionId);
    expect(report.replayPositionId).toBe(first.positionId);
    expect(report.mine).toContain(first.positionId);
    expect(report.mine).not.toContain(second.positionId);
    expect(report.theirs).toEqual([second.positionId]);
    // Every call's cost, batched or not, adds up to what the account was charged.
    expect(Math.round((report.balanceBefore - report.balanceAfter) * 1e6)).toBe(costMicrosOf(report.calls));
  });
});

describe('the pre-ipo command (npx @pre-ipo/client mcp)', () => {
  /** The SDK's stdio client running the installed package's command, as a desktop agent starts it. */
  const stdioClient = async (key: string) => {
    const transport = new StdioClientTransport({
      command: 'node',
      args: [join(project, 'node_modules/.bin/pre-ipo'), 'mcp', '--url', `http://127.0.0.1:${server.port}`],
      env: { PATH: process.env.PATH!, PIPO_API_KEY: key, PIPO_USER_ID: userId },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'desktop-agent', version: '1.0.0' });
    await client.connect(transport);
    return client;
  };

  test('serves the service\'s tools over stdio: listed, called and billed by the service', async () => {
    const client = await stdioClient(account.apiKey);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('trading_buy');
    const before = await balanceMicros();
    const result = await client.callTool({ name: 'billing_get', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(result._meta).toMatchObject({ 'pre-ipo/status': 200, 'pre-ipo/costUsd': String(unitMicros() / 1e6) });
    expect(before - (await balanceMicros())).toBe(unitMicros());
    // The user the command names (PIPO_USER_ID) is every trading call's.
    const settings = await client.callTool({ name: 'tradingSettings_get', arguments: {} });
    expect(settings.isError).toBeFalsy();
    await client.close();
  });

  test('a bad key is refused with the service\'s 401', async () => {
    await expect(stdioClient('pipo_live_not_a_real_key')).rejects.toThrow(/401/);
  });
});

describe('the generated REST types', () => {
  test('client/src/generated/openapi.ts is what the current /openapi.json generates (npm run generate:rest-client)', async () => {
    const expected = await restClientSource(t.app.openApiDocument as object);
    expect(readFileSync(GENERATED_FILE, 'utf8') === expected).toBe(true);
  });
});

