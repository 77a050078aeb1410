/**
 * The eight private-company routes. Expected results are recomputed here from the dataset files,
 * independently of the service's SQL.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { CompanyRecord } from '../../server/companies/company-schema.ts';
import { namesOf } from '../../server/companies/names.ts';
import { trpcClient, type TestApp } from '../harness/app.ts';
import type { FundedAccount } from '../harness/factories.ts';
import { companyReader, type CompanyReader } from '../harness/company-reader.ts';

let t: TestApp;
let acct: FundedAccount;
let dataset: CompanyRecord[];
let get: CompanyReader['get'];
beforeAll(async () => ({ t, acct, dataset, get } = await companyReader()));
afterAll(() => t.close());
const bySourceId = (name: string) => dataset.find((c) => c.name === name)!;

/** Every page of a list, walked with limit/offset. */
async function walk(query: string, limit = 37) {
  const seen: any[] = [];
  let total = 0;
  for (let offset = 0; ; offset += limit) {
    const { body } = await get(`/api/private-companies?${query}&limit=${limit}&offset=${offset}`);
    total = body.total;
    seen.push(...body.companies);
    if (body.companies.length < limit) break;
  }
  return { seen, total };
}

describe('GET /api/private-companies', () => {
  test('condensed items, default page of 50, billed at 10x the standard rate', async () => {
    const { res, body } = await get('/api/private-companies');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-cost-usd')).toBe('0.02');
    expect(body.total).toBe(dataset.length);
    expect(body.companies).toHaveLength(50);
    expect(Object.keys(body.companies[0]).sort()).toEqual(['employeeCount', 'foundedYear', 'headquarters', 'id', 'industry', 'name', 'totalFundingUsd', 'valuationUsd']);
    const spacex = dataset.find((c) => c.sourceId === 'spacex')!;
    const { body: all } = await get('/api/private-companies?limit=200&sort=-valuationUsd');
    const item = all.companies.find((c: any) => c.name === spacex.name);
    expect(item.headquarters).toBe([spacex.headquartersCity, spacex.headquartersRegion, spacex.headquartersCountry].filter(Boolean).join(', '));
    expect(item.valuationUsd).toBe(spacex.valuationUsd);
  });

  test('paging walks the whole set without gaps or duplicates, for every sort', async () => {
    for (const sort of ['', 'sort=name', 'sort=-valuationUsd', 'sort=totalFundingUsd', 'sort=-foundedYear', 'sort=employees', 'sort=-updatedAt']) {
      const { seen, total } = await walk(sort);
      expect(total).toBe(dataset.length);
      expect(new Set(seen.map((c) => c.id)).size).toBe(dataset.length);
    }
  });

  test('sorts put nulls last and order the rest', async () => {
    const { seen } = await walk('sort=-valuationUsd', 200);
    const values = seen.map((c) => c.valuationUsd);
    const known = values.filter((v) => v !== null);
    expect(known).toEqual([...known].sort((a, b) => b - a));
    expect(values.slice(known.length).every((v) => v === null)).toBe(true);
    const { seen: byName } = await walk('sort=name', 200);
    const names = byName.map((c) => c.name.toLowerCase());
    expect(names).toEqual([...names].sort());
  });

  const filterCases: Array<[string, (c: CompanyRecord) => boolean]> = [
    ['industry=artificial%20intelligence', (c) => c.industry?.toLowerCase() === 'artificial intelligence'],
    ['country=UNITED%20KINGDOM', (c) => c.headquartersCountry?.toLowerCase() === 'united kingdom'],
    ['backingType=Corporate', (c) => c.backingType === 'Corporate'],
    ['minValuation=100000000000', (c) => (c.valuationUsd ?? -1) >= 100_000_000_000],
    ['maxValuation=5000000000', (c) => c.valuationUsd != null && c.valuationUsd <= 5_000_000_000],
    ['minValuation=10000000000&maxValuation=50000000000', (c) => c.valuationUsd != null && c.valuationUsd >= 1e10 && c.valuationUsd <= 5e10],
    ['minFunding=1000000000', (c) => (c.totalFundingUsd ?? -1) >= 1e9],
    ['maxFunding=100000000', (c) => c.totalFundingUsd != null && c.totalFundingUsd <= 1e8],
    ['minFoundedYear=2020', (c) => (c.foundedYear ?? 0) >= 2020],
    ['maxFoundedYear=2000', (c) => c.foundedYear != null && c.foundedYear <= 2000],
    ['minFoundedYear=2015&maxFoundedYear=2015', (c) => c.foundedYear === 2015],
    ['minEmployees=1', (c) => c.employees != null],
    ['industry=Fintech&country=United%20States&minValuation=1000000000', (c) => c.industry === 'Fintech' && c.headquartersCountry === 'United States' && (c.valuationUsd ?? 0) >= 1e9],
    ['updatedSince=2000-01-01', () => true],
    ['updatedSince=2999-01-01T00:00:00Z', () => false],
    ['industry=No%20Such%20Industry', () => false],
  ];
  test.each(filterCases)('filter %s: every returned row satisfies it and total counts them all', async (query, predicate) => {
    const expected = dataset.filter(predicate).map((c) => c.name).sort();
    const { seen, total } = await walk(query, 200);
    expect(total).toBe(expected.length);
    expect(seen.map((c) => c.name).sort()).toEqual(expected);
  });

  test.each([
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=ten', 'limit'],
    ['offset=-1', 'offset'],
    ['offset=1.5', 'offset'],
    ['minValuation=-5', 'minValuation'],
    ['minValuation=1e9', 'minValuation'],
    ['minValuation=10&maxValuation=5', 'minValuation'],
    ['minFunding=9&maxFunding=1', 'minFunding'],
    ['minFoundedYear=2020&maxFoundedYear=2010', 'minFoundedYear'],
    ['minEmployees=500&maxEmployees=5', 'minEmployees'],
    ['sort=valuation', 'sort'],
    ['sort=--name', 'sort'],
    ['updatedSince=last-week', 'updatedSince'],
    ['industry=', 'industry'],
    ['industry=a&industry=b', 'industry'],
    ['colour=red', 'colour'],
  ])('bad parameter %s → 400 naming %s, unbilled', async (query, name) => {
    const { res, body } = await get(`/api/private-companies?${query}`);
    expect(res.status).toBe(400);
    expect(body.code).toBe('BAD_REQUEST');
    expect(body.message).toContain(name);
    expect(res.headers.get('x-request-cost-usd')).toBe('0');
  });
});

