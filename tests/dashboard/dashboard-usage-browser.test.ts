/**
 * The dashboard's usage page and the overview's spending figures in a real headless
 * Chromium, against the real app: a customer (funded by the operator before signing in) gets two API
 * keys and calls the API on three routes (/api, /trpc). The page's own reads are billed to the
 * session like a key's calls: each adds a usage row with no key, shown as "Signed-in session" (an
 * empty keyId in the CSV). The usage page's chart (an img with its name, the 7 days of the default
 * period gap-filled), its tables per route and per key, its records table (paged by 50, filtered by
 * key and by route) and its CSV (parsed, header included) are exactly the records GET /api/usage
 * returns — read with the session right after the page's read, less the rows written after it (each
 * such row named and checked) — and GET /api/usage/summary agrees with them; filtered by key (session
 * rows have none) or by an /api route, counts are fixed numbers. At 1280 and 360 px; an hourly grouping
 * over more than 31 days is explained in words instead of failing. The overview's requests and spend
 * today and this month and its last 24 hours are the records its reads counted; a prepaid balance
 * that lasts less than a day at the last 24 hours' rate is warned about, and a healthy one is not.
 * axe-core on every page; every journey fails on any console error, failed request or HTTP error.
 * Without a browser only the CSV helpers' checks run.
 */
import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { formatCount, formatRate, formatUsd } from '../../dashboard/format.ts';
import { csvField, fetchAllUsage, usageCsv, type UsageListInput, type UsageRecord } from '../../dashboard/usage-csv.ts';
import { DASHBOARD_KEY } from '../harness/app.ts';
import { chromiumAvailable } from '../harness/chromium.ts';
import { accountIdOf, expectAccessible, fundedWallet, shot, signIn, useDashboardRig, walletPage } from '../harness/dashboard.ts';
import { parseCsv } from '../../server/lib/csv.ts';

/** The rows of a CSV file, read by the project's own RFC 4180 reader (the company import's). */
const csvRows = (text: string) => parseCsv(text).map((record) => record.cells);

const available = chromiumAvailable;
const rig = useDashboardRig();
const DAY_MS = 86_400_000;
/** How the page names the calls made with the signed-in session (they have no key). */
const SESSION = 'Signed-in session';


// ---------------------------------------------------------------------------------------------
// Helpers: the account set up through the service's own HTTP routes.

interface Customer {
  accountId: string;
  cookie: string;
}

async function customerOf(context: BrowserContext): Promise<Customer> {
  const session = (await context.cookies()).find((c) => c.name === 'pipo_session')!;
  return { accountId: await accountIdOf(rig, context), cookie: `pipo_session=${session.value}` };
}

