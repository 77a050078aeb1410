/**
 * GET /api/private-companies/export: every company the list's filters match, once each, in id order,
 * as its detail record without markets, streamed as NDJSON or CSV; billed per started thousand rows at
 * the private-company rate (one detail call's price), all of it before the first byte, 402 (and
 * nothing streamed) when the balance does not cover it, 400 for a bad input before any charge. The
 * dataset is being rebuilt, so every count here is read from it, never written down.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { loadDataset } from '../../seeds/company-dataset.ts';
import { billingSummary } from '../../server/accounts/billing.ts';
import type { CompanyRecord } from '../../server/companies/company-schema.ts';
import { csvCell, EXPORT_BATCH_ROWS, exportFile, ROWS_PER_UNIT } from '../../server/companies/export.ts';
import { refundLapsedUnits } from '../../server/billing/lapsed-units.ts';
import { resultRows } from '../../db/prepared.ts';
import { sql } from 'drizzle-orm';
import { upsertCompanies } from '../../server/companies/store.ts';
import { parseCsv } from '../../server/lib/csv.ts';
import { createTestApp, DASHBOARD_KEY, json, trpcClient, type TestApp } from '../harness/app.ts';
import { dashboardHeaders, fundedAccount, type FundedAccount } from '../harness/factories.ts';

const EXPORT = '/api/private-companies/export';
const micros = (usd: string | number | null) => Math.round(Number(usd) * 1_000_000);
const unitsFor = (rows: number) => Math.max(1, Math.ceil(rows / ROWS_PER_UNIT));

let t: TestApp;
let acct: FundedAccount;
let dataset: CompanyRecord[];
/** What one company detail call costs (micro-USD): the export's price per unit. */
let rateMicros: number;
/** The whole export as NDJSON, read once. */
let all: any[];

const get = (app: TestApp, path: string, headers: Record<string, string>) => app.request(path, { headers });
/** NDJSON lines, each ended by a newline (an empty file has none). */
const ndjsonOf = (text: string) => {
  if (text === '') return [];
  expect(text.endsWith('\n')).toBe(true);
  return text.slice(0, -1).split('\n').map((line) => JSON.parse(line));
};
/** The balance, read through the (unbilled) dashboard route. */
const balanceOf = async (app: TestApp, account: FundedAccount) => micros((await json(await get(app, '/api/accounts/me', dashboardHeaders(DASHBOARD_KEY, account.accountId)))).balanceUsd);
/** The export's usage records of an account (this read is billed at the standard rate, and listed under its own path). */
const exportUsage = async (app: TestApp, account: FundedAccount) => (await json(await get(app, `/api/usage?path=${encodeURIComponent(EXPORT)}`, account.headers))).records as Array<{ costUsd: number }>;

beforeAll(async () => {
  t = await createTestApp();
  acct = await fundedAccount(t, { usd: 1000 });
  dataset = (await loadDataset()).records;
  const some = await json(await get(t, '/api/private-companies?limit=1', acct.headers));
  rateMicros = micros((await get(t, `/api/private-companies/${some.companies[0].id}`, acct.headers)).headers.get('x-request-cost-usd'));
  expect(rateMicros).toBeGreaterThan(0);
  const res = await get(t, EXPORT, acct.headers);
  expect(res.status).toBe(200);
  all = ndjsonOf(await res.text());
});
afterAll(() => t.close());

describe('NDJSON (the default)', () => {
  test('every company of the dataset exactly once, in id order, as a file to save; charged per started thousand rows', async () => {
    const res = await get(t, `${EXPORT}?format=ndjson`, acct.headers);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename=companies-\d{4}-\d{2}-\d{2}\.ndjson$/);
    expect(micros(res.headers.get('x-request-cost-usd'))).toBe(unitsFor(dataset.length) * rateMicros);
    const records = ndjsonOf(await res.text());
    expect(records).toHaveLength(dataset.length);
    const ids = records.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(records.map((r) => r.sourceId))).toEqual(new Set(dataset.map((r) => r.sourceId)));
    // The default format is NDJSON: the same lines.
    expect(records).toEqual(all);
  });

  test('each line is the detail record of GET /api/private-companies/{id}, without markets', async () => {
    const picks = [0, 1, Math.floor(all.length / 3), Math.floor(all.length / 2), all.length - 1].map((i) => all[i]);
    picks.push(all.find((r) => (r.fundingHistory ?? []).length > 1) ?? all[2]);
    for (const exported of picks) {
      const detail = await json(await get(t, `/api/private-companies/${exported.id}`, acct.headers));
      // markets are live market data, not the record; asOf echoes the detail's own parameter.
      const { markets: _markets, asOf: _asOf, ...record } = detail;
      expect(exported).toEqual(record);
    }
  });
});

