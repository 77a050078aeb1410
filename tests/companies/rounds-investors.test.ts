/**
 * Funding rounds across companies (GET /api/funding-rounds) and investors (GET /api/investors,
 * /{id}, /{id}/portfolio): filters, keyset paging, 404s and 400s, billing, and the typed client.
 * Expected answers are recomputed here from the dataset files (loadDataset), never hard-coded: the
 * dataset grows. The only rules restated here are the documented ones: a round's id is
 * `<sourceId>:<date>:<round type slug>` (a repeat gets `-2`, `-3`), and an investor is its name as a
 * slug (accents dropped, lower case, non-alphanumerics as `-`).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { openDatabase } from '../../db/client.ts';
import { companies } from '../../db/schema.ts';
import type { CompanyRecord } from '../../server/companies/company-schema.ts';
import { upsertCompanies } from '../../server/companies/store.ts';
import { investorSlug } from '../../server/companies/graph.ts';
import { loadDataset } from '../../seeds/company-dataset.ts';
import { createTestApp, json, trpcClient, type TestApp } from '../harness/app.ts';
import { engine, freshDatabase } from '../harness/databases.ts';
import { fundedAccount, type FundedAccount } from '../harness/factories.ts';

let t: TestApp;
let acct: FundedAccount;
let dataset: CompanyRecord[];
/** The database's id of each company, by sourceId (ids are the database's to assign). */
let idBySource: Map<string, number>;
/** Every round of the dataset as the routes should answer it, newest first. */
let allRounds: ExpectedRound[];

type ExpectedRound = ReturnType<typeof expectedRoundsOf>[number];

const dateKey = (d: string) => d.padEnd(10, ' ');
/** A partial date counts as its first day: 2025-03 → 2025-03-01, 2025 → 2025-01-01. */
const firstDay = (d: string) => (d.length === 4 ? `${d}-01-01` : d.length === 7 ? `${d}-01` : d);
const newestFirst = (a: { date: string; id: string }, b: { date: string; id: string }) =>
  dateKey(a.date) !== dateKey(b.date) ? (dateKey(a.date) > dateKey(b.date) ? -1 : 1) : a.id > b.id ? -1 : a.id < b.id ? 1 : 0;
const roundSlug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40) || 'round';
const isAscii = (s: string) => /^[\x20-\x7e]*$/.test(s);