/** POST /api/keys as the signed-in customer (session cookie, trusted origin). */
async function createKey(customer: Customer, name: string): Promise<{ id: string; key: string }> {
  const res = await fetch(`${rig.origin}/api/keys`, {
    method: 'POST',
    headers: { cookie: customer.cookie, origin: rig.origin, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; key: string };
}

/** The operator's routes (dashboard key + x-account-id): credit the account, set its rate. */
async function operator(accountId: string, method: 'POST' | 'PUT', path: string, body: unknown): Promise<void> {
  const res = await fetch(`${rig.origin}${path}`, {
    method,
    headers: { 'x-api-key': DASHBOARD_KEY, 'x-account-id': accountId, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(`${path} → ${res.status}`).toBe(`${path} → 200`);
}

/** The account's balance as the operator reads it (free: no usage row). */
async function balanceOf(accountId: string): Promise<number> {
  const me = await fetch(`${rig.origin}/api/accounts/me`, { headers: { 'x-api-key': DASHBOARD_KEY, 'x-account-id': accountId } });
  expect(me.status).toBe(200);
  return ((await me.json()) as { balanceUsd: number }).balanceUsd;
}

/** A billed call with an API key. */
async function call(key: string, path: string, times = 1): Promise<void> {
  for (let i = 0; i < times; i++) {
    const res = await fetch(`${rig.origin}${path}`, { headers: { 'x-api-key': key } });
    expect(`${path} → ${res.status}`).toBe(`${path} → 200`);
    expect(res.headers.get('x-request-cost-usd')).not.toBeNull();
  }
}

/**
 * A GET on the REST API as the signed-in customer: the same account, billed like a key's call — its
 * usage row (no key) is written before it answers, so a read of usage counts itself.
 */
async function asCustomer<T = any>(customer: Customer, path: string): Promise<T> {
  const res = await fetch(`${rig.origin}${path}`, { headers: { cookie: customer.cookie } });
  expect(`${path} → ${res.status}`).toBe(`${path} → 200`);
  expect(res.headers.get('x-request-cost-usd')).not.toBeNull();
  return (await res.json()) as T;
}

/** GET /api/usage as the customer: every record of the filters, newest first (the first is this read's own). */
async function recordsNow(customer: Customer, filters: Record<string, string | undefined>): Promise<UsageRecord[]> {
  return (await asCustomer(customer, `/api/usage?${query({ ...filters, limit: '10000' })}`)).records as UsageRecord[];
}

const query = (params: Record<string, string | undefined>) =>
  new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined)).toString();

const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

// ---------------------------------------------------------------------------------------------
// Helpers: what a read of the page counted.

/**
 * What one read of the page may have counted, out of `all` (GET /api/usage for the same filters, read
 * with the session once the page had settled; newest first). A read is billed when it is admitted,
 * before it answers, so it counts its own row. Not counted: the `later` newest rows — reads made after
 * the page's, named by route, all with the session (no key) — and perhaps the page's `sibling`: the
 * other billed call of the same batch (the page asks usage.summary and usage.list together and the
 * service answers them in parallel; it also reads a page of records and their total, or the per-day,
 * per-route and per-key sums, in statements of their own, so each may or may not count that row).
 * The possibilities, each exact: with the sibling's row, and without it (only one without a sibling).
 */
function countedBy(all: UsageRecord[], later: string[], sibling?: string): UsageRecord[][] {
  expect(all.slice(0, later.length).map((r) => [r.path, r.keyId])).toEqual(later.map((path) => [path, null]));
  const counted = all.slice(later.length);
  if (sibling === undefined) return [counted];
  const at = counted.findIndex((r) => r.path === sibling && r.keyId === null);
  expect(at).toBeGreaterThanOrEqual(0);
  return [counted, counted.filter((_, i) => i !== at)];
}

/** What a read made alone counted (no sibling): everything but the `later` rows, `shown` records in all. */
function countedAlone(all: UsageRecord[], shown: number, later: string[]): UsageRecord[] {
  const [counted] = countedBy(all, later);
  expect(counted!.length).toBe(shown);
  return counted!;
}

const micros = (usd: number) => Math.round(usd * 1_000_000);
const costOf = (records: UsageRecord[]) => records.reduce((sum, r) => sum + micros(r.costUsd), 0) / 1_000_000;

interface Group {
  requests: number;
  costUsd: number;
}

/** Records summed as GET /api/usage/summary sums them: per day, per route and per key, in its order. */
function summarise(records: UsageRecord[]) {
  const group = <K,>(keyOf: (r: UsageRecord) => K) => {
    const groups = new Map<K, UsageRecord[]>();
    for (const r of records) groups.set(keyOf(r), [...(groups.get(keyOf(r)) ?? []), r]);
    return [...groups].map(([key, rs]) => ({ key, requests: rs.length, costUsd: costOf(rs) }));
  };
  const text = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0); // the database's C collation
  return {
    totals: { requests: records.length, costUsd: costOf(records) },
    buckets: group((r) => r.timestamp.slice(0, 10)).sort((a, b) => text(a.key, b.key)),
    // Most requests first, then by route; then by key id, the session's calls (no key) last.
    byPath: group((r) => r.path)
      .sort((a, b) => b.requests - a.requests || text(a.key, b.key))
      .map(({ key, ...g }) => ({ path: key, ...g })),
    byKey: group((r) => r.keyId)
      .sort((a, b) => b.requests - a.requests || (a.key === null ? 1 : b.key === null ? -1 : text(a.key, b.key)))
      .map(({ key, ...g }) => ({ keyId: key, keyName: null as string | null, ...g })),
  };
}

// ---------------------------------------------------------------------------------------------
// Helpers: reading the page.

/** Waits until no part of the page is loading (every card that fetches says aria-busy while it does). */
async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => document.querySelector('[aria-busy="true"]') === null);
}

