/**
 * The set-up most company tests share: an app on a database seeded with the test sample, a funded
 * account that reads through it, the records the database was seeded from, and `get`, a billed read
 * answering the response and its JSON body.
 */
import type { CompanyRecord } from '../../server/companies/company-schema.ts';
import { loadDataset } from '../../seeds/company-dataset.ts';
import { createTestApp, json, type TestApp } from './app.ts';
import { fundedAccount, type FundedAccount } from './factories.ts';

export interface CompanyReader {
  t: TestApp;
  acct: FundedAccount;
  dataset: CompanyRecord[];
  get(path: string): Promise<{ res: Response; body: any }>;
}

export async function companyReader(): Promise<CompanyReader> {
  const t = await createTestApp();
  const acct = await fundedAccount(t, { usd: 1000 });
  const dataset = (await loadDataset()).records;
  const get = async (path: string) => {
    const res = await t.request(path, { headers: acct.headers });
    return { res, body: await json(res) };
  };
  return { t, acct, dataset, get };
}
