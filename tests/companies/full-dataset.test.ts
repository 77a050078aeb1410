/**
 * The whole built dataset (every other test file runs on its fixed sample, seeds/company-dataset.ts):
 * it seeds on this database as `npm start` seeds it, and the list, search, rounds and investor routes
 * answer for companies that only the bulk sources hold. Expected answers come from the seed files.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { CompanyRecord } from '../../server/companies/company-schema.ts';
import { upsertCompanies } from '../../server/companies/store.ts';
import { DATASET_DIR, loadDataset } from '../../seeds/company-dataset.ts';
import { createTestApp, json, type TestApp } from '../harness/app.ts';
import { freshDatabase } from '../harness/databases.ts';
import { fundedAccount, type FundedAccount } from '../harness/factories.ts';

let t: TestApp;
let acct: FundedAccount;
let all: CompanyRecord[];
beforeAll(async () => {
  all = (await loadDataset(DATASET_DIR, 'full')).records;
  const database = await freshDatabase();
  await upsertCompanies(database.db, all);
  t = await createTestApp({}, { database });
  acct = await fundedAccount(t, { usd: 1000 });
}, 180_000);
afterAll(async () => {
  await t.close();
  await t.database.close();
});

const get = async (path: string) => {
  const res = await t.request(path, { headers: acct.headers });
  return { res, body: await json(res) };
};

describe('the whole dataset, seeded', () => {
  test('the list counts every record; stats count every dated valuation', async () => {
    const { body } = await get('/api/private-companies?limit=1');
    expect(body.total).toBe(all.length);
    const stats = (await get('/api/private-companies/stats')).body;
    expect(stats.totalWithValuation).toBe(all.filter((r) => r.valuationUsd != null && r.valuationUsd > 0).length);
  });

  test('a company only a bulk source holds is found by its domain and answers its rounds and sources', async () => {
    const record = all.find((r) => r.provenance?.[0]?.id === 'yc' && r.website && (r.fundingHistory ?? []).length === 1)!;
    expect(record).toBeDefined();
    const domain = new URL(record.website!).hostname.replace(/^www\./, '');
    const found = (await get(`/api/private-companies/search?q=${encodeURIComponent(domain)}`)).body;
    const hit = found.companies.find((c: any) => c.name === record.name);
    expect(hit).toBeDefined();
    const detail = (await get(`/api/private-companies/${hit.id}`)).body;
    expect(detail.sourceId).toBe(record.sourceId);
    expect(detail.sources.name.id).toBe('yc');
    const rounds = (await get(`/api/private-companies/${hit.id}/rounds`)).body.rounds;
    expect(rounds.map((r: any) => [r.date, r.roundType, r.investors, r.source.id])).toEqual(
      record.fundingHistory!.map((h) => [h.date, h.roundType, h.investors ?? [], h.source ?? 'yc']),
    );
  });

  test("an investor's portfolio count is the number of companies that name it", async () => {
    const names = (r: CompanyRecord) =>
      new Set([...((r.extra?.keyInvestors as string[] | undefined) ?? []), ...(r.fundingHistory ?? []).flatMap((h) => [...(h.investors ?? []), ...(h.leadInvestors ?? [])])].map((n) => n.toLowerCase()));
    const expected = all.filter((r) => names(r).has('y combinator')).length;
    const list = (await get('/api/investors?q=Y%20Combinator&limit=5')).body;
    const yc = list.investors.find((i: any) => i.name === 'Y Combinator');
    expect(yc.portfolioCount).toBe(expected);
    expect(yc.type).toBe('accelerator');
  });
});