describe('CSV', () => {
  test('a header of the record\'s field names, a row per company, RFC 4180; the fields round-trip', async () => {
    const res = await get(t, `${EXPORT}?format=csv`, acct.headers);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename=companies-\d{4}-\d{2}-\d{2}\.csv$/);
    expect(micros(res.headers.get('x-request-cost-usd'))).toBe(unitsFor(dataset.length) * rateMicros);
    const text = await res.text();
    expect(text.endsWith('\r\n')).toBe(true);
    const [header, ...rows] = parseCsv(text).map((r) => r.cells);
    expect(header).toEqual(Object.keys(all[0]));
    expect(rows).toHaveLength(all.length);
    const column = (name: string) => header!.indexOf(name);
    /** A cell read back, by the type its NDJSON twin has: empty is null, lists and objects their JSON text. */
    const read = (cell: string, like: unknown) =>
      cell === '' ? null : like !== null && typeof like === 'object' ? JSON.parse(cell) : typeof like === 'number' ? Number(cell) : typeof like === 'boolean' ? cell === 'true' : cell;
    // A few fields of every row: text (with commas and quotes, in names and descriptions), numbers, lists, objects, nulls.
    for (const [i, row] of rows.entries()) {
      for (const field of ['id', 'sourceId', 'name', 'description', 'valuationUsd', 'boardMembers', 'fundingHistory', 'extra', 'sources', 'updatedAt']) {
        expect(read(row[column(field)]!, all[i][field])).toEqual(all[i][field] ?? null);
      }
    }
    // Every field of a few rows.
    for (const i of [0, Math.floor(rows.length / 2), rows.length - 1]) {
      expect(Object.fromEntries(header!.map((name, c) => [name, read(rows[i]![c]!, all[i][name])]))).toEqual(all[i]);
    }
    // Quoting was needed and done: some cell held a comma or a quote.
    expect(text).toContain('""');
  });

  test('a text a spreadsheet would run as a formula is written with a leading apostrophe; numbers and JSON are not touched', () => {
    expect(['=HYPERLINK("x")', '+1', '-cmd', '@SUM(A1)', '\tx'].map(csvCell)).toEqual([`"'=HYPERLINK(""x"")"`, "'+1", "'-cmd", "'@SUM(A1)", "'\tx"]);
    expect([-5, 0, 'Stripe', ['=a'], { a: '=b' }, null, ''].map(csvCell)).toEqual(['-5', '0', 'Stripe', '"[""=a""]"', '"{""a"":""=b""}"', '', '""']);
  });
});

