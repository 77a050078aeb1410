/** The dataset's own checks, and the import CLI: JSON and CSV, all-or-nothing, with a row report. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { companies } from '../../db/schema.ts';
import { consistencyIssues, validateRows, type CompanyRecord } from '../../server/companies/company-schema.ts';
import { importCompanyFile } from '../../server/commands/import-companies.ts';
import { parseCsv } from '../../server/lib/csv.ts';
import { loadDataset } from '../../seeds/company-dataset.ts';
import { createTestApp, json, type TestApp } from '../harness/app.ts';
import { fundedAccount } from '../harness/factories.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('the curated dataset', () => {
  test('every row is valid, and there are at least 150 companies', async () => {
    const { records, invalid } = await loadDataset();
    expect(invalid.map((r) => `${r.file} row ${r.line}: ${JSON.stringify(r.issues)}`)).toEqual([]);
    expect(records.length).toBeGreaterThanOrEqual(150);
  });

  test('it covers every company behind a trading event', async () => {
    const ids = new Set((await loadDataset()).records.map((r) => r.sourceId));
    for (const id of ['spacex', 'openai', 'anthropic', 'discord', 'databricks', 'fannie-mae', 'stripe', 'freddie-mac', 'kraken', 'clear-street-group', 'liftoff-mobile', 'consensys', 'ledger', 'perplexity', 'strava', 'megaeth']) {
      expect(ids.has(id)).toBe(true);
    }
  });

  test('every row has a public reference and facts stay within range', async () => {
    const { records } = await loadDataset();
    for (const r of records) {
      expect(r.referenceUrl).toMatch(/^https:\/\//);
      if (r.foundedYear != null) expect(r.foundedYear).toBeLessThanOrEqual(new Date().getUTCFullYear());
      if (r.valuationUsd != null) expect(r.valuationAsOf).toBeTruthy();
    }
  });
});

describe('row rules', () => {
  const base: CompanyRecord = {
    sourceId: 'acme',
    name: 'Acme',
    fundingHistory: [
      { date: '2020-01', roundType: 'Seed', amount: 1_000_000, valuation: 5_000_000, pricePerShare: null },
      { date: '2021-06-15', roundType: 'Series A', amount: 10_000_000, valuation: 50_000_000, pricePerShare: null },
    ],
    lastFundingDate: '2021-06-15',
    lastFundingRoundType: 'Series A',
    lastFundingAmountUsd: 10_000_000,
    totalFundingUsd: 11_000_000,
    totalFundingRounds: 2,
    referenceUrl: 'https://example.com/acme',
  };

  test('a consistent row has no issues', () => expect(consistencyIssues(base)).toEqual([]));

  test.each([
    ['history out of order', { fundingHistory: [...base.fundingHistory!].reverse() }, 'fundingHistory.1.date'],
    ['last round date disagrees', { lastFundingDate: '2021-06-16' }, 'lastFundingDate'],
    ['last round type disagrees', { lastFundingRoundType: 'Seed' }, 'lastFundingRoundType'],
    ['last amount disagrees', { lastFundingAmountUsd: 1 }, 'lastFundingAmountUsd'],
    ['fewer rounds than history', { totalFundingRounds: 1 }, 'totalFundingRounds'],
    ['total below the history', { totalFundingUsd: 5 }, 'totalFundingUsd'],
  ] as const)('%s', (_, change, field) => {
    expect(consistencyIssues({ ...base, ...change } as CompanyRecord).map((i) => i.field)).toContain(field);
  });

  test.each([
    [{ sourceId: 'Bad Id', name: 'x' }, 'sourceId'],
    [{ sourceId: 'x' }, 'name'],
    [{ sourceId: 'x', name: 'x', foundedYear: 1700 }, 'foundedYear'],
    [{ sourceId: 'x', name: 'x', foundedYear: 2999 }, 'foundedYear'],
    [{ sourceId: 'x', name: 'x', employees: 0 }, 'employees'],
    [{ sourceId: 'x', name: 'x', valuationUsd: -1 }, 'valuationUsd'],
    [{ sourceId: 'x', name: 'x', valuationUsd: 1.5 }, 'valuationUsd'],
    [{ sourceId: 'x', name: 'x', valuationAsOf: '2025-02-30' }, 'valuationAsOf'],
    [{ sourceId: 'x', name: 'x', website: 'ftp://x' }, 'website'],
    [{ sourceId: 'x', name: 'x', nickname: 'y' }, 'nickname'],
  ])('schema rejects %j at %s', (row, field) => {
    const [result] = validateRows([{ line: 7, value: row }]);
    expect(result!.line).toBe(7);
    expect(result!.issues.map((i) => i.field).join(' ')).toContain(field);
  });

  test('duplicate sourceIds are reported with the first occurrence', () => {
    const results = validateRows([
      { line: 1, value: { sourceId: 'a', name: 'A' } },
      { line: 2, value: { sourceId: 'a', name: 'A again' } },
    ]);
    expect(results[1]!.issues).toEqual([{ field: 'sourceId', reason: 'duplicate of file row 1' }]);
  });
});

describe('CSV', () => {
  test('quoted cells hold commas, quotes and newlines; records keep their first line', () => {
    const rows = parseCsv('a,b\n"x, y","say ""hi"""\n"multi\nline",2\r\n\n3,4');
    expect(rows).toEqual([
      { line: 1, cells: ['a', 'b'] },
      { line: 2, cells: ['x, y', 'say "hi"'] },
      { line: 3, cells: ['multi\nline', '2'] },
      { line: 6, cells: ['3', '4'] },
    ]);
  });
});

describe('import', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pipo-import-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const importText = (name: string, text: string) => importCompanyFile(t.database.db, name, text);

  test('JSON: adds new rows, updates changed ones, leaves identical ones alone', async () => {
    const rows = [
      { sourceId: 'import-one', name: 'Import One', industry: 'Robotics', valuationUsd: 2_500_000_000_000, referenceUrl: 'https://example.com/import-one' },
      { sourceId: 'import-two', name: 'Import Two', products: [{ name: 'Widget', metadata: { sku: 7 }, launch: '2026' }] },
    ];
    expect((await importText('a.json', JSON.stringify(rows))).report).toEqual({ added: 2, updated: 0, unchanged: 0 });
    rows[0]!.valuationUsd = 3_100_000_000_000;
    expect((await importText('a.json', JSON.stringify(rows))).report).toEqual({ added: 0, updated: 1, unchanged: 1 });
    const [stored] = await t.database.db.select().from(companies).where(eq(companies.sourceId, 'import-one'));
    expect(stored!.valuationUsd).toBe(3_100_000_000_000);
    // Unknown product keys and metadata round-trip through the API untouched.
    const acct = await fundedAccount(t);
    const detail = await json(await t.request('/api/private-companies/source/import-two', { headers: acct.headers }));
    expect(detail.products).toEqual([{ name: 'Widget', metadata: { sku: 7 }, launch: '2026' }]);
  });

  test('CSV: numbers, JSON cells and empty cells; the same upsert', async () => {
    const csv = [
      'sourceId,name,foundedYear,valuationUsd,marketSegments,extra,industry,referenceUrl',
      'csv-co,"CSV Co, Inc.",2019,1200000000,"[""Payments"",""Lending""]","{""keyInvestors"":[""A16Z""]}",,https://example.com/csv-co',
    ].join('\n');
    const outcome = await importText('b.csv', csv);
    expect(outcome.invalid).toEqual([]);
    expect(outcome.report).toEqual({ added: 1, updated: 0, unchanged: 0 });
    const [row] = await t.database.db.select().from(companies).where(eq(companies.sourceId, 'csv-co'));
    expect(row).toMatchObject({ name: 'CSV Co, Inc.', foundedYear: 2019, valuationUsd: 1_200_000_000, marketSegments: ['Payments', 'Lending'], industry: null });
  });

  test('one invalid row refuses the whole file, reporting line, field and reason', async () => {
    const csv = ['sourceId,name,foundedYear', 'good-one,Good,2010', 'bad-one,Bad,1700', 'bad-two,,2011'].join('\n');
    const outcome = await importText('c.csv', csv);
    expect(outcome.written).toBe(false);
    expect(outcome.invalid.map((i) => [i.line, i.field])).toEqual([
      [3, 'foundedYear'],
      [4, 'name'],
    ]);
    const written = await t.database.db.select().from(companies).where(eq(companies.sourceId, 'good-one'));
    expect(written).toEqual([]);
  });

  test('unreadable files are refused with a reason', async () => {
    expect((await importText('d.csv', 'sourceId,name,colour\nx,X,red')).invalid[0]).toMatchObject({ line: 1, field: 'colour', reason: 'unknown column' });
    expect((await importText('e.csv', 'sourceId,name,products\nx,X,{oops')).invalid[0]).toMatchObject({ line: 2, field: 'products' });
    expect((await importText('f.json', '{"sourceId":"x"}')).invalid[0]!.reason).toContain('array');
    expect((await importText('g.txt', '')).invalid[0]!.reason).toContain('.json or .csv');
  });

  test('cached stats, industries and countries follow every import, on every instance', async () => {
    const acct = await fundedAccount(t);
    const other = await createTestApp({}, { database: t.database });
    const read = async (app: TestApp, path: string) => json(await app.request(`/api/private-companies/${path}`, { headers: acct.headers }));
    const before = await read(other, 'stats');
    const industriesBefore = (await read(other, 'industries')).industries;
    expect(await read(other, 'stats')).toEqual(before); // served from the cache

    await importText('cache.json', JSON.stringify([{ sourceId: 'cache-co', name: 'Cache Co', industry: 'Quantum Widgets', headquartersCountry: 'Atlantis', valuationUsd: 7, referenceUrl: 'https://example.com/cache-co' }]));
    const after = await read(other, 'stats');
    expect(after.totalCompanies).toBe(before.totalCompanies + 1);
    expect(after.minValuationUsd).toBe(7);
    expect((await read(other, 'industries')).industries).toEqual([...industriesBefore, 'Quantum Widgets'].sort());
    expect((await read(other, 'countries')).countries).toContain('Atlantis');
    // An import that changes nothing keeps the cache.
    expect((await importText('cache.json', JSON.stringify([{ sourceId: 'cache-co', name: 'Cache Co', industry: 'Quantum Widgets', headquartersCountry: 'Atlantis', valuationUsd: 7, referenceUrl: 'https://example.com/cache-co' }]))).report).toEqual({ added: 0, updated: 0, unchanged: 1 });
    await other.close();
  });

  test('the CLI imports a file and prints the report', async () => {
    const file = join(dir, 'cli.json');
    writeFileSync(file, JSON.stringify([{ sourceId: 'cli-co', name: 'CLI Co' }]));
    const dataDir = join(dir, 'db');
    const run = Bun.spawn([process.execPath, 'server/commands/import-companies.ts', file], {
      env: { PATH: process.env.PATH!, DATA_DIR: dataDir },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    expect(await run.exited).toBe(0);
    expect(await new Response(run.stdout).text()).toContain('cli.json: 1 added, 0 updated, 0 unchanged');
    writeFileSync(file, JSON.stringify([{ sourceId: 'cli-co' }]));
    const refused = Bun.spawn([process.execPath, 'server/commands/import-companies.ts', file], { env: { PATH: process.env.PATH!, DATA_DIR: dataDir }, stdout: 'pipe' });
    expect(await refused.exited).toBe(1);
    expect(await new Response(refused.stdout).text()).toContain('line 1: name: ');
  }, 60_000); // two processes, the first on a fresh PGlite directory (initdb alone takes several seconds on a loaded machine)
});