/** The tRPC procedures a request of the page calls (a batch names several, comma-separated). */
const proceduresOf = (url: string) => decodeURIComponent(new URL(url).pathname).split('/trpc/')[1]?.split(',') ?? [];

/** Does `action`, then waits for the page's answers to the billed `reads` it makes, and for the page to settle. */
async function reading(page: Page, reads: string[], action: () => Promise<unknown>): Promise<void> {
  const answered = reads.map((read) => page.waitForResponse((r) => proceduresOf(r.url()).includes(read)));
  await action();
  await Promise.all(answered);
  await settled(page);
}

/** The body rows of the table under the section headed `heading`, as the text of each cell. */
async function tableRows(page: Page, heading: string, table = 'table'): Promise<string[][]> {
  const section = page.locator('section').filter({ has: page.getByRole('heading', { name: heading, exact: true }) });
  return section.locator(`${table} tbody tr`).evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => (c.textContent ?? '').trim())));
}

/** The value of a fact (dt → dd) on the page. */
async function fact(page: Page, term: string): Promise<string> {
  return (await page.locator('dt', { hasText: new RegExp(`^${term}$`) }).locator('xpath=following-sibling::dd[1]').textContent())!.trim();
}

const count = (text: string) => Number(text.replace(/,/g, ''));

/** The records' pager as shown ("1–50 of 62") and the total it names. */
async function pager(page: Page): Promise<{ text: string; total: number }> {
  const text = (await page.locator('.usage-pager-status').textContent())!.trim();
  return { text, total: count(text.split(' of ')[1]!) };
}

const HEADER = ['id', 'timestamp', 'method', 'path', 'keyId', 'costUsd', 'currency'];
const csvRowsOf = (records: UsageRecord[]) => [HEADER, ...records.map((r) => [r.id, r.timestamp, r.method, r.path, r.keyId ?? '', String(r.costUsd), r.currency])];

/** Clicks "Download CSV" and reads the file the browser saved. */
async function downloadCsv(page: Page): Promise<{ name: string; rows: string[][] }> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
  const path = await download.path();
  expect(await download.failure()).toBeNull();
  await page.getByRole('button', { name: 'Download CSV' }).waitFor(); // the button is back (not "Preparing CSV…")
  return { name: download.suggestedFilename(), rows: csvRows(readFileSync(path, 'utf8')) };
}

/** A key's name as the page shows it: the session's calls have none. */
const keyName = (keyId: string | null, names: Map<string, string>) => (keyId === null ? SESSION : (names.get(keyId) ?? keyId));

/** The records table's rows as the page shows them, from the API's records. */
const shownAs = (records: UsageRecord[], names: Map<string, string>) =>
  records.map((r) => [`${r.timestamp.slice(0, 10)} ${r.timestamp.slice(11, 19)}`, r.method, r.path, keyName(r.keyId, names), formatRate(r.costUsd)]);

/** The per-route and per-key tables as the page shows them, from a summary (the API's, or records summed). */
type Summary = ReturnType<typeof summarise>;
const summaryRows = (summary: Pick<Summary, 'byPath' | 'byKey'>, names: Map<string, string>) => ({
  byPath: summary.byPath.map((p) => [p.path, formatCount(p.requests), formatUsd(p.costUsd)]),
  byKey: summary.byKey.map((k) => [k.keyName ?? keyName(k.keyId, names), formatCount(k.requests), formatUsd(k.costUsd)]),
});

// ---------------------------------------------------------------------------------------------