describe('filters narrow the export as they narrow the list', () => {
  const listTotal = async (query: string) => (await json(await get(t, `/api/private-companies?limit=1&${query}`, acct.headers))).total as number;
  const exported = async (query: string) => {
    const res = await get(t, `${EXPORT}?${query}`, acct.headers);
    expect(res.status).toBe(200);
    const records = ndjsonOf(await res.text());
    expect(micros(res.headers.get('x-request-cost-usd'))).toBe(unitsFor(records.length) * rateMicros);
    return records;
  };

  test('each filter: the list\'s total, and only matching companies', async () => {
    const sample = all.find((r) => r.industry && r.headquartersCountry && r.backingType)!;
    const valuations = all.map((r) => r.valuationUsd).filter((v): v is number => v !== null).sort((a, b) => a - b);
    const median = valuations[Math.floor(valuations.length / 2)]!;
    // Each filter with the rule it applies (null: hasMarket, which the record does not show).
    const cases: Array<[string, ((r: any) => boolean) | null]> = [
      [`industry=${encodeURIComponent(sample.industry.toUpperCase())}`, (r) => r.industry?.toLowerCase() === sample.industry.toLowerCase()],
      [`country=${encodeURIComponent(sample.headquartersCountry)}`, (r) => r.headquartersCountry?.toLowerCase() === sample.headquartersCountry.toLowerCase()],
      [`backingType=${encodeURIComponent(sample.backingType)}`, (r) => r.backingType?.toLowerCase() === sample.backingType.toLowerCase()],
      [`minValuation=${median}`, (r) => r.valuationUsd !== null && r.valuationUsd >= median],
      [`maxValuation=${median}&minFoundedYear=2010`, (r) => r.valuationUsd !== null && r.valuationUsd <= median && r.foundedYear !== null && r.foundedYear >= 2010],
      ['minFunding=100000000&maxEmployees=5000', (r) => r.totalFundingUsd !== null && r.totalFundingUsd >= 1e8 && r.employees !== null && r.employees <= 5000],
      ['updatedSince=2000-01-01', () => true],
      ['updatedSince=9999-12-31', () => false],
      ['hasMarket=true', null],
      ['hasMarket=false', null],
    ];
    const withMarket: number[][] = [];
    for (const [query, matches] of cases) {
      const records = await exported(`format=ndjson&${query}`);
      expect(`${query}: ${records.length}`).toBe(`${query}: ${await listTotal(query)}`);
      const ids = records.map((r) => r.id);
      if (matches) expect(ids).toEqual(all.filter(matches).map((r) => r.id));
      else withMarket.push(ids);
    }
    // With a market and without one: every company, once.
    expect([...withMarket[0]!, ...withMarket[1]!].sort((a, b) => a - b)).toEqual(all.map((r) => r.id));
  });

  test('the same companies as the list, page by page', async () => {
    const sample = all.find((r) => r.industry)!;
    const query = `industry=${encodeURIComponent(sample.industry)}`;
    const listed: number[] = [];
    for (let offset = 0; ; offset += 200) {
      const page = await json(await get(t, `/api/private-companies?${query}&limit=200&offset=${offset}`, acct.headers));
      listed.push(...page.companies.map((c: any) => c.id));
      if (listed.length >= page.total) break;
    }
    expect((await exported(query)).map((r) => r.id)).toEqual(listed);
  });

  test('a filter that matches nothing is an empty file, and costs one unit (it still answers a question about the data)', async () => {
    const res = await get(t, `${EXPORT}?format=csv&minValuation=1&maxValuation=1`, acct.headers);
    expect(res.status).toBe(200);
    expect(micros(res.headers.get('x-request-cost-usd'))).toBe(rateMicros);
    expect(parseCsv(await res.text())).toHaveLength(1); // the header
  });
});

