/**
 * The import on a running service: the operator route POST /api/private-companies/import (in process,
 * on PGlite or PostgreSQL), and `npm run import:companies` against a real server that holds its
 * embedded database — the command validates each file, then goes through the server in batches,
 * while the server keeps answering.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { companies, investors } from '../../db/schema.ts';
import { createTestApp, DASHBOARD_KEY, json, type TestApp } from '../harness/app.ts';
import { dashboardHeaders, fundedAccount } from '../harness/factories.ts';
import { runToExit, startServer, type RunningServer } from '../harness/server-process.ts';

const record = (n: number, extra: Record<string, unknown> = {}) => ({
  sourceId: `live-import-${n}`,
  name: `Live Import ${n}`,
  industry: 'Import Testing',
  valuationUsd: 1_000_000 * n,
  valuationAsOf: '2026-11-30',
  referenceUrl: `https://example.com/live-import-${n}`,
  ...extra,
});

describe('POST /api/private-companies/import (in process)', () => {
  let t: TestApp;
  let ops: Record<string, string>;
  beforeAll(async () => {
    t = await createTestApp();
    await t.request('/api/keys', { method: 'POST', headers: { ...dashboardHeaders(DASHBOARD_KEY, 'ops'), 'content-type': 'application/json' }, body: '{"name":"ops"}' });
    ops = { ...dashboardHeaders(DASHBOARD_KEY, 'ops'), 'content-type': 'application/json' };
  });
  afterAll(() => t.close());
  const post = (body: unknown, headers = ops) => t.request('/api/private-companies/import', { method: 'POST', headers, body: JSON.stringify(body) });

  test('upserts records and investor facts; a repeat changes nothing; the next list sees them', async () => {
    const customer = await fundedAccount(t);
    const before = await json(await t.request('/api/private-companies/stats', { headers: customer.headers }));
    const body = {
      companies: [record(1, { fundingHistory: [{ date: '2026-06', roundType: 'Series A', amount: 5_000_000, valuation: 1_000_000, pricePerShare: null, investors: ['Imported Ventures'] }] }), record(2)],
      investors: [{ name: 'Imported Ventures', type: 'vc', country: 'Atlantis', website: 'https://imported.example', url: 'https://imported.example/about', asOf: '2026-11-30' }],
    };
    const first = await post(body);
    expect(first.status).toBe(200);
    expect(await json(first)).toEqual({ added: 2, updated: 0, unchanged: 0, investors: 1 });
    expect(await json(await post(body))).toEqual({ added: 0, updated: 0, unchanged: 2, investors: 1 });
    const after = await json(await t.request('/api/private-companies/stats', { headers: customer.headers }));
    expect(after.totalCompanies).toBe(before.totalCompanies + 2);
    const [investor] = await t.database.db.select().from(investors).where(eq(investors.slug, 'imported-ventures'));
    expect(investor).toMatchObject({ type: 'vc', country: 'Atlantis', portfolioCount: 1 });
    const detail = await json(await t.request('/api/private-companies/source/live-import-1', { headers: customer.headers }));
    expect(detail.sources.valuationUsd).toEqual({ id: 'import', url: 'https://example.com/live-import-1', asOf: '2026-11-30' });
  });

  test('one invalid record refuses the call, naming its line and field; nothing is written', async () => {
    const response = await post({ companies: [record(10), { sourceId: 'live-import-11', name: 'No Source', valuationUsd: 5 }], file: 'x.json', firstLine: 501 });
    expect(response.status).toBe(400);
    const error = await json(response);
    expect(error).toMatchObject({ code: 'BAD_REQUEST' });
    expect(error.message).toContain('x.json line 502: referenceUrl: required with valuationUsd');
    expect(await t.database.db.select().from(companies).where(eq(companies.sourceId, 'live-import-10'))).toEqual([]);
  });

  test('bad inputs are 400 in the error shape; only a dashboard key may import', async () => {
    for (const body of [{ companies: 'x' }, { companies: Array.from({ length: 501 }, (_, i) => record(100 + i)) }, { investors: [{ name: 'x' }] }, { firstLine: 0 }, { other: 1 }]) {
      const response = await post(body);
      expect([response.status, (await json(response)).code]).toEqual([400, 'BAD_REQUEST']);
    }
    const customer = await fundedAccount(t);
    const refused = await post({ companies: [record(20)] }, { ...customer.headers, 'content-type': 'application/json' });
    expect(refused.status).toBe(401);
    expect(await t.database.db.select().from(companies).where(eq(companies.sourceId, 'live-import-20'))).toEqual([]);
  });
});

describe('npm run import:companies while a server holds the embedded database', () => {
  let server: RunningServer;
  let dir: string;
  const DASH = 'dash_test_import_0123456789abcdef012345678';
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'import-live-'));
    server = await startServer({ DATA_DIR: join(dir, 'data'), DASHBOARD_KEYS: DASH });
    await fetch(`${server.url}/api/keys`, { method: 'POST', headers: { ...dashboardHeaders(DASH, 'ops'), 'content-type': 'application/json' }, body: '{"name":"ops"}' });
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a large file goes through the server in batches, which keeps answering; a repeat changes nothing', async () => {
    const file = join(dir, 'big.json');
    // Curated-size records (~3 KB each): the command must cut the file by bytes as well as by count.
    writeFileSync(file, JSON.stringify(Array.from({ length: 1_200 }, (_, i) => record(i + 1, { description: 'x'.repeat(3_000) }))));
    const env = { DATA_DIR: join(dir, 'data'), DASHBOARD_KEYS: DASH, BASE: server.url, LOG_LEVEL: 'warn' };
    const refused = await runToExit(['server/commands/import-companies.ts', file], env, 60_000);
    expect([refused.exitCode, refused.stderr.trim()]).toEqual([2, expect.stringContaining('--account')]);

    let answered = 0;
    let failed = 0;
    let importing = true;
    const probe = (async () => {
      while (importing) {
        const response = await fetch(`${server.url}/api/pricing`);
        if (response.ok) answered++;
        else failed++;
        await Bun.sleep(20);
      }
    })();
    const run = await runToExit(['server/commands/import-companies.ts', file, '--account', 'ops'], env, 120_000);
    importing = false;
    await probe;
    expect([run.exitCode, run.stderr]).toEqual([0, '']);
    expect(run.stdout).toContain('big.json: 1200 added, 0 updated, 0 unchanged');
    expect(failed).toBe(0);
    expect(answered).toBeGreaterThan(0);

    const again = await runToExit(['server/commands/import-companies.ts', file, '--account', 'ops'], env, 120_000);
    expect(again.stdout).toContain('big.json: 0 added, 0 updated, 1200 unchanged');
  }, 240_000);

  test('a refused file writes nothing, and says which line and field', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify([record(5_000), { sourceId: 'live-import-5001', name: 'No Source', totalFundingUsd: 9 }]));
    const env = { DATA_DIR: join(dir, 'data'), DASHBOARD_KEYS: DASH, BASE: server.url, LOG_LEVEL: 'warn' };
    const run = await runToExit(['server/commands/import-companies.ts', file, '--account', 'ops'], env, 60_000);
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toContain('line 2: referenceUrl: required with totalFundingUsd');
    const key = await (await fetch(`${server.url}/api/keys`, { method: 'POST', headers: { ...dashboardHeaders(DASH, 'reader'), 'content-type': 'application/json' }, body: '{"name":"r"}' })).json();
    await fetch(`${server.url}/api/accounts/credits`, { method: 'POST', headers: { ...dashboardHeaders(DASH, 'reader'), 'content-type': 'application/json' }, body: '{"amountUsd":1,"reference":"import-live-reader"}' });
    const response = await fetch(`${server.url}/api/private-companies/source/live-import-5000`, { headers: { 'x-api-key': key.key } });
    expect(response.status).toBe(404);
  }, 90_000);

  test('--dataset brings the running server up to the built dataset, investor facts included', async () => {
    const env = { DATA_DIR: join(dir, 'data'), DASHBOARD_KEYS: DASH, BASE: server.url, LOG_LEVEL: 'warn' };
    const run = await runToExit(['server/commands/import-companies.ts', '--dataset', '--account', 'ops'], env, 600_000);
    expect([run.exitCode, run.stderr]).toEqual([0, '']);
    expect(run.stdout).toMatch(/investors\.json: \d+ investor facts written/);
    const lines = run.stdout.trim().split('\n').filter((l) => /\.json: \d+ added/.test(l));
    expect(lines.length).toBeGreaterThan(20);
    // Every record of the build is there now (the server seeded only the test sample), and 1,200 of ours.
    let built = 0;
    for (const f of readdirSync('seeds/companies').filter((f) => f.endsWith('.json'))) built += (await Bun.file(join('seeds/companies', f)).json()).length;
    const reader = await (await fetch(`${server.url}/api/keys`, { method: 'POST', headers: { ...dashboardHeaders(DASH, 'counter'), 'content-type': 'application/json' }, body: '{"name":"c"}' })).json();
    await fetch(`${server.url}/api/accounts/credits`, { method: 'POST', headers: { ...dashboardHeaders(DASH, 'counter'), 'content-type': 'application/json' }, body: '{"amountUsd":1,"reference":"import-live-counter"}' });
    const stats = await (await fetch(`${server.url}/api/private-companies/stats`, { headers: { 'x-api-key': reader.key } })).json();
    expect(stats.totalCompanies).toBe(built + 1_200);
    const sequoia = await (await fetch(`${server.url}/api/investors?q=Sequoia%20Capital&limit=1`, { headers: { 'x-api-key': reader.key } })).json();
    expect(sequoia.investors?.[0] ?? sequoia).toMatchObject({ name: 'Sequoia Capital', type: 'vc' });
    const again = await runToExit(['server/commands/import-companies.ts', '--dataset', '--account', 'ops'], env, 600_000);
    for (const line of again.stdout.trim().split('\n').filter((l) => / added, /.test(l))) expect(line).toMatch(/: 0 added, 0 updated, \d+ unchanged$/);
  }, 900_000);
});
