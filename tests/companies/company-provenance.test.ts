/**
 * Where a company's facts come from, and the company as it stood on a day: the detail's `sources`
 * (one entry per known field: the source, its page and the figure's date) and
 * GET /api/private-companies/{id}?asOf=YYYY-MM-DD (server/companies/point-in-time.ts). Companies are
 * picked from the dataset at test time and every expected figure is recomputed here from the record.
 */
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { CompanyRecord } from '../../server/companies/company-schema.ts';
import { companyRecordShape } from '../../server/companies/company-schema.ts';
import { json, trpcClient, type TestApp } from '../harness/app.ts';
import type { FundedAccount } from '../harness/factories.ts';
import { companyReader, type CompanyReader } from '../harness/company-reader.ts';

let t: TestApp;
let acct: FundedAccount;
let dataset: CompanyRecord[];
let get: CompanyReader['get'];
beforeAll(async () => ({ t, acct, dataset, get } = await companyReader()));
afterAll(() => t.close());
const bySource = (sourceId: string, query = '') => get(`/api/private-companies/source/${sourceId}${query}`);

/** Source ids a figure may name: a folder of data/sources/, or the service's own. */
const SOURCE_IDS = new Set([
  ...readdirSync(new URL('../../data/sources/', import.meta.url), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name),
  'curated',
  'import',
  'polymarket',
]);

/** The record fields a detail answers (all but provenance, answered as `sources`; sourceId is the key). */
const FACT_FIELDS = Object.keys(companyRecordShape).filter((f) => f !== 'provenance' && f !== 'sourceId');
/** A value that states something: not null, not an empty list, not an empty object. */
const isKnown = (v: unknown) => v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0) && !(typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0);
const PARTIAL_DATE = /^\d{4}(-\d{2}(-\d{2})?)?$/;
/** Fields whose source date is the figure's own (the record's date field for it). */
const DATED: Record<string, string> = { valuationUsd: 'valuationAsOf', valuationAsOf: 'valuationAsOf', employees: 'employeesAsOf', employeesAsOf: 'employeesAsOf', ipoDate: 'ipoDate', lastFundingDate: 'lastFundingDate', lastFundingAmountUsd: 'lastFundingDate' };

const isCurated = (r: CompanyRecord) => r.provenance?.[0]?.id === 'curated';
/** A spread of the dataset: curated records first, then others at even steps. */
function spread(records: CompanyRecord[], curated: number, others: number) {
  const rest = records.filter((r) => !isCurated(r));
  const step = Math.max(1, Math.floor(rest.length / others));
  return [...records.filter(isCurated).slice(0, curated), ...rest.filter((_, i) => i % step === 0).slice(0, others)];
}

/** Every known field of a detail has a source, naming the provenance entry that lists it. */
function expectSourced(body: any, record: CompanyRecord | undefined) {
  expect(body.provenance).toBeUndefined();
  for (const field of FACT_FIELDS) {
    const source = body.sources[field];
    // Nothing unknown is sourced; an empty list states nothing either way.
    if (body[field] === null) expect([body.sourceId, field, source]).toEqual([body.sourceId, field, undefined]);
    if (!isKnown(body[field])) continue;
    expect([body.sourceId, field, typeof source]).toEqual([body.sourceId, field, 'object']);
    expect(SOURCE_IDS.has(source.id)).toBe(true);
    expect(source.url === null || typeof source.url === 'string').toBe(true);
    expect(source.asOf).toMatch(PARTIAL_DATE);
    if (DATED[field] && body[DATED[field]]) expect([field, source.asOf]).toEqual([field, body[DATED[field]]]);
    if (record) {
      const entry = record.provenance?.find((p) => p.fields.includes(field));
      expect([body.sourceId, field, source.id, source.url]).toEqual([body.sourceId, field, entry?.id ?? 'import', entry ? (entry.url ?? null) : (record.referenceUrl ?? null)]);
    }
  }
  for (const field of Object.keys(body.sources)) expect(FACT_FIELDS).toContain(field);
}

// Dated figures and the day they are known from (a partial date counts from its first day).
const firstDay = (d: string) => (d.length === 4 ? `${d}-01-01` : d.length === 7 ? `${d}-01` : d);
const dayBefore = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
type Figure = { date: string; value: number };
function figuresOf(r: CompanyRecord): Figure[] {
  const rounds = (r.fundingHistory ?? []).filter((h) => h.valuation != null).map((h) => ({ date: h.date, value: h.valuation! }));
  const reported = (r.valuationHistory ?? []).map((v) => ({ date: v.date, value: v.valuationUsd }));
  const current = r.valuationUsd != null && r.valuationAsOf ? [{ date: r.valuationAsOf, value: r.valuationUsd }] : [];
  return [...rounds, ...reported, ...current].sort((a, b) => (firstDay(a.date) < firstDay(b.date) ? -1 : firstDay(a.date) > firstDay(b.date) ? 1 : 0));
}
/** The earliest day a record may be asked about: the service's date range and its founding year. */
const earliestDay = (r: CompanyRecord) => (r.foundedYear && r.foundedYear > 1970 ? `${r.foundedYear}-01-01` : '1970-01-01');
const curatedFirst = () => [...dataset.filter(isCurated), ...dataset.filter((r) => !isCurated(r))];

