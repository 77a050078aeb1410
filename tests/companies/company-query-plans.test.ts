/**
 * Every query the company routes send can be answered from an index: each captured statement is
 * EXPLAINed on PostgreSQL with sequential scans discouraged, and no plan may still scan the table.
 * (On a table of 170 rows the planner would rightly prefer a scan, hence enable_seqscan = off.)
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import postgres from 'postgres';
import { openDatabase } from '../../db/client.ts';
import { createTestApp, type TestApp } from '../harness/app.ts';
import { engine, freshDatabase, type TestDatabase } from '../harness/databases.ts';
import { fundedAccount } from '../harness/factories.ts';

const onPostgres = engine === 'postgres';
let t: TestApp;
let base: TestDatabase;
let observed: TestDatabase;
const statements: Array<{ query: string; params: unknown[] }> = [];

beforeAll(async () => {
  if (!onPostgres) return;
  base = await freshDatabase();
  observed = await openDatabase({ kind: 'postgres', url: base.url!, poolSize: 2, onQuery: (query, params) => statements.push({ query, params }) });
  t = await createTestApp({}, { database: observed });
});
afterAll(async () => {
  if (!onPostgres) return;
  await t.close();
  await observed.close();
  await base.close();
});

test.skipIf(!onPostgres)('filters, sorts, search and lookups all use indexes', async () => {
  const acct = await fundedAccount(t);
  const paths = [
    '/api/private-companies?industry=fintech',
    '/api/private-companies?industry=fintech&country=united%20states&minValuation=1&maxValuation=9000000000000',
    '/api/private-companies?country=germany',
    '/api/private-companies?backingType=corporate',
    '/api/private-companies?minValuation=1000000000',
    '/api/private-companies?minFunding=1&maxFunding=100000000000',
    '/api/private-companies?minFoundedYear=2010&maxFoundedYear=2020',
    '/api/private-companies?minEmployees=10',
    '/api/private-companies?updatedSince=2026-01-01',
    ...['name', '-name', 'valuationUsd', '-valuationUsd', 'totalFundingUsd', '-totalFundingUsd', 'foundedYear', '-foundedYear', 'employees', '-employees', 'updatedAt', '-updatedAt'].map(
      (sort) => `/api/private-companies?sort=${sort}&offset=20`,
    ),
    '/api/private-companies/search?q=stripe',
    '/api/private-companies/search?q=antropic',
    '/api/private-companies/source/stripe',
    '/api/private-companies/1',
  ];
  const explainer = postgres(base.url!, { max: 1, onnotice: () => {} });
  try {
    for (const path of paths) {
      statements.length = 0;
      expect((await t.request(path, { headers: acct.headers })).status).toBe(200);
      const companyQueries = statements.filter((s) => /^select/i.test(s.query) && s.query.includes('"companies"'));
      expect(companyQueries.length).toBeGreaterThan(0);
      for (const { query, params } of companyQueries) {
        const plan = await explainer.begin(async (tx) => {
          await tx.unsafe('set local enable_seqscan = off');
          await tx.unsafe('set local pg_trgm.word_similarity_threshold = 0.5');
          const rows = await tx.unsafe(`explain ${query}`, params as never[]);
          return rows.map((r: any) => r['QUERY PLAN']).join('\n');
        });
        expect(`${path}\n${plan}`).not.toMatch(/Seq Scan on companies/);
      }
    }
  } finally {
    await explainer.end();
  }
}, 60_000);