describe('static routes are never captured by /{id}', () => {
  test.each(['search?q=open', 'spacex', 'industries', 'countries', 'stats', 'source/stripe'])('/api/private-companies/%s', async (path) => {
    const { res } = await get(`/api/private-companies/${path}`);
    expect(res.status).toBe(200);
  });
});

describe('GET /api/private-companies/{id} and /source/{sourceId}', () => {
  test('detail has every record field plus employeeCount, headquarters and extra', async () => {
    const stripe = dataset.find((c) => c.sourceId === 'stripe')!;
    const { body: bySource } = await get('/api/private-companies/source/stripe');
    const { res, body } = await get(`/api/private-companies/${bySource.id}`);
    expect(res.status).toBe(200);
    // The same record; its markets are valued at whichever snapshot each answer read (2 s each).
    const withoutTimes = (c: any) => ({ ...c, markets: c.markets.map(({ updatedAt: _, ...m }: any) => m) });
    expect(withoutTimes(body)).toEqual(withoutTimes(bySource));
    // Every field as the record holds it; provenance is answered per field, as sources.
    for (const [field, value] of Object.entries(stripe)) if (field !== 'provenance') expect([field, body[field]]).toEqual([field, value ?? null]);
    expect(body.provenance).toBeUndefined();
    expect(body.sources.name).toEqual({ id: stripe.provenance![0]!.id, url: stripe.provenance![0]!.url ?? null, asOf: stripe.provenance![0]!.asOf });
    expect(body.extra).toEqual(stripe.extra ?? {});
    expect(body.extra.keyInvestors).toBeInstanceOf(Array);
    expect(body.employeeCount).toBe(stripe.employees ?? null);
    expect(body.headquarters).toBe([stripe.headquartersCity, stripe.headquartersRegion, stripe.headquartersCountry].filter(Boolean).join(', '));
    expect(new Date(body.updatedAt).toISOString()).toBe(body.updatedAt);
  });

  test('/spacex is the SpaceX record', async () => {
    const { body } = await get('/api/private-companies/spacex');
    expect(body.sourceId).toBe('spacex');
    expect(body.name).toBe('SpaceX');
  });

  test.each(['0', '-1', '1.5', '0x2', '1e2', 'abc', '%20', '99999999999'])('id %s → 400', async (id) => {
    const { res, body } = await get(`/api/private-companies/${id}`);
    expect(res.status).toBe(400);
    expect(body.message).toContain('id');
  });

  test('unknown id and sourceId → 404, unbilled', async () => {
    for (const path of ['/api/private-companies/999999', '/api/private-companies/source/no-such-company', '/api/private-companies/source/caf%C3%A9']) {
      const { res, body } = await get(path);
      expect(res.status).toBe(404);
      expect(body.code).toBe('NOT_FOUND');
      expect(res.headers.get('x-request-cost-usd')).toBe('0');
    }
  });
});