describe('billing', () => {
  test('ceil(rows / 1000) × the private-company rate, once, before the body: the balance and the usage records say so', async () => {
    const payer = await fundedAccount(t, { usd: 5 });
    const before = await balanceOf(t, payer);
    const res = await get(t, `${EXPORT}?format=csv`, payer.headers);
    expect(res.status).toBe(200);
    const charged = micros(res.headers.get('x-request-cost-usd'));
    expect(charged).toBe(Math.ceil(dataset.length / ROWS_PER_UNIT) * rateMicros);
    // Charged before the body was read.
    expect(await balanceOf(t, payer)).toBe(before - charged);
    expect((await res.text()).length).toBeGreaterThan(0);
    expect(await balanceOf(t, payer)).toBe(before - charged);
    const usage = await exportUsage(t, payer);
    expect(usage.reduce((sum, r) => sum + micros(r.costUsd), 0)).toBe(charged);
    expect(usage.every((r) => micros(r.costUsd) === rateMicros)).toBe(true);
  });

  test('402 for an account that cannot pay: nothing streamed, nothing charged', async () => {
    const broke = await fundedAccount(t, { usd: 0 });
    const res = await get(t, EXPORT, broke.headers);
    expect(res.status).toBe(402);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('content-disposition')).toBeNull();
    expect(res.headers.get('x-request-cost-usd')).toBe('0');
    expect(await json(res)).toMatchObject({ code: 'INSUFFICIENT_BALANCE', status: 402 });
    expect(await billingSummary(t.database.db, broke.accountId)).toMatchObject({ balanceMicros: 0, usageCount: 0, usageCostMicros: 0 });
  });

  test('400 for format=xml and for min > max, before any charge (even with no balance); the tRPC form is refused and costs nothing', async () => {
    const payer = await fundedAccount(t, { usd: 1 });
    const broke = await fundedAccount(t, { usd: 0 });
    for (const [query, parameter] of [['format=xml', 'format'], ['minValuation=10&maxValuation=1', 'minValuation'], ['minEmployees=lots', 'minEmployees'], ['limit=5', 'limit']] as const) {
      for (const account of [payer, broke]) {
        const res = await get(t, `${EXPORT}?${query}`, account.headers);
        expect(`${query} → ${res.status}`).toBe(`${query} → 400`);
        expect(res.headers.get('x-request-cost-usd')).toBe('0');
        const body = await json(res);
        expect(body.code).toBe('BAD_REQUEST');
        expect(body.message).toContain(parameter);
      }
    }
    const refused = await trpcClient(t, payer.headers).companyExport.get.query({ format: 'csv' }).catch((error: any) => error);
    expect(refused?.data?.api).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    expect(refused.data.api.message).toContain(EXPORT);
    expect(await balanceOf(t, payer)).toBe(micros(1));
    expect((await billingSummary(t.database.db, payer.accountId)).usageCount).toBe(0);
  });

  test('without a key: 401', async () => {
    expect((await t.request(EXPORT)).status).toBe(401);
  });
});

describe('streaming', () => {
  /** The response as the server hands it over: the harness's check of it against /openapi.json would read the whole body first. */
  const raw = async (path: string) => {
    const mode = process.env.RESPONSE_VALIDATION;
    process.env.RESPONSE_VALIDATION = 'off';
    try {
      return await get(t, path, acct.headers);
    } finally {
      if (mode === undefined) delete process.env.RESPONSE_VALIDATION;
      else process.env.RESPONSE_VALIDATION = mode;
    }
  };

  test('the body is a stream, read chunk by chunk as it is written', async () => {
    const res = await raw(EXPORT);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const chunks: string[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(decoder.decode(value, { stream: true }));
    }
    // One chunk per keyset batch, each whole lines.
    expect(chunks.length).toBe(Math.ceil(all.length / EXPORT_BATCH_ROWS));
    for (const chunk of chunks) expect(chunk.endsWith('\n')).toBe(true);
    expect(ndjsonOf(chunks.join(''))).toEqual(all);
  });

  test('a reader that stops early cancels it', async () => {
    const res = await raw(`${EXPORT}?format=csv`);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value).startsWith('id,')).toBe(true);
    await reader.cancel();
  });

  test('rows are read in keyset batches: memory holds one batch, whatever the dataset', async () => {
    const file = exportFile(t.database.db, { minFoundedYear: 1900 }, 'ndjson', { batchRows: 7, now: new Date('2026-11-22T12:00:00Z') });
    expect(file.filename).toBe('companies-2026-11-22.ndjson');
    const reader = file.body.getReader();
    const sizes: number[] = [];
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const chunk = new TextDecoder().decode(value);
      sizes.push(chunk.split('\n').length - 1);
      text += chunk;
    }
    const expected = all.filter((r) => r.foundedYear !== null && r.foundedYear >= 1900);
    expect(sizes.every((n) => n <= 7)).toBe(true);
    expect(sizes.length).toBe(Math.ceil(expected.length / 7));
    expect(ndjsonOf(text).map((r) => r.id)).toEqual(expected.map((r) => r.id));
  });
});