test('the CSV file: header, quoting, costs as given; paging reads every record once even while new ones arrive', async () => {
  const record = (id: string, path = '/api/billing'): UsageRecord => ({ id, path, method: 'GET', keyId: 'k1', timestamp: '2026-11-20T10:15:03.120Z', costUsd: 0.000125, currency: 'USD' });
  expect(csvField('plain')).toBe('plain');
  expect(csvField('a,b')).toBe('"a,b"');
  expect(csvField('say "hi"')).toBe('"say ""hi"""');
  expect(csvField('two\nlines')).toBe('"two\nlines"');
  const text = usageCsv([record('u2', '/api/odd,"path"'), record('u1')]);
  expect(text).toBe('id,timestamp,method,path,keyId,costUsd,currency\r\nu2,2026-11-20T10:15:03.120Z,GET,"/api/odd,""path""",k1,0.000125,USD\r\nu1,2026-11-20T10:15:03.120Z,GET,/api/billing,k1,0.000125,USD\r\n');
  // A call made with the signed-in session has no key: an empty keyId.
  expect(usageCsv([{ ...record('s1'), keyId: null }])).toBe('id,timestamp,method,path,keyId,costUsd,currency\r\ns1,2026-11-20T10:15:03.120Z,GET,/api/billing,,0.000125,USD\r\n');
  expect(csvRows(text)).toEqual([HEADER, ['u2', '2026-11-20T10:15:03.120Z', 'GET', '/api/odd,"path"', 'k1', '0.000125', 'USD'], ['u1', '2026-11-20T10:15:03.120Z', 'GET', '/api/billing', 'k1', '0.000125', 'USD']]);

  // A list that is newest first and gets two new records after the first page: they push older ones down.
  let stored = Array.from({ length: 7 }, (_, i) => record(`old${7 - i}`));
  const calls: UsageListInput[] = [];
  const list = async (input: UsageListInput) => {
    calls.push(input);
    const offset = Number(input.offset ?? 0);
    const page = stored.slice(offset, offset + Number(input.limit ?? 1000));
    if (calls.length === 1) stored = [record('new2'), record('new1'), ...stored];
    return { records: page, total: stored.length };
  };
  const all = await fetchAllUsage(list, { from: '2026-11-20', keyId: 'k1' }, 3);
  expect(all.map((r) => r.id)).toEqual(['old7', 'old6', 'old5', 'old4', 'old3', 'old2', 'old1']);
  expect(calls.every((c) => c.from === '2026-11-20' && c.keyId === 'k1' && c.limit === 3)).toBe(true);
});