describe('GET /api/private-companies/search', () => {
  test('ranks exact, then prefix, then substring, then close spellings', async () => {
    // "stripe": exact name first.
    const exact = (await get('/api/private-companies/search?q=Stripe')).body;
    expect(exact.companies[0].name).toBe('Stripe');
    expect(exact).toMatchObject({ query: 'Stripe', limit: 50, offset: 0 });
    // "open": prefix matches before substring matches, over every name a company is found by (name,
    // registered name, aliases, domain: names.ts), one row per company at its best match; within a
    // tier by the kind of name matched (name first), then by name.
    const { body } = await get('/api/private-companies/search?q=open&limit=200');
    const names: string[] = body.companies.map((c: any) => c.name);
    const best = (c: CompanyRecord, tier: (folded: string) => boolean) => Math.min(...namesOf(c).filter((n) => tier(n.folded)).map((n) => n.kind));
    const isExact = (c: CompanyRecord) => namesOf(c).some((n) => n.folded === 'open');
    const isPrefix = (c: CompanyRecord) => !isExact(c) && namesOf(c).some((n) => n.folded.startsWith('open'));
    const byKindThenName = (tier: (folded: string) => boolean) => (a: CompanyRecord, b: CompanyRecord) => best(a, tier) - best(b, tier) || a.name.toLowerCase().localeCompare(b.name.toLowerCase());
    const exactNames = dataset.filter(isExact).map((c) => c.name);
    const prefixRecords = dataset.filter(isPrefix).sort(byKindThenName((f) => f.startsWith('open')));
    expect(names.slice(0, exactNames.length).sort()).toEqual([...exactNames].sort());
    const prefixNames = names.slice(exactNames.length, exactNames.length + prefixRecords.length);
    expect([...prefixNames].sort()).toEqual(prefixRecords.map((c) => c.name).sort());
    // Each kind's run in name order (the kinds' order is checked by the sets above and below).
    const kindOf = new Map(prefixRecords.map((c) => [c.name, best(c, (f) => f.startsWith('open'))]));
    expect(prefixNames.map((n) => kindOf.get(n))).toEqual(prefixRecords.map((c) => best(c, (f) => f.startsWith('open'))));
    expect(prefixNames).toEqual(prefixRecords.map((c) => c.name));
    const substringNames = dataset.filter((c) => !isExact(c) && !isPrefix(c) && namesOf(c).some((n) => n.folded.includes('open'))).map((c) => c.name);
    const skip = exactNames.length + prefixRecords.length;
    expect(names.slice(skip, skip + substringNames.length).sort()).toEqual(substringNames.sort());
    expect(body.total).toBe(names.length);
  });

  test('finds close spellings', async () => {
    for (const [typo, name] of [['antropic', 'Anthropic'], ['databrick', 'Databricks'], ['revolutt', 'Revolut']]) {
      const { body } = await get(`/api/private-companies/search?q=${typo}`);
      expect(body.companies.map((c: any) => c.name)).toContain(name);
    }
  });

  test('matches registered names, case-insensitively, and treats % and _ literally', async () => {
    const registered = bySourceId('SpaceX').registeredName!;
    const { body } = await get(`/api/private-companies/search?q=${encodeURIComponent(registered.toUpperCase())}`);
    expect(body.companies[0].name).toBe('SpaceX');
    expect((await get('/api/private-companies/search?q=%25%25')).body.total).toBe(0);
    expect((await get('/api/private-companies/search?q=__')).body.total).toBe(0);
  });

  test.each(['', 'q=', 'q=a', 'q=%20a%20', `q=${'x'.repeat(201)}`, 'q=ab&limit=0'])('bad search %s → 400', async (query) => {
    const { res } = await get(`/api/private-companies/search?${query}`);
    expect(res.status).toBe(400);
  });
});