/**
 * A record with two distinct dated valuations, and a day on which an older one was the latest known:
 * the first day of a figure that differs from the current valuation, known before the current one,
 * and the only value known from that day.
 */
function olderValuationCase() {
  for (const record of curatedFirst()) {
    const figures = figuresOf(record);
    if (new Set(figures.map((f) => `${f.date}:${f.value}`)).size < 2) continue;
    const currentDay = record.valuationAsOf ? firstDay(record.valuationAsOf) : '9999-12-31';
    const older = figures.filter((f) => {
      const day = firstDay(f.date);
      return (
        f.value !== record.valuationUsd &&
        day < currentDay &&
        day >= earliestDay(record) &&
        figures.every((g) => firstDay(g.date) !== day || g.value === f.value)
      );
    });
    const figure = older.at(-1);
    if (figure) return { record, figure, day: firstDay(figure.date), figures };
  }
  return undefined;
}

describe('sources: where each known field comes from', () => {
  test('every known field of a detail names its source (the first provenance entry listing it), for a spread of the dataset', async () => {
    const records = spread(dataset, 25, 25);
    expect(records.length).toBeGreaterThan(10);
    for (const record of records) {
      const { res, body } = await bySource(record.sourceId);
      expect(res.status).toBe(200);
      expect(body.asOf).toBeNull();
      expectSourced(body, record);
    }
  });

  test('/{id}, /source/{sourceId} and /spacex answer the same sources', async () => {
    const spacex = dataset.find((r) => r.sourceId === 'spacex');
    const { body } = await get('/api/private-companies/spacex');
    expectSourced(body, spacex);
    const byId = (await get(`/api/private-companies/${body.id}`)).body;
    const bySourceId = (await bySource('spacex')).body;
    expect(byId.sources).toEqual(body.sources);
    expect(bySourceId.sources).toEqual(body.sources);
  });

  test('the openapi document describes sources and asOf on the detail', async () => {
    const doc = await json(await t.request('/openapi.json'));
    const detail = doc.paths['/private-companies/{id}'].get;
    const schema = detail.responses['200'].content['application/json'].schema;
    const props = schema.properties ?? doc.components.schemas[schema.$ref.split('/').at(-1)].properties;
    expect(props.sources.description).toContain('data/sources/');
    expect(props.provenance).toBeUndefined();
    expect(Object.keys(props)).toEqual(expect.arrayContaining(['aliases', 'valuationHistory', 'sources', 'asOf', 'markets', 'extra']));
    expect(detail.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(['id', 'asOf']));
    expect(detail.description).toContain('valid time');
  });
});