describe('a dataset of several thousand rows (each started thousand is one more unit)', () => {
  let big: TestApp;
  let rows: number;
  beforeAll(async () => {
    // A short unit lease, so that a stalled reader's units lapse within the test (nothing here waits on it otherwise).
    big = await createTestApp({ UNIT_LEASE_MS: '1000' });
    // Two more copies of every company (new sourceIds), through the import's own upsert.
    const copies = [1, 2].flatMap((n) => dataset.map((r) => ({ ...r, sourceId: `${r.sourceId}-copy-${n}`.slice(0, 128) })));
    await upsertCompanies(big.database.db, copies);
    rows = dataset.length + copies.length;
    expect(rows).toBeGreaterThan(2 * ROWS_PER_UNIT);
  });
  afterAll(() => big.close());

  test('charged ceil(rows / 1000) units, streamed in full, each company once', async () => {
    const payer = await fundedAccount(big, { usd: 5 });
    const before = await balanceOf(big, payer);
    const res = await get(big, EXPORT, payer.headers);
    expect(res.status).toBe(200);
    const units = Math.ceil(rows / ROWS_PER_UNIT);
    expect(units).toBeGreaterThanOrEqual(3);
    expect(micros(res.headers.get('x-request-cost-usd'))).toBe(units * rateMicros);
    expect(await balanceOf(big, payer)).toBe(before - units * rateMicros);
    const records = ndjsonOf(await res.text());
    expect(records).toHaveLength(rows);
    expect(new Set(records.map((r) => r.id)).size).toBe(rows);
    const usage = await exportUsage(big, payer);
    expect(usage).toHaveLength(units);
    expect(usage.reduce((sum, r) => sum + micros(r.costUsd), 0)).toBe(units * rateMicros);
  });

  test('402 when the balance covers some units but not all: all or nothing, the balance untouched', async () => {
    const units = Math.ceil(rows / ROWS_PER_UNIT);
    const short = await fundedAccount(big, { usd: ((units - 1) * rateMicros) / 1_000_000 });
    const before = await balanceOf(big, short);
    const res = await get(big, EXPORT, short.headers);
    expect(res.status).toBe(402);
    expect(res.headers.get('x-request-cost-usd')).toBe('0');
    expect(res.headers.get('content-type')).toBe('application/json');
    expect((await json(res)).code).toBe('INSUFFICIENT_BALANCE');
    expect(await balanceOf(big, short)).toBe(before);
    expect(await billingSummary(big.database.db, short.accountId)).toMatchObject({ usageCount: 0, usageCostMicros: 0 });
    // A filter small enough to be paid for is served.
    const narrow = await get(big, `${EXPORT}?minValuation=${Number.MAX_SAFE_INTEGER}`, short.headers);
    expect(narrow.status).toBe(200);
    expect(micros(narrow.headers.get('x-request-cost-usd'))).toBe(rateMicros);
  });

  /** The response as the server hands it over (the harness's check against /openapi.json would read the whole body first). */
  const rawGet = async (path: string, headers: Record<string, string>) => {
    const mode = process.env.RESPONSE_VALIDATION;
    process.env.RESPONSE_VALIDATION = 'off';
    try {
      return await get(big, path, headers);
    } finally {
      if (mode === undefined) delete process.env.RESPONSE_VALIDATION;
      else process.env.RESPONSE_VALIDATION = mode;
    }
  };
  /** The account's units still provisional (reserved, not yet kept or refunded). */
  const provisional = async (account: FundedAccount) =>
    Number((await big.database.db.execute(sql`select count(*)::int as n from usage_records where account_id = ${account.accountId} and provisional_until is not null`).then(resultRows<{ n: number }>))[0]!.n);
  /** The export's units the account paid for good (read without a billed call). */
  const kept = async (account: FundedAccount) =>
    Number((await big.database.db.execute(sql`select count(*)::int as n from usage_records where account_id = ${account.accountId} and path = ${EXPORT} and provisional_until is null`).then(resultRows<{ n: number }>))[0]!.n);
  /** Waits until the stream has settled its units (the refunds of a cancelled stream run after the cancel). */
  const settled = async (account: FundedAccount) => {
    for (const deadline = Date.now() + 10_000; (await provisional(account)) > 0; ) {
      if (Date.now() > deadline) throw new Error('the export never settled its units');
      await Bun.sleep(20);
    }
  };
  /** Reads the first chunk of an export, then cancels: the records received. */
  const firstChunk = async (path: string, account: FundedAccount) => {
    const res = await rawGet(path, account.headers);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    await reader.cancel();
    return { records: ndjsonOf(new TextDecoder().decode(value)), charged: micros(res.headers.get('x-request-cost-usd')) };
  };

  test('a reader that stops after the first chunk keeps only the thousands written: the rest is refunded, usage and balance agree', async () => {
    const payer = await fundedAccount(big, { usd: 5 });
    const before = await balanceOf(big, payer);
    const units = Math.ceil(rows / ROWS_PER_UNIT);
    const { records, charged } = await firstChunk(EXPORT, payer);
    expect(records).toHaveLength(EXPORT_BATCH_ROWS);
    expect(charged).toBe(units * rateMicros); // reserved in full before the first byte
    await settled(payer);
    const paid = await kept(payer);
    // The stream writes at most a batch or two ahead of its reader: the first unit, perhaps the second.
    expect(paid).toBeGreaterThanOrEqual(1);
    expect(paid).toBeLessThanOrEqual(2);
    expect(paid).toBeLessThan(units);
    expect(await balanceOf(big, payer)).toBe(before - paid * rateMicros);
    expect(await billingSummary(big.database.db, payer.accountId)).toMatchObject({ usageCount: paid, usageCostMicros: paid * rateMicros });
  });

  test('afterId continues a cut export: together the two files hold every company once, billed for what each wrote', async () => {
    const payer = await fundedAccount(big, { usd: 5 });
    const before = await balanceOf(big, payer);
    const first = await firstChunk(EXPORT, payer);
    await settled(payer);
    const lastId = first.records.at(-1).id;
    const rest = await get(big, `${EXPORT}?afterId=${lastId}`, payer.headers);
    expect(rest.status).toBe(200);
    const remaining = ndjsonOf(await rest.text());
    expect(micros(rest.headers.get('x-request-cost-usd'))).toBe(Math.ceil(remaining.length / ROWS_PER_UNIT) * rateMicros);
    const ids = [...first.records, ...remaining].map((r) => r.id);
    expect(ids).toHaveLength(rows);
    expect(new Set(ids).size).toBe(rows);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    await settled(payer);
    const spent = before - (await balanceOf(big, payer));
    expect(spent).toBe((await kept(payer)) * rateMicros);
    // Cut once, the whole file cost at most one unit more than reading it in one go.
    expect(spent).toBeLessThanOrEqual((Math.ceil(rows / ROWS_PER_UNIT) + 1) * rateMicros);
  });

  test('a reader that stalls past UNIT_LEASE_MS: the lapsed-units job refunds what was not written, and the file ends with an error', async () => {
    const payer = await fundedAccount(big, { usd: 5 });
    const before = await balanceOf(big, payer);
    const res = await rawGet(EXPORT, payer.headers);
    const reader = res.body!.getReader();
    let received = ndjsonOf(new TextDecoder().decode((await reader.read()).value)).length;
    expect(await provisional(payer)).toBeGreaterThan(0); // the stream is waiting for its reader, units unwritten
    // The reader stalls until every unwritten unit has lapsed (the lease counts from the stream's last write).
    for (const deadline = Date.now() + 10_000; ; await Bun.sleep(50)) {
      const [row] = await big.database.db.execute(sql`select bool_and(provisional_until < now()) as lapsed from usage_records where account_id = ${payer.accountId} and provisional_until is not null`).then(resultRows<{ lapsed: boolean }>);
      if (row!.lapsed) break;
      if (Date.now() > deadline) throw new Error('the units never lapsed');
    }
    expect(await refundLapsedUnits(big.services)).toBeGreaterThan(0);
    expect(await provisional(payer)).toBe(0);
    const paid = await kept(payer);
    expect(paid).toBeLessThan(Math.ceil(rows / ROWS_PER_UNIT));
    // What was written before the stall can still be read; then the stream stops instead of writing unpaid rows.
    const ended = await (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return 'closed';
        received += ndjsonOf(new TextDecoder().decode(value)).length;
      }
    })().catch((error) => error);
    expect(ended).toBeInstanceOf(Error);
    expect(received).toBeLessThanOrEqual(paid * ROWS_PER_UNIT);
    expect(received).toBeLessThan(rows);
    await settled(payer); // the stream's own settlement finds nothing left to refund
    expect(await kept(payer)).toBe(paid);
    expect(await balanceOf(big, payer)).toBe(before - paid * rateMicros);
  });
});