describe.skipIf(!available)('the usage page and the overview in Chromium', () => {
  for (const width of [1280, 360]) {
    test(`usage at ${width} px: chart, per route and per key, records filtered and paged, CSV = GET /api/usage; the page's own reads are billed as "${SESSION}"`, async () => {
      const { wallet } = await fundedWallet(rig, 10);
      const { page, problems, context } = await walletPage(rig, width, wallet);
      await signIn(rig, page);
      await settled(page); // the overview's reads (billed to the session) are done
      const customer = await customerOf(context);
      const alpha = await createKey(customer, 'alpha');
      const beta = await createKey(customer, 'beta');
      const names = new Map([
        [alpha.id, 'alpha'],
        [beta.id, 'beta'],
      ]);
      // 56 billed requests with the keys on three routes: more than one page of 50.
      await call(alpha.key, '/api/billing', 40);
      await call(beta.key, '/api/usage?limit=1', 12);
      await call(beta.key, '/api/billing', 3);
      await call(beta.key, '/trpc/billing.get');

      const opened = utcDate(Date.now());
      // The page asks the summary and the records (billed, one batch) and the keys (free).
      await reading(page, ['usage.summary', 'usage.list'], () => page.getByRole('link', { name: 'Usage', exact: true }).click());
      await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
      // The default period: the last 7 UTC days, today included.
      const from = await page.getByLabel('From', { exact: true }).inputValue();
      const to = await page.getByLabel('To', { exact: true }).inputValue();
      expect([opened, utcDate(Date.now())]).toContain(to);
      expect(Date.parse(to) - Date.parse(from)).toBe(6 * DAY_MS);
      const range = { from, to };

      // What the service holds for this period, read right after the page's reads: the keys' 56 calls,
      // and the session's — the overview's three reads at sign-in, the page's two, and this read.
      const all = await recordsNow(customer, range);
      const keyed = all.filter((r) => r.keyId !== null);
      expect(keyed.length).toBe(56);
      expect(summarise(keyed).byPath.map((p) => [p.path, p.requests])).toEqual([
        ['/api/billing', 43],
        ['/api/usage', 12],
        ['/trpc/billing.get', 1],
      ]);
      expect(summarise(keyed).byKey.map((k) => [names.get(k.keyId!), k.requests])).toEqual([
        ['alpha', 40],
        ['beta', 16],
      ]);
      expect(
        all
          .filter((r) => r.keyId === null)
          .map((r) => r.path)
          .sort(),
      ).toEqual(['/api/usage', '/trpc/billing.get', '/trpc/usage.list', '/trpc/usage.summary', '/trpc/usage.summary', '/trpc/usage.summary']);
      expect(all.every((r) => r.costUsd === 0.002)).toBe(true); // a session's read costs what a key's call costs
      // What each of the page's two reads counted: everything but this read, and perhaps the other one.
      // The chart and its numbers are one sum (per day): the page's total says which.
      const forSummary = countedBy(all, ['/api/usage'], '/trpc/usage.list');
      const forList = countedBy(all, ['/api/usage'], '/trpc/usage.summary');
      const summedTotal = count(await fact(page, 'Requests'));
      expect(forSummary.map((c) => c.length)).toContain(summedTotal);
      const summed = summarise(forSummary.find((c) => c.length === summedTotal)!);

      // The chart: a picture with its name, over all 7 days (6 of them without usage: filled with zero).
      const chart = page.getByRole('img', { name: /^Requests \(bars, left scale\) and cost in USD \(line, right scale\) per day \(UTC\)/ });
      expect(await chart.evaluate((c) => c.tagName)).toBe('CANVAS');
      expect(await chart.getAttribute('aria-label')).toBe(
        `Requests (bars, left scale) and cost in USD (line, right scale) per day (UTC), ${from} to ${to}, 7 days: ${formatCount(summed.totals.requests)} requests, ${formatUsd(summed.totals.costUsd)} in all`,
      );
      // Its numbers as a table: the one day with usage.
      await page.getByText('The numbers per day (table)').click();
      const perDay = await tableRows(page, 'Requests and cost per day');
      expect(perDay.map((r) => r.slice(1))).toEqual(summed.buckets.map((b) => [formatCount(b.requests), formatUsd(b.costUsd)]));

      // Per route and per key: the records the page's summary counted, summed. The page's own reads are
      // there, as calls with no key: "Signed-in session", last.
      expect(forSummary.map((c) => summaryRows(summarise(c), names).byPath)).toContainEqual(await tableRows(page, 'By route'));
      const byKey = await tableRows(page, 'By API key');
      expect(forSummary.map((c) => summaryRows(summarise(c), names).byKey)).toContainEqual(byKey);
      expect(byKey.map((r) => r[0])).toEqual(['alpha', 'beta', SESSION]);
      expect(byKey[0]!.slice(1)).toEqual(['40', formatUsd(0.08)]);
      expect(byKey[1]!.slice(1)).toEqual(['16', formatUsd(0.032)]);
      expect((await tableRows(page, 'By route')).map((r) => r[0])).toContain('/trpc/usage.summary');

      // The records, newest first, 50 a page: the page's own read of them among the newest, as the session's.
      const firstPage = await tableRows(page, 'Requests');
      expect(forList.map((c) => shownAs(c.slice(0, 50), names))).toContainEqual(firstPage);
      expect(forList.map((c) => `1–50 of ${formatCount(c.length)}`)).toContain((await pager(page)).text);
      expect(firstPage.slice(0, 2).some((r) => r[2] === '/trpc/usage.list' && r[3] === SESSION)).toBe(true);
      await expectAccessible(page, `usage at ${width}`);
      await shot(page, 'usage', width);

      // GET /api/usage/summary sums the same records the same way (its own read counted, the next read not).
      const summary = await asCustomer(customer, `/api/usage/summary?${query(range)}`);
      const since = countedAlone(await recordsNow(customer, range), summary.totals.requests, ['/api/usage']);
      expect(summary.totals).toEqual(summarise(since).totals);
      expect(summaryRows(summary, names)).toEqual(summaryRows(summarise(since), names));

      // The next page: one more read (alone), which counts everything before it.
      await reading(page, ['usage.list'], () => page.getByRole('button', { name: 'Next' }).click());
      const atNext = countedAlone(await recordsNow(customer, range), (await pager(page)).total, ['/api/usage']);
      expect(atNext[0]).toMatchObject({ path: '/trpc/usage.list', keyId: null }); // the page's read of page 2
      expect((await pager(page)).text).toBe(`51–${formatCount(atNext.length)} of ${formatCount(atNext.length)}`);
      expect(await tableRows(page, 'Requests')).toEqual(shownAs(atNext.slice(50), names));
      expect(await page.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);
      await reading(page, ['usage.list'], () => page.getByRole('button', { name: 'Previous' }).click());
      const atPrevious = countedAlone(await recordsNow(customer, range), (await pager(page)).total, ['/api/usage']);
      expect((await pager(page)).text).toBe(`1–50 of ${formatCount(atPrevious.length)}`);
      expect(await tableRows(page, 'Requests')).toEqual(shownAs(atPrevious.slice(0, 50), names));

      // The CSV of everything: exactly the API's records as of the export's read, in their order, header
      // first. The export's read is the newest: a session's call, its keyId empty.
      const everything = await downloadCsv(page);
      expect(everything.name).toBe(`usage-${from}-to-${to}.csv`);
      const exported = countedAlone(await recordsNow(customer, range), everything.rows.length - 1, ['/api/usage']);
      expect(everything.rows).toEqual(csvRowsOf(exported));
      expect(everything.rows[1]!.slice(3, 5)).toEqual(['/trpc/usage.list', '']);
      expect(everything.rows.filter((r) => r[4] === '').length).toBe(exported.filter((r) => r.keyId === null).length);

      // Filtered by key: the records table holds exactly beta's records (the session's have no key); the breakdowns follow.
      await page.getByLabel('API key', { exact: true }).selectOption({ label: 'beta' });
      await page.getByText('1–16 of 16', { exact: true }).waitFor();
      await settled(page);
      const betaOnly = await recordsNow(customer, { ...range, keyId: beta.id });
      expect(betaOnly.length).toBe(16);
      expect(await tableRows(page, 'Requests')).toEqual(shownAs(betaOnly, names));
      const betaSummary = await asCustomer(customer, `/api/usage/summary?${query({ ...range, keyId: beta.id })}`);
      expect(await tableRows(page, 'By route')).toEqual(summaryRows(betaSummary, names).byPath);
      expect(await tableRows(page, 'By API key')).toEqual([['beta', '16', formatUsd(betaSummary.totals.costUsd)]]);

      // And by route: beta's calls to /api/usage only.
      await page.getByLabel('Route', { exact: true }).selectOption('/api/usage');
      await page.getByText('1–12 of 12', { exact: true }).waitFor();
      await settled(page);
      const narrowed = await recordsNow(customer, { ...range, keyId: beta.id, path: '/api/usage' });
      expect(narrowed.length).toBe(12);
      expect(narrowed.every((r) => r.keyId === beta.id && r.path === '/api/usage')).toBe(true);
      expect(await tableRows(page, 'Requests')).toEqual(shownAs(narrowed, names));
      expect(await tableRows(page, 'By route')).toEqual([['/api/usage', '12', formatUsd(costOf(narrowed))]]);
      const filteredCsv = await downloadCsv(page);
      // The same filters on GET /api/usage with an API key (alpha's own call is not beta's: it is not in the answer).
      const res = await fetch(`${rig.origin}/api/usage?${query({ ...range, keyId: beta.id, path: '/api/usage', limit: '10000' })}`, { headers: { 'x-api-key': alpha.key } });
      expect(res.status).toBe(200);
      const viaKey = (await res.json()) as { records: UsageRecord[]; total: number };
      expect(viaKey.total).toBe(12);
      expect(filteredCsv.rows).toEqual(csvRowsOf(viaKey.records));
      // That call was billed to alpha: one more request to /api/usage.
      const alphaSummary = await asCustomer(customer, `/api/usage/summary?${query({ ...range, keyId: alpha.id })}`);
      expect(alphaSummary.totals.requests).toBe(41);
      expect(alphaSummary.byPath.map((p: any) => [p.path, p.requests])).toEqual([
        ['/api/billing', 40],
        ['/api/usage', 1],
      ]);

      // Only the route: every key's calls to /api/billing (the session never calls it).
      await page.getByLabel('API key', { exact: true }).selectOption({ label: 'All keys' });
      await page.getByLabel('Route', { exact: true }).selectOption('/api/billing');
      await page.getByText('1–43 of 43', { exact: true }).waitFor();
      await settled(page);
      const billingOnly = await recordsNow(customer, { ...range, path: '/api/billing' });
      expect(billingOnly.length).toBe(43);
      expect(await tableRows(page, 'Requests')).toEqual(shownAs(billingOnly, names));
      expect((await downloadCsv(page)).rows).toEqual(csvRowsOf(billingOnly));

      // By hour: the same sums per route; more than 31 days of hours is explained, not sent (no 400 in `problems`).
      await reading(page, ['usage.summary', 'usage.list'], () => page.getByLabel('Route', { exact: true }).selectOption({ label: 'All routes' }));
      await reading(page, ['usage.summary'], () => page.getByLabel('Group by', { exact: true }).selectOption('hour'));
      await page.getByRole('heading', { name: 'Requests and cost per hour' }).waitFor();
      await page.getByRole('img', { name: /per hour \(UTC\)/ }).waitFor();
      const hourly = countedAlone(await recordsNow(customer, range), count(await fact(page, 'Requests')), ['/api/usage']);
      expect(hourly[0]).toMatchObject({ path: '/trpc/usage.summary', keyId: null }); // the page's hourly read
      expect(await tableRows(page, 'By route')).toEqual(summaryRows(summarise(hourly), names).byPath);
      const longer = { from: utcDate(Date.parse(to) - 40 * DAY_MS), to };
      await reading(page, ['usage.list'], () => page.getByLabel('From', { exact: true }).fill(longer.from));
      await page.getByText('Grouping by hour covers at most 31 days, and this period has 41. Shorten the period or group by day.').first().waitFor();
      expect(await page.getByRole('img').count()).toBe(0);
      // The records do not depend on the grouping: still shown (read again for the new period).
      const longerListed = countedAlone(await recordsNow(customer, longer), (await pager(page)).total, ['/api/usage']);
      expect((await pager(page)).text).toBe(`1–50 of ${formatCount(longerListed.length)}`);
      expect(await tableRows(page, 'Requests')).toEqual(shownAs(longerListed.slice(0, 50), names));
      await reading(page, ['usage.summary'], () => page.getByLabel('Group by', { exact: true }).selectOption('day'));
      await page.getByRole('img', { name: /per day \(UTC\)/ }).waitFor();
      const daily = countedAlone(await recordsNow(customer, longer), count(await fact(page, 'Requests')), ['/api/usage']);
      expect(await tableRows(page, 'By route')).toEqual(summaryRows(summarise(daily), names).byPath);

      // Dates the wrong way round: said in words, nothing asked.
      await page.getByLabel('From', { exact: true }).fill(utcDate(Date.parse(to) + DAY_MS));
      await page.getByText('From must be on or before To.').waitFor();
      expect(await page.getByRole('heading', { name: 'By route' }).count()).toBe(0);

      expect(problems).toEqual([]);
      await context.close();
    }, 120_000);

    test(`overview at ${width} px: requests and spend today and this month and the last 24 hours are the records its reads counted; a healthy balance has no warning`, async () => {
      const { wallet, accountId } = await fundedWallet(rig, 10);
      const { page, problems, context } = await walletPage(rig, width, wallet);
      await signIn(rig, page);
      await settled(page);
      const customer = await customerOf(context);
      const key = await createKey(customer, 'main');
      await call(key.key, '/api/billing', 5);
      await call(key.key, '/api/usage?limit=1', 2);
      const before = await balanceOf(accountId);
      expect(micros(before)).toBe(micros(10) - 2000 * (3 + 7)); // the overview's three reads at sign-in, the key's seven calls
      // The overview asks the account (free), the billing and this month's usage (billed) in one batch, then
      // the last 24 hours' usage (billed).
      await reading(page, ['accounts.me', 'billing.get', 'usage.summary'], () => page.reload());
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await page.getByText('Last 24 hours', { exact: true }).waitFor();
      await settled(page);

      const all = await recordsNow(customer, { from: utcDate(Date.now()) });
      expect(all.filter((r) => r.keyId !== null).length).toBe(7);
      expect(costOf(all.filter((r) => r.keyId !== null))).toBe(0.014);
      // The last 24 hours, asked last and alone, counted everything before this read.
      expect(all[1]).toMatchObject({ path: '/trpc/usage.summary', keyId: null });
      expect(await fact(page, 'Last 24 hours')).toBe(formatUsd(costOf(all.slice(1))));
      // This month's (today's) usage counted everything but the two reads after it, and perhaps the billing read beside it.
      // (Requests and spend come from one sum, per day: the count shown says which.)
      const today = count(await fact(page, 'Requests today'));
      const possible = countedBy(all, ['/api/usage', '/trpc/usage.summary'], '/trpc/billing.get');
      expect(possible.map((c) => c.length)).toContain(today);
      const month = possible.find((c) => c.length === today)!;
      expect(month.filter((r) => r.keyId === null).length).toBeGreaterThanOrEqual(4); // three at sign-in, its own
      expect(await fact(page, 'Spent today')).toBe(formatUsd(costOf(month)));
      expect(await fact(page, 'Spent this month')).toBe(formatUsd(costOf(month)));
      // The balance: the credit less the calls before the reload, less those of the page's own batch the
      // service had admitted when it read the account (they run beside it): none, one or both.
      expect([0, 1, 2].map((n) => formatUsd((micros(before) - 2000 * n) / 1_000_000))).toContain(await fact(page, 'Balance'));
      // Billing: every read since the reload was charged: the batch's two, the last 24 hours', this one.
      expect(micros(await balanceOf(accountId))).toBe(micros(before) - 2000 * 4);
      expect(await page.getByText('Your balance runs out within a day').count()).toBe(0);
      await expectAccessible(page, `overview at ${width}`);
      await shot(page, 'overview-spending', width);
      expect(problems).toEqual([]);
      await context.close();
    }, 120_000);
  }

  test('overview: a prepaid balance that lasts less than a day at the last 24 hours\' rate is warned about, with how long it lasts', async () => {
    // $0.20 a request, the page's own reads included: three each time the overview opens.
    const { wallet, accountId } = await fundedWallet(rig, 2);
    await operator(accountId, 'PUT', '/api/accounts/rate', { costPerRequestUsd: 0.2 });
    const { page, problems, context } = await walletPage(rig, 1280, wallet);
    await signIn(rig, page);
    await page.getByText('Last 24 hours', { exact: true }).waitFor();
    await settled(page);
    // A healthy balance: $0.60 spent in the last 24 hours (the overview's reads), at least $1.60 left: no warning.
    expect(await fact(page, 'Last 24 hours')).toBe('$0.60');
    expect(await page.getByText('Your balance runs out within a day').count()).toBe(0);

    // $0.60 more with a key: $0.80 left before the reload, whose reads cost $0.60 more: $1.80 in the last
    // 24 hours, and the balance the page reads is $0.80, $0.60 or $0.40 (the reads of its batch run beside it).
    const customer = await customerOf(context);
    const key = await createKey(customer, 'busy');
    await call(key.key, '/api/billing', 3);
    expect(await balanceOf(accountId)).toBe(0.8);
    await page.reload();
    const warning = page.getByRole('status').filter({ hasText: 'Your balance runs out within a day' });
    await warning.waitFor();
    await settled(page);
    expect(await fact(page, 'Last 24 hours')).toBe('$1.80');
    const balance = await fact(page, 'Balance');
    const lasts = { '$0.80': 'about 11 hours', '$0.60': 'about 8 hours', '$0.40': 'about 5 hours' }[balance];
    expect(lasts).toBeDefined();
    expect(await warning.textContent()).toContain(`At the last 24 hours' rate of $1.80/day your balance of ${balance} lasts ${lasts}.`);
    expect(await warning.getByRole('link', { name: 'Add funds' }).getAttribute('href')).toBe('#/funds');
    expect(await balanceOf(accountId)).toBe(0.2);
    await expectAccessible(page, 'overview with the warning');
    await shot(page, 'overview-warning', 1280);

    // Funded again: the same rate is now healthy.
    await operator(accountId, 'POST', '/api/accounts/credits', { amountUsd: 50, reference: 'runout-test-2' });
    await page.reload();
    await page.getByText('Last 24 hours', { exact: true }).waitFor();
    await settled(page);
    expect(await fact(page, 'Last 24 hours')).toBe('$2.40');
    expect(await page.getByText('Your balance runs out within a day').count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  }, 120_000);
});