function expectedRoundsOf(record: CompanyRecord) {
  const seen = new Map<string, number>();
  const history = [...(record.fundingHistory ?? [])].sort((a, b) => (dateKey(a.date) < dateKey(b.date) ? -1 : dateKey(a.date) > dateKey(b.date) ? 1 : 0));
  return history.map((h) => {
    const base = `${record.sourceId}:${h.date}:${roundSlug(h.roundType ?? 'round')}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return {
      id: n === 1 ? base : `${base}-${n}`,
      companyId: idBySource.get(record.sourceId)!,
      companyName: record.name,
      companySourceId: record.sourceId,
      date: h.date,
      roundType: h.roundType ?? null,
      amountUsd: h.amount ?? null,
      postMoneyValuationUsd: h.valuation ?? null,
      pricePerShareUsd: h.pricePerShare ?? null,
      leadInvestors: h.leadInvestors ?? [],
      investors: h.investors ?? [],
      record,
    };
  });
}
/** What a round answer is compared on (the record's fields; pre-money and source are checked against the per-company route). */
const comparable = ({ record: _, ...round }: ExpectedRound) => round;
const answered = (r: any) => {
  const { preMoneyValuationUsd: _p, source: _s, ...rest } = r;
  return rest;
};
const ids = (rows: Array<{ id: string }>) => rows.map((r) => r.id);

beforeAll(async () => {
  t = await createTestApp();
  acct = await fundedAccount(t, { usd: 1000 });
  dataset = (await loadDataset()).records;
  const rows = await t.services.database.db.select({ id: companies.id, sourceId: companies.sourceId }).from(companies);
  idBySource = new Map(rows.map((r) => [r.sourceId, r.id]));
  allRounds = dataset.flatMap(expectedRoundsOf).sort(newestFirst);
}, 120_000); // the first test app of a process seeds the dataset
afterAll(() => t.close());

const get = async (path: string) => {
  const res = await t.request(path, { headers: acct.headers });
  return { res, body: await json(res) };
};

/** Every page of a keyset list: each page billed, full unless it is the last, the last with nextCursor null. */
async function walk(path: string, member: string, limit: number) {
  const items: any[] = [];
  let cursor: string | null = null;
  for (let pages = 0; ; pages++) {
    if (pages > 5000) throw new Error(`${path}: no last page`);
    const sep = path.includes('?') ? '&' : '?';
    const { res, body } = await get(`${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-cost-usd')).toBe('0.02');
    expect(body.limit).toBe(limit);
    if (body.nextCursor !== null) expect(body[member]).toHaveLength(limit);
    expect(body[member].length).toBeLessThanOrEqual(limit);
    items.push(...body[member]);
    cursor = body.nextCursor;
    if (cursor === null) return items;
  }
}

/** The round investors and key investors of the dataset, by slug: the companies each names, first round date, led. */
function expectedPortfolios() {
  const bySlug = new Map<string, Map<string, { firstDate: string | null; led: boolean }>>();
  const link = (slug: string, sourceId: string, date: string | null, led: boolean) => {
    if (!slug) return;
    const portfolio = bySlug.get(slug) ?? bySlug.set(slug, new Map()).get(slug)!;
    const current = portfolio.get(sourceId) ?? { firstDate: null, led: false };
    if (date && (current.firstDate === null || dateKey(date) < dateKey(current.firstDate))) current.firstDate = date;
    current.led ||= led;
    portfolio.set(sourceId, current);
  };
  for (const record of dataset) {
    for (const h of record.fundingHistory ?? []) {
      for (const n of h.leadInvestors ?? []) link(investorSlug(n), record.sourceId, h.date, true);
      for (const n of h.investors ?? []) link(investorSlug(n), record.sourceId, h.date, false);
    }
    for (const n of (record.extra?.keyInvestors as string[] | undefined) ?? []) link(investorSlug(n), record.sourceId, null, false);
  }
  return bySlug;
}

const namesInvestor = (slug: string) => (r: ExpectedRound) => [...r.leadInvestors, ...r.investors].some((n) => investorSlug(n) === slug);

describe('GET /api/funding-rounds', () => {
  test("filtered by companyId: the record's rounds, newest first, as the per-company route gives them; billed as the company routes", async () => {
    const withRounds = dataset.filter((r) => (r.fundingHistory ?? []).length >= 2);
    expect(withRounds.length).toBeGreaterThan(0);
    for (const record of withRounds.slice(0, 20)) {
      const companyId = idBySource.get(record.sourceId)!;
      const { res, body } = await get(`/api/funding-rounds?companyId=${companyId}&limit=200`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-cost-usd')).toBe('0.02');
      expect(body.nextCursor).toBeNull();
      expect(body.rounds.map(answered)).toEqual(expectedRoundsOf(record).sort(newestFirst).map(comparable));
      const perCompany = (await get(`/api/private-companies/${companyId}/rounds`)).body.rounds;
      expect(body.rounds).toEqual(
        [...perCompany].reverse().map((r: any) => ({ ...r, companyName: record.name, companySourceId: record.sourceId })).sort(newestFirst),
      );
    }
  });

  test('paging walks every round once, newest first (ties by id), and oldest first with sort=date', async () => {
    const walked = await walk('/api/funding-rounds', 'rounds', 200);
    expect(new Set(ids(walked)).size).toBe(walked.length);
    expect(ids(walked)).toEqual(ids(allRounds));
    expect(walked.map(answered)).toEqual(allRounds.map(comparable));
    // A small page size over a subset (the most common industry), both directions.
    const industry = mostCommon(dataset.map((r) => r.industry?.trim().toLowerCase()).filter((i): i is string => !!i));
    const inIndustry = allRounds.filter((r) => r.record.industry?.trim().toLowerCase() === industry);
    const q = `industry=${encodeURIComponent(industry.toUpperCase())}`;
    const small = await walk(`/api/funding-rounds?${q}`, 'rounds', 7);
    expect(ids(small)).toEqual(ids(inIndustry));
    expect(ids(await walk(`/api/funding-rounds?${q}&sort=date`, 'rounds', 5))).toEqual(ids(inIndustry).reverse());
  });

  test('from/to keep exactly the rounds in range, a partial date counting as its first day', async () => {
    const days = [...new Set(allRounds.map((r) => firstDay(r.date)))].sort();
    const [from, to] = [days[Math.floor(days.length / 3)]!, days[Math.floor((2 * days.length) / 3)]!];
    const inRange = (f?: string, tt?: string) => allRounds.filter((r) => (!f || firstDay(r.date) >= f) && (!tt || firstDay(r.date) <= tt));
    expect(ids(await walk(`/api/funding-rounds?from=${from}&to=${to}`, 'rounds', 200))).toEqual(ids(inRange(from, to)));
    expect(ids(await walk(`/api/funding-rounds?from=${to}`, 'rounds', 200))).toEqual(ids(inRange(to)));
    expect(ids(await walk(`/api/funding-rounds?to=${from}&sort=date`, 'rounds', 200))).toEqual(ids(inRange(undefined, from)).reverse());

    const partial = allRounds.find((r) => r.date.length === 7);
    if (partial) {
      const day = `${partial.date}-01`;
      const onDay = ids((await get(`/api/funding-rounds?from=${day}&to=${day}&limit=200`)).body.rounds);
      expect(onDay).toContain(partial.id);
      expect(onDay).toEqual(ids(inRange(day, day)));
      const after = ids((await get(`/api/funding-rounds?from=${partial.date}-02&companyId=${partial.companyId}&limit=200`)).body.rounds);
      expect(after).not.toContain(partial.id);
      const before = ids((await get(`/api/funding-rounds?to=${day}&companyId=${partial.companyId}&limit=200`)).body.rounds);
      expect(before).toContain(partial.id);
    }
  });

  test('roundType, amounts, country and updatedSince filters', async () => {
    const type = mostCommon(allRounds.flatMap((r) => (r.roundType ? [r.roundType.trim().toLowerCase()] : [])));
    expect(ids(await walk(`/api/funding-rounds?roundType=${encodeURIComponent(type.toUpperCase())}`, 'rounds', 100))).toEqual(
      ids(allRounds.filter((r) => r.roundType?.trim().toLowerCase() === type)),
    );

    const amounts = allRounds.flatMap((r) => (r.amountUsd === null ? [] : [r.amountUsd])).sort((a, b) => a - b);
    const [min, max] = [amounts[Math.floor(amounts.length / 4)]!, amounts[Math.floor((3 * amounts.length) / 4)]!];
    const inAmounts = (lo?: number, hi?: number) => allRounds.filter((r) => r.amountUsd !== null && (lo === undefined || r.amountUsd >= lo) && (hi === undefined || r.amountUsd <= hi));
    expect(ids(await walk(`/api/funding-rounds?minAmount=${min}&maxAmount=${max}`, 'rounds', 200))).toEqual(ids(inAmounts(min, max)));
    expect(ids(await walk(`/api/funding-rounds?minAmount=${max}`, 'rounds', 200))).toEqual(ids(inAmounts(max)));
    expect(ids(await walk(`/api/funding-rounds?minAmount=${min}&maxAmount=${min}`, 'rounds', 200))).toEqual(ids(inAmounts(min, min)));

    const country = mostCommon(dataset.flatMap((r) => (r.headquartersCountry ? [r.headquartersCountry.trim().toLowerCase()] : [])));
    expect(ids(await walk(`/api/funding-rounds?country=${encodeURIComponent(country.toUpperCase())}`, 'rounds', 200))).toEqual(
      ids(allRounds.filter((r) => r.record.headquartersCountry?.trim().toLowerCase() === country)),
    );

    const some = allRounds[0]!;
    const ofCompany = ids(allRounds.filter((r) => r.companyId === some.companyId));
    expect(ids((await get(`/api/funding-rounds?companyId=${some.companyId}&updatedSince=2000-01-01&limit=200`)).body.rounds)).toEqual(ofCompany);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    expect((await get(`/api/funding-rounds?updatedSince=${tomorrow}`)).body).toEqual({ rounds: [], nextCursor: null, limit: 50 });
  });

  test('investor: only the rounds naming that investor (lead or not)', async () => {
    const named = allRounds.flatMap((r) => [...r.leadInvestors, ...r.investors]);
    // The investor most rounds name, else (no round names one yet) the most frequent key investor: then no round.
    const name = named.length ? mostCommon(named) : mostCommon(dataset.flatMap((r) => (r.extra?.keyInvestors as string[] | undefined) ?? []));
    const investor = await investorNamed(name);
    const expected = allRounds.filter(namesInvestor(investorSlug(name)));
    const walked = await walk(`/api/funding-rounds?investor=${investor.id}`, 'rounds', 10);
    expect(ids(walked)).toEqual(ids(expected));
    expect(walked.every((r: any) => [...r.leadInvestors, ...r.investors].some((n: string) => investorSlug(n) === investorSlug(name)))).toBe(true);
    expect((await get('/api/funding-rounds?investor=2147483647')).body.rounds).toEqual([]);
  });
});

describe('GET /api/investors', () => {
  test('every named investor once, most portfolio companies first (ties by id), each count recomputed from the records', async () => {
    const portfolios = expectedPortfolios();
    const walked = await walk('/api/investors', 'investors', 200);
    const slugs = walked.map((i: any) => investorSlug(i.name));
    expect(new Set(slugs).size).toBe(walked.length);
    for (const slug of portfolios.keys()) expect(slugs).toContain(slug);
    for (const i of walked) {
      expect(Object.keys(i).sort()).toEqual(['country', 'id', 'name', 'portfolioCount', 'source', 'type', 'website']);
      expect(`${i.name}: ${i.portfolioCount}`).toBe(`${i.name}: ${portfolios.get(investorSlug(i.name))?.size ?? 0}`);
    }
    for (let k = 1; k < walked.length; k++) {
      const [a, b] = [walked[k - 1], walked[k]];
      expect(a.portfolioCount > b.portfolioCount || (a.portfolioCount === b.portfolioCount && a.id < b.id)).toBe(true);
    }
    // sort=name: the same investors, by name (compared here where the names are plain ASCII).
    const byName = await walk('/api/investors?sort=name', 'investors', 50);
    expect(byName.map((i: any) => i.id).sort()).toEqual(walked.map((i: any) => i.id).sort());
    const ascii = byName.filter((i: any) => isAscii(i.name)).map((i: any) => i.name.toLowerCase());
    expect(ascii).toEqual([...ascii].sort());
  });

  test('q (name contains, case-insensitive, LIKE characters literal), type and country filters', async () => {
    const all = await walk('/api/investors', 'investors', 200);
    const top = all[0];
    // Text parameters are trimmed, so the piece of the name is too.
    const q = (top.name.slice(1, 4).trim() || top.name.trim()).toUpperCase();
    const found = await walk(`/api/investors?q=${encodeURIComponent(q)}`, 'investors', 200);
    expect(found.map((i: any) => i.id)).toContain(top.id);
    expect(found.map((i: any) => i.id)).toEqual(all.filter((i: any) => i.name.toLowerCase().includes(q.toLowerCase())).map((i: any) => i.id));
    expect((await get('/api/investors?q=%25')).body.investors.every((i: any) => i.name.includes('%'))).toBe(true);
    expect((await get('/api/investors?q=_')).body.investors.every((i: any) => i.name.includes('_'))).toBe(true);
    for (const [param, field, value] of [['type', 'type', 'VC'], ['country', 'country', 'united states']] as const) {
      const expected = all.filter((i: any) => i[field]?.toLowerCase() === value.toLowerCase()).map((i: any) => i.id);
      expect((await walk(`/api/investors?${param}=${encodeURIComponent(value)}`, 'investors', 200)).map((i: any) => i.id)).toEqual(expected);
    }
  });

  test('GET /api/investors/{id}: the investor and its 10 latest rounds; 404 when unknown', async () => {
    const top = (await get('/api/investors?limit=1')).body.investors[0];
    const { res, body } = await get(`/api/investors/${top.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-cost-usd')).toBe('0.02');
    const { recentRounds, ...investor } = body;
    expect(investor).toEqual(top);
    expect(recentRounds.map(answered)).toEqual(allRounds.filter(namesInvestor(investorSlug(top.name))).slice(0, 10).map(comparable));
    const missing = await get('/api/investors/2147483647');
    expect([missing.res.status, missing.body.code, missing.res.headers.get('x-request-cost-usd')]).toEqual([404, 'NOT_FOUND', '0']);
  });

  test('GET /api/investors/{id}/portfolio: the companies naming it, by name then id, with first date and led; 404 when unknown', async () => {
    const portfolios = expectedPortfolios();
    const investors = (await get('/api/investors?limit=3')).body.investors;
    for (const investor of investors) {
      const expected = portfolios.get(investorSlug(investor.name)) ?? new Map();
      const walked = await walk(`/api/investors/${investor.id}/portfolio`, 'companies', 3);
      expect(walked.length).toBe(investor.portfolioCount);
      const bySource = new Map(dataset.map((r) => [idBySource.get(r.sourceId)!, r]));
      expect(walked.map((c: any) => c.companyId).sort()).toEqual([...expected.keys()].map((s) => idBySource.get(s)!).sort());
      for (const c of walked) {
        const record = bySource.get(c.companyId)!;
        expect(c).toEqual({ companyId: c.companyId, name: record.name, industry: record.industry ?? null, headquartersCountry: record.headquartersCountry ?? null, ...expected.get(record.sourceId)! });
      }
      const ascii = walked.filter((c: any) => isAscii(c.name)).map((c: any) => c.name.toLowerCase());
      expect(ascii).toEqual([...ascii].sort());
      expect((await get(`/api/investors/${investor.id}/portfolio`)).body.investorId).toBe(investor.id);
    }
    const missing = await get('/api/investors/2147483647/portfolio');
    expect([missing.res.status, missing.body.code, missing.res.headers.get('x-request-cost-usd')]).toEqual([404, 'NOT_FOUND', '0']);
  });
});

describe('bad input is a 400 naming the parameter, unbilled', () => {
  test.each([
    ['/api/funding-rounds?cursor=abc', 'cursor'],
    ['/api/funding-rounds?cursor=%21%21', 'cursor'],
    [`/api/funding-rounds?cursor=${Buffer.from('["-date",1,2]').toString('base64url')}`, 'cursor'],
    [`/api/funding-rounds?cursor=${Buffer.from('["-date","x\\u0000","y"]').toString('base64url')}`, 'cursor'],
    [`/api/investors?cursor=${Buffer.from('["-portfolioCount",99999999999,1]').toString('base64url')}`, 'cursor'],
    ['/api/investors/1/portfolio?cursor=e30', 'cursor'],
    ['/api/funding-rounds?minAmount=10&maxAmount=5', 'minAmount'],
    ['/api/funding-rounds?minAmount=-1', 'minAmount'],
    ['/api/funding-rounds?from=2025-02-30', 'from'],
    ['/api/funding-rounds?from=2025-03', 'from'],
    ['/api/funding-rounds?to=yesterday', 'to'],
    ['/api/funding-rounds?from=2025-06-01&to=2025-01-01', 'from'],
    ['/api/funding-rounds?updatedSince=last-week', 'updatedSince'],
    ['/api/funding-rounds?investor=abc', 'investor'],
    ['/api/funding-rounds?companyId=0', 'companyId'],
    ['/api/funding-rounds?limit=0', 'limit'],
    ['/api/funding-rounds?limit=201', 'limit'],
    ['/api/funding-rounds?sort=amount', 'sort'],
    ['/api/funding-rounds?roundType=', 'roundType'],
    ['/api/funding-rounds?colour=red', 'colour'],
    ['/api/investors?sort=-name', 'sort'],
    ['/api/investors?q=a&q=b', 'q'],
    ['/api/investors/abc', 'id'],
    ['/api/investors/0/portfolio', 'id'],
  ])('%s → 400 naming %s', async (path, name) => {
    const { res, body } = await get(path);
    expect([res.status, body.code]).toEqual([400, 'BAD_REQUEST']);
    expect(body.message).toContain(name);
    expect(res.headers.get('x-request-cost-usd')).toBe('0');
  });

  test("a cursor of one sort is refused by another, and one list's by another", async () => {
    const { body } = await get('/api/investors?limit=1');
    expect(body.nextCursor).not.toBeNull();
    for (const path of [`/api/investors?sort=name&cursor=${body.nextCursor}`, `/api/funding-rounds?cursor=${body.nextCursor}`]) {
      const { res, body: error } = await get(path);
      expect([res.status, error.code]).toEqual([400, 'BAD_REQUEST']);
      expect(error.message).toContain('cursor');
    }
  });
});

describe('the typed client', () => {
  test('the same answers over tRPC, cursors included', async () => {
    const client = trpcClient(t, acct.headers);
    const company = allRounds[0]!.companyId;
    expect(await client.fundingRounds.list.query({ companyId: company, limit: 200 })).toEqual((await get(`/api/funding-rounds?companyId=${company}&limit=200`)).body);
    const first = await client.fundingRounds.list.query({ limit: 3 });
    expect(first).toEqual((await get('/api/funding-rounds?limit=3')).body);
    expect(await client.fundingRounds.list.query({ limit: 3, cursor: first.nextCursor! })).toEqual((await get(`/api/funding-rounds?limit=3&cursor=${first.nextCursor}`)).body);
    const investors = await client.investors.list.query({ limit: 2 });
    expect(investors).toEqual((await get('/api/investors?limit=2')).body);
    const id = investors.investors[0]!.id;
    expect(await client.investors.byId.query({ id })).toEqual((await get(`/api/investors/${id}`)).body);
    expect(await client.investors.portfolio.query({ id, limit: 2 })).toEqual((await get(`/api/investors/${id}/portfolio?limit=2`)).body);
    await expect(client.fundingRounds.list.query({ cursor: 'abc' })).rejects.toThrow(/cursor/);
  });
});

describe('query plans', () => {
  // On a few hundred rows the planner rightly prefers a scan, hence enable_seqscan = off: a plan that
  // still scans a table has no index to answer from (as in company-query-plans.test.ts).
  test.skipIf(engine !== 'postgres')('every list, filter, page and lookup is answered from indexes (PostgreSQL)', async () => {
    const base = await freshDatabase();
    const statements: Array<{ query: string; params: unknown[] }> = [];
    const observed = await openDatabase({ kind: 'postgres', url: base.url!, poolSize: 2, onQuery: (query, params) => statements.push({ query, params }) });
    const app = await createTestApp({}, { database: observed });
    const explainer = postgres(base.url!, { max: 1, onnotice: () => {} });
    try {
      const headers = (await fundedAccount(app, { usd: 10 })).headers;
      const body = async (path: string) => json((await app.request(path, { headers })));
      const roundsCursor = (await body('/api/funding-rounds?limit=2')).nextCursor;
      const investor = (await body('/api/investors?limit=1')).investors[0];
      const investorsCursor = (await body('/api/investors?limit=1')).nextCursor;
      const byNameCursor = (await body('/api/investors?limit=1&sort=name')).nextCursor;
      const paths = [
        '/api/funding-rounds',
        `/api/funding-rounds?cursor=${roundsCursor}`,
        '/api/funding-rounds?sort=date&from=2020-01-01&to=2025-12-31',
        '/api/funding-rounds?roundType=series%20b',
        '/api/funding-rounds?minAmount=1000000&maxAmount=100000000',
        `/api/funding-rounds?investor=${investor.id}`,
        '/api/funding-rounds?industry=fintech',
        '/api/funding-rounds?country=united%20states',
        '/api/funding-rounds?companyId=1',
        '/api/funding-rounds?updatedSince=2026-01-01',
        '/api/investors',
        `/api/investors?cursor=${investorsCursor}`,
        `/api/investors?sort=name&cursor=${byNameCursor}`,
        '/api/investors?q=capital&type=vc&country=united%20states',
        `/api/investors/${investor.id}`,
        `/api/investors/${investor.id}/portfolio?limit=2`,
      ];
      for (const path of paths) {
        statements.length = 0;
        expect((await app.request(path, { headers })).status).toBe(200);
        const reads = statements.filter((q) => /^select/i.test(q.query) && /"(funding_rounds|investors|company_investors)"/.test(q.query));
        expect(reads.length).toBeGreaterThan(0);
        for (const { query, params } of reads) {
          const plan = await explainer.begin(async (tx) => {
            await tx.unsafe('set local enable_seqscan = off');
            return (await tx.unsafe(`explain ${query}`, params as never[])).map((r: any) => r['QUERY PLAN']).join('\n');
          });
          expect(`${path}\n${plan}`).not.toMatch(/Seq Scan/);
        }
      }
    } finally {
      await explainer.end();
      await app.close();
      await observed.close();
      await base.close();
    }
  }, 60_000);
});

describe('the change feed', () => {
  test('updatedSince: a rewritten company has its rounds written again', async () => {
    const record = dataset.find((r) => (r.fundingHistory ?? []).length >= 2)!;
    // The database's clock, to the millisecond (every round so far was written before it).
    const [clock] = await t.services.database.db
      .select({ now: sql<string>`to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')` })
      .from(companies)
      .limit(1);
    const before = clock!.now;
    expect(ids(await walk(`/api/funding-rounds?updatedSince=${before}`, 'rounds', 200))).toEqual([]);
    await upsertCompanies(t.services.database.db, [{ ...record, description: `${record.description ?? ''} (rewritten)` }]);
    expect(ids(await walk(`/api/funding-rounds?updatedSince=${before}`, 'rounds', 200))).toEqual(ids(allRounds.filter((r) => r.companySourceId === record.sourceId)));
  });
});

function mostCommon(values: string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]![0];
}

/** The investor the API lists under this name (found by q, matched by slug). */
async function investorNamed(name: string) {
  const found = await walk(`/api/investors?q=${encodeURIComponent(name.trim())}`, 'investors', 200);
  const investor = found.find((i: any) => investorSlug(i.name) === investorSlug(name));
  expect(investor).toBeDefined();
  return investor;
}