describe('asOf: the record as it stood on a day', () => {
  test('an older valuation: the latest figure known on the day, with its source; later rounds and figures left out; billed as the detail', async () => {
    const found = olderValuationCase();
    expect(found).toBeDefined();
    const { record, figure, day } = found!;
    const { res, body } = await bySource(record.sourceId, `?asOf=${day}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-cost-usd')).toBe('0.02');
    expect(body.asOf).toBe(day);
    expect(body.valuationUsd).toBe(figure.value);
    expect(body.valuationUsd).not.toBe(record.valuationUsd);
    expect(firstDay(body.valuationAsOf) <= day).toBe(true);
    expect(found!.figures.some((f) => f.date === body.valuationAsOf && f.value === figure.value)).toBe(true);
    expect([body.valuationStepUpMultiple, body.valuationStepUpDescription]).toEqual([null, null]);
    expect(body.sources.valuationUsd.asOf).toBe(body.valuationAsOf);

    const rounds = (record.fundingHistory ?? []).filter((h) => firstDay(h.date) <= day);
    expect(body.fundingHistory).toEqual(rounds.map((h) => expect.objectContaining({ date: h.date, valuation: h.valuation ?? null })));
    expect(body.valuationHistory).toEqual(record.valuationHistory ? record.valuationHistory.filter((v) => firstDay(v.date) <= day) : null);
    const dropped = rounds.length < (record.fundingHistory ?? []).length;
    if (dropped && record.lastFundingDate != null) {
      expect(body.lastFundingDate).toBe(rounds.at(-1)?.date ?? null);
      expect(body.lastFundingAmountUsd).toBe(rounds.at(-1)?.amount ?? null);
      expect(body.lastFundingPreMoneyValuationUsd).toBeNull();
    }
    if (record.employeesAsOf && firstDay(record.employeesAsOf) > day) expect([body.employees, body.employeesAsOf]).toEqual([null, null]);
    if (record.ipoDate && firstDay(record.ipoDate) > day) expect(body.ipoDate).toBeNull();
    // Undated identity facts as they are now.
    expect([body.name, body.website ?? null, body.foundedYear ?? null]).toEqual([record.name, record.website ?? null, record.foundedYear ?? null]);
    expectSourced(body, undefined);

    // The same on /{id} and over tRPC.
    const byId = (await get(`/api/private-companies/${body.id}?asOf=${day}`)).body;
    const withoutTimes = (c: any) => ({ ...c, markets: c.markets.map(({ updatedAt: _, ...m }: any) => m) });
    expect(withoutTimes(byId)).toEqual(withoutTimes(body));
    const typed = await trpcClient(t, acct.headers).privateCompanies.byId.query({ id: body.id, asOf: day });
    expect(withoutTimes(typed)).toEqual(withoutTimes(body));
  });

  test('asOf before every dated valuation: valuationUsd null, no source for it', async () => {
    const found = curatedFirst()
      .map((record) => ({ record, figures: figuresOf(record) }))
      .find(({ record, figures }) => figures.length > 0 && dayBefore(firstDay(figures[0]!.date)) >= earliestDay(record));
    expect(found).toBeDefined();
    const { record, figures } = found!;
    const day = dayBefore(firstDay(figures[0]!.date));
    const { res, body } = await bySource(record.sourceId, `?asOf=${day}`);
    expect(res.status).toBe(200);
    expect([body.valuationUsd, body.valuationAsOf, body.valuationStepUpMultiple]).toEqual([null, null, null]);
    expect(body.sources.valuationUsd).toBeUndefined();
    expect((body.fundingHistory ?? []).filter((h: any) => h.valuation != null)).toEqual([]);
    expectSourced(body, undefined);
  });

  test('asOf after every dated fact: the record as it is now', async () => {
    const unchanged = (r: CompanyRecord) => {
      const figures = figuresOf(r);
      if (!figures.length) return true;
      if (r.valuationUsd == null || !r.valuationAsOf) return false;
      return figures.every((f) => firstDay(f.date) <= firstDay(r.valuationAsOf!) || f.value === r.valuationUsd);
    };
    const records = spread(dataset, 15, 15).filter(unchanged);
    expect(records.length).toBeGreaterThan(5);
    const withoutTimes = ({ asOf: _, markets, ...c }: any) => ({ ...c, markets: markets.map(({ updatedAt: __, ...m }: any) => m) });
    for (const record of records) {
      const now = (await bySource(record.sourceId)).body;
      const then = (await bySource(record.sourceId, '?asOf=9999-12-31')).body;
      expect(then.asOf).toBe('9999-12-31');
      expect(withoutTimes(then)).toEqual(withoutTimes(now));
    }
  });

  test('asOf before the founding year → 404 (did not exist yet), unbilled; the founding year itself → 200', async () => {
    const record = curatedFirst().find((r) => r.foundedYear && r.foundedYear > 1971);
    expect(record).toBeDefined();
    const id = (await bySource(record!.sourceId)).body.id;
    for (const path of [`/api/private-companies/${id}?asOf=${record!.foundedYear! - 1}-12-31`, `/api/private-companies/source/${record!.sourceId}?asOf=${record!.foundedYear! - 1}-12-31`]) {
      const { res, body } = await get(path);
      expect([res.status, body.code, res.headers.get('x-request-cost-usd')]).toEqual([404, 'NOT_FOUND', '0']);
      expect(body.message).toContain('did not exist yet');
    }
    const { res } = await get(`/api/private-companies/${id}?asOf=${record!.foundedYear}-01-01`);
    expect(res.status).toBe(200);
  });

  test.each(['2025-02-30', '2025-13-01', 'yesterday', '2025-6-1', '2025-06', '2025', '2025-06-30T00:00:00Z', '1969-12-31', ''])('bad asOf %p → 400 naming asOf, unbilled', async (value) => {
    const id = (await bySource(dataset[0]!.sourceId)).body.id;
    for (const path of [`/api/private-companies/${id}`, `/api/private-companies/source/${dataset[0]!.sourceId}`]) {
      const { res, body } = await get(`${path}?asOf=${encodeURIComponent(value)}`);
      expect([res.status, body.code, res.headers.get('x-request-cost-usd')]).toEqual([400, 'BAD_REQUEST', '0']);
      expect(body.message).toStartWith('asOf: ');
    }
    const error = await trpcClient(t, acct.headers)
      .privateCompanies.byId.query({ id, asOf: value })
      .catch((e) => e);
    expect(error.data.api).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
  });
});