describe('aggregates', () => {
  test('industries and countries: unique, non-empty, sorted, with totals', async () => {
    const uniqueSorted = (values: Array<string | null | undefined>) => [...new Set(values.filter((v): v is string => !!v && v.trim() !== ''))].sort();
    const industries = (await get('/api/private-companies/industries')).body;
    expect(industries.industries).toEqual(uniqueSorted(dataset.map((c) => c.industry)));
    expect(industries.total).toBe(industries.industries.length);
    const countries = (await get('/api/private-companies/countries')).body;
    expect(countries.countries).toEqual(uniqueSorted(dataset.map((c) => c.headquartersCountry)));
    expect(countries.total).toBe(countries.countries.length);
  });

  test('stats, recomputed from the dataset', async () => {
    const positive = (pick: (c: CompanyRecord) => number | null | undefined) => dataset.map(pick).filter((v): v is number => v != null && v > 0);
    const avg = (xs: number[]) => (xs.length ? Math.round(xs.reduce((a, b) => a + b, 0) / xs.length) : 0);
    const valuations = positive((c) => c.valuationUsd);
    const funding = positive((c) => c.totalFundingUsd);
    const employees = positive((c) => c.employees);
    const distinct = (pick: (c: CompanyRecord) => string | null | undefined) => new Set(dataset.map(pick).filter((v) => v && v.trim())).size;
    const { body } = await get('/api/private-companies/stats');
    expect(body).toEqual({
      totalCompanies: dataset.length,
      totalWithValuation: valuations.length,
      totalWithFunding: funding.length,
      avgValuationUsd: avg(valuations),
      maxValuationUsd: Math.max(...valuations),
      minValuationUsd: Math.min(...valuations),
      avgTotalFundingUsd: avg(funding),
      maxTotalFundingUsd: Math.max(...funding),
      totalFundingSum: dataset.reduce((s, c) => s + (c.totalFundingUsd ?? 0), 0),
      avgEmployees: avg(employees),
      totalWithEmployees: employees.length,
      distinctIndustries: distinct((c) => c.industry),
      distinctCountries: distinct((c) => c.headquartersCountry),
    });
  });
});

describe('over the typed tRPC client', () => {
  test('the same answers as REST', async () => {
    const client = trpcClient(t, acct.headers);
    const rest = (await get('/api/private-companies?industry=Space&sort=name')).body;
    const typed = await client.privateCompanies.list.query({ industry: 'Space', sort: 'name' });
    expect(typed).toEqual(rest);
    expect((await client.privateCompanies.byId.query({ id: rest.companies[0].id })).name).toBe(rest.companies[0].name);
    expect((await client.privateCompanies.search.query({ q: 'kraken' })).companies[0]?.name).toBe('Kraken');
    const error = await client.privateCompanies.byId.query({ id: 0 }).catch((e) => e);
    expect(error.data.api).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
  });
});
