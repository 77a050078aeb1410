/**
 * A company's funding rounds and valuation history (GET /api/private-companies/{id}/rounds and
 * /valuations): every round of the record, oldest first, with a stable id; every dated valuation with
 * its basis read from the round's wording; every figure with its source and date. Expected answers are
 * recomputed here from the dataset files.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { CompanyRecord } from '../../server/companies/company-schema.ts';
import { basisOf } from '../../server/companies/history.ts';
import { upsertCompanies } from '../../server/companies/store.ts';
import { trpcClient, type TestApp } from '../harness/app.ts';
import type { FundedAccount } from '../harness/factories.ts';
import { companyReader, type CompanyReader } from '../harness/company-reader.ts';

let t: TestApp;
let acct: FundedAccount;
let dataset: CompanyRecord[];
let get: CompanyReader['get'];
beforeAll(async () => ({ t, acct, dataset, get } = await companyReader()));
afterAll(() => t.close());
const idOf = async (sourceId: string) => (await get(`/api/private-companies/source/${sourceId}`)).body.id as number;
/** The provenance entry a figure names (else the record's first), at the figure's date. */
const sourceOf = (record: CompanyRecord, ref: string | null | undefined, asOf: string) => {
  const entry = record.provenance!.find((p) => p.id === ref) ?? record.provenance![0]!;
  return { id: entry.id, url: entry.url ?? null, asOf };
};
const byDate = <T extends { date: string }>(rows: T[]) => [...rows].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));

describe('GET /api/private-companies/{id}/rounds', () => {
  test("every round of the record, oldest first, each with a stable id and the record's source at the round's date; billed as the detail", async () => {
    for (const record of dataset.filter((r) => (r.fundingHistory ?? []).length >= 2).slice(0, 25)) {
      const id = await idOf(record.sourceId);
      const { res, body } = await get(`/api/private-companies/${id}/rounds`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-cost-usd')).toBe('0.02');
      const expected = byDate(record.fundingHistory!);
      expect(body.companyId).toBe(id);
      expect(body.rounds.map((r: any) => [r.date, r.roundType, r.amountUsd, r.postMoneyValuationUsd, r.pricePerShareUsd])).toEqual(
        expected.map((r) => [r.date, r.roundType, r.amount ?? null, r.valuation ?? null, r.pricePerShare ?? null]),
      );
      for (const [i, round] of body.rounds.entries()) {
        expect(round.source).toEqual(sourceOf(record, expected[i]!.source, round.date));
        expect(round.id.startsWith(`${record.sourceId}:${round.date}:`)).toBe(true);
        expect(round.companyId).toBe(id);
      }
      expect(new Set(body.rounds.map((r: any) => r.id)).size).toBe(body.rounds.length);
      // Only the latest round carries the record's pre-money figure.
      expect(body.rounds.slice(0, -1).every((r: any) => r.preMoneyValuationUsd === null)).toBe(true);
      expect(body.rounds.at(-1).preMoneyValuationUsd).toBe(record.lastFundingPreMoneyValuationUsd ?? null);
      // Asked again, the same ids.
      expect((await get(`/api/private-companies/${id}/rounds`)).body.rounds.map((r: any) => r.id)).toEqual(body.rounds.map((r: any) => r.id));
    }
  });
});

describe('GET /api/private-companies/{id}/valuations', () => {
  test('OpenAI: each dated round valuation, oldest first, the current one not repeated', async () => {
    const record = dataset.find((r) => r.sourceId === 'openai')!;
    const { body } = await get(`/api/private-companies/${await idOf('openai')}/valuations`);
    const rounds = byDate(record.fundingHistory!).filter((r) => r.valuation);
    expect(body.valuations.map((v: any) => [v.date, v.valuationUsd, v.basis])).toEqual(rounds.map((r) => [r.date, r.valuation, 'primary']));
    expect(body.valuations.length).toBeGreaterThanOrEqual(2);
    expect(body.valuations.at(-1)).toMatchObject({ date: record.valuationAsOf, valuationUsd: record.valuationUsd });
  });

  test("a basis is read from the round's wording: tender, merger and IPO (SpaceX)", async () => {
    const { body } = await get(`/api/private-companies/${await idOf('spacex')}/valuations`);
    // The rounds' valuations (the lists' dated figures have no round).
    const basis = new Map(body.valuations.filter((v: any) => v.roundId).map((v: any) => [v.date, v.basis]));
    const record = dataset.find((r) => r.sourceId === 'spacex')!;
    for (const round of record.fundingHistory!.filter((r) => r.valuation)) {
      const words = (round.roundType ?? '').toLowerCase();
      const expected = words.includes('tender') ? 'tender' : words.includes('secondary') ? 'secondary' : /\bipo\b/.test(words) && !/pre-ipo/.test(words) ? 'ipo' : words.includes('merger') ? 'merger' : 'primary';
      expect(`${round.date} ${basis.get(round.date)}`).toBe(`${round.date} ${expected}`);
    }
    expect([...basis.values()]).toEqual(expect.arrayContaining(['tender', 'merger', 'ipo']));
  });

  test('a current valuation no round states is added as reported, at its own date; every figure has a source', async () => {
    const same = (d: string, v: number) => (h: { date: string; valuation?: number | null; valuationUsd?: number }) =>
      (h.valuation ?? h.valuationUsd) === v && (h.date.startsWith(d) || d.startsWith(h.date));
    // A curated figure that neither a round nor another source's dated figure states.
    const record = dataset.find(
      (r) =>
        r.provenance?.[0]?.id === 'curated' &&
        r.provenance[0].fields.includes('valuationUsd') &&
        r.valuationUsd &&
        r.valuationAsOf &&
        !(r.fundingHistory ?? []).some(same(r.valuationAsOf, r.valuationUsd)) &&
        !(r.valuationHistory ?? []).some(same(r.valuationAsOf, r.valuationUsd)),
    )!;
    expect(record).toBeDefined();
    const { body } = await get(`/api/private-companies/${await idOf(record.sourceId)}/valuations`);
    const reported = body.valuations.filter((v: any) => v.basis === 'reported' && v.source.id === 'curated');
    expect(reported).toEqual([{ date: record.valuationAsOf, valuationUsd: record.valuationUsd, basis: 'reported', roundId: null, source: sourceOf(record, 'curated', record.valuationAsOf!) }]);
    // Every dated figure another source reports is there too, with its basis and source.
    for (const v of record.valuationHistory ?? []) {
      expect(body.valuations).toContainEqual({ date: v.date, valuationUsd: v.valuationUsd, basis: v.basis, roundId: null, source: sourceOf(record, v.source, v.date) });
    }
    expect(byDate(body.valuations)).toEqual(body.valuations);
    for (const v of body.valuations) expect(v.source.asOf).toBe(v.date);
  });
});

describe('the basis of a round\'s wording', () => {
  test('a Pre-IPO round is a primary round, an IPO is an IPO', () => {
    expect(['Pre-IPO round', 'pre ipo', 'IPO', 'Listing on NYSE', 'Series F (pre-IPO)', 'Tender offer (secondary)'].map(basisOf)).toEqual(['primary', 'primary', 'ipo', 'ipo', 'primary', 'tender']);
  });
});

describe('updatedSince on one company\'s rounds', () => {
  test('the rounds written since an instant: all of them before the seed, none after, a re-written company\'s after its import', async () => {
    const record = dataset.find((r) => (r.fundingHistory ?? []).length >= 2 && r.referenceUrl)!;
    const id = await idOf(record.sourceId);
    const all = (await get(`/api/private-companies/${id}/rounds`)).body.rounds;
    expect((await get(`/api/private-companies/${id}/rounds?updatedSince=2000-01-01`)).body.rounds).toEqual(all);
    const since = new Date(Date.now() + 1).toISOString();
    await Bun.sleep(5);
    expect((await get(`/api/private-companies/${id}/rounds?updatedSince=${since}`)).body.rounds).toEqual([]);
    // The record changes: its rounds are rewritten, so the feed names them all (another company's none).
    await upsertCompanies(t.database.db, [{ ...record, employees: (record.employees ?? 10) + 1 }]);
    expect((await get(`/api/private-companies/${id}/rounds?updatedSince=${since}`)).body.rounds).toEqual(all);
    const other = dataset.find((r) => r.sourceId !== record.sourceId && (r.fundingHistory ?? []).length >= 1)!;
    expect((await get(`/api/private-companies/${await idOf(other.sourceId)}/rounds?updatedSince=${since}`)).body.rounds).toEqual([]);
    const { res, body } = await get(`/api/private-companies/${id}/rounds?updatedSince=yesterday`);
    expect([res.status, body.code, body.message]).toEqual([400, 'BAD_REQUEST', expect.stringContaining('updatedSince')]);
  });
});

describe('errors and the typed client', () => {
  test('unknown id → 404 (unbilled); a bad id → 400; the same answers over tRPC', async () => {
    for (const path of ['/api/private-companies/999999/rounds', '/api/private-companies/999999/valuations']) {
      const { res, body } = await get(path);
      expect([res.status, body.code, res.headers.get('x-request-cost-usd')]).toEqual([404, 'NOT_FOUND', '0']);
    }
    for (const path of ['/api/private-companies/0/rounds', '/api/private-companies/abc/valuations']) {
      const { res, body } = await get(path);
      expect([res.status, body.code]).toEqual([400, 'BAD_REQUEST']);
    }
    const id = await idOf('anthropic');
    const client = trpcClient(t, acct.headers);
    expect(await client.privateCompanies.rounds.query({ id })).toEqual((await get(`/api/private-companies/${id}/rounds`)).body);
    expect(await client.privateCompanies.valuations.query({ id })).toEqual((await get(`/api/private-companies/${id}/valuations`)).body);
  });
});
