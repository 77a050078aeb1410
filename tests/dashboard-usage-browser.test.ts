/**
 * The dashboard's usage page and the overview's spending figures (issue #18) in a real headless
 * Chromium, against the real app: a customer signs in, gets two API keys, funds the account and calls
 * the API on three routes (/api, /trpc). The usage page's chart (an img with its name, the 7 days of
 * the default period gap-filled), its tables per route and per key (equal to GET /api/usage/summary),
 * its records table (paged by 50, filtered by key and by route: exactly GET /api/usage's records) and
 * its CSV (parsed: exactly the records GET /api/usage returns with the same filters, header included)
 * are checked at 1280 and 360 px; an hourly grouping over more than 31 days is explained in words
 * instead of failing. The overview's requests and spend today and this month equal the summary; a
 * prepaid balance that lasts less than a day at the last 24 hours' rate is warned about, and a
 * healthy one is not. axe-core on every page; every journey fails on any console error, failed
 * request or HTTP error. Without a browser only the CSV helpers' checks run.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { formatCount, formatUsd } from '../dashboard/format.ts';
import { csvField, fetchAllUsage, usageCsv, type UsageListInput, type UsageRecord } from '../dashboard/usage-csv.ts';
import { DASHBOARD_KEY } from './harness/app.ts';
import { chromiumAvailable } from './harness/chromium.ts';
import { accountIdOf, expectAccessible, shot, signIn, startDashboard, walletPage, type DashboardRig } from './harness/dashboard.ts';
import { parseCsv } from '../server/lib/csv.ts';

/** The rows of a CSV file, read by the project's own RFC 4180 reader (the company import's). */
const csvRows = (text: string) => parseCsv(text).map((record) => record.cells);

const available = chromiumAvailable;
let rig: DashboardRig;
let origin: string;
const DAY_MS = 86_400_000;

beforeAll(async () => {
  if (!available) return;
  rig = await startDashboard();
  origin = rig.origin;
}, 120_000);
afterAll(async () => {
  if (available) await rig?.close();
});

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
  const res = await fetch(`${origin}/api/keys`, {
    method: 'POST',
    headers: { cookie: customer.cookie, origin, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; key: string };
}

/** The operator's routes (dashboard key + x-account-id): credit the account, set its rate. */
async function operator(customer: Customer, method: 'POST' | 'PUT', path: string, body: unknown): Promise<void> {
  const res = await fetch(`${origin}${path}`, {
    method,
    headers: { 'x-api-key': DASHBOARD_KEY, 'x-account-id': customer.accountId, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(`${path} → ${res.status}`).toBe(`${path} → 200`);
}

/** A billed call with an API key. */
async function call(key: string, path: string, times = 1): Promise<void> {
  for (let i = 0; i < times; i++) {
    const res = await fetch(`${origin}${path}`, { headers: { 'x-api-key': key } });
    expect(`${path} → ${res.status}`).toBe(`${path} → 200`);
    expect(res.headers.get('x-request-cost-usd')).not.toBeNull();
  }
}

/** A GET on the REST API as the signed-in customer: the same account, never billed (adds no usage row). */
async function asCustomer<T = any>(customer: Customer, path: string): Promise<T> {
  const res = await fetch(`${origin}${path}`, { headers: { cookie: customer.cookie } });
  expect(`${path} → ${res.status}`).toBe(`${path} → 200`);
  return (await res.json()) as T;
}

const query = (params: Record<string, string | undefined>) =>
  new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined)).toString();

const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

// ---------------------------------------------------------------------------------------------
// Helpers: reading the page.

/** Waits until no part of the page is loading (every card that fetches says aria-busy while it does). */
async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => document.querySelector('[aria-busy="true"]') === null);
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


const HEADER = ['id', 'timestamp', 'method', 'path', 'keyId', 'costUsd', 'currency'];
const csvRowsOf = (records: UsageRecord[]) => [HEADER, ...records.map((r) => [r.id, r.timestamp, r.method, r.path, r.keyId, String(r.costUsd), r.currency])];

/** Clicks "Download CSV" and reads the file the browser saved. */
async function downloadCsv(page: Page): Promise<{ name: string; rows: string[][] }> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
  const path = await download.path();
  expect(await download.failure()).toBeNull();
  await page.getByRole('button', { name: 'Download CSV' }).waitFor(); // the button is back (not "Preparing CSV…")
  return { name: download.suggestedFilename(), rows: csvRows(readFileSync(path, 'utf8')) };
}

/** The records table's rows as the page shows them, from the API's records. */
const shownAs = (records: UsageRecord[], names: Map<string, string>) =>
  records.map((r) => [`${r.timestamp.slice(0, 10)} ${r.timestamp.slice(11, 19)}`, r.method, r.path, names.get(r.keyId) ?? r.keyId, formatUsd(r.costUsd)]);

const summaryRows = (summary: any) => ({
  byPath: summary.byPath.map((p: any) => [p.path, formatCount(p.requests), formatUsd(p.costUsd)]),
  byKey: summary.byKey.map((k: any) => [k.keyName, formatCount(k.requests), formatUsd(k.costUsd)]),
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
    test(`usage at ${width} px: chart, per route and per key, records filtered and paged, CSV = GET /api/usage`, async () => {
      const { page, problems, context } = await walletPage(rig, width);
      await signIn(rig, page);
      const customer = await customerOf(context);
      const alpha = await createKey(customer, 'alpha');
      const beta = await createKey(customer, 'beta');
      const names = new Map([
        [alpha.id, 'alpha'],
        [beta.id, 'beta'],
      ]);
      await operator(customer, 'POST', '/api/accounts/credits', { amountUsd: 10, reference: `usage-test-${width}` });
      // 56 billed requests on three routes: more than one page of 50.
      await call(alpha.key, '/api/billing', 40);
      await call(beta.key, '/api/usage?limit=1', 12);
      await call(beta.key, '/api/billing', 3);
      await call(beta.key, '/trpc/billing.get');

      const opened = utcDate(Date.now());
      await page.getByRole('link', { name: 'Usage', exact: true }).click();
      await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
      // The default period: the last 7 UTC days, today included.
      const from = await page.getByLabel('From', { exact: true }).inputValue();
      const to = await page.getByLabel('To', { exact: true }).inputValue();
      expect([opened, utcDate(Date.now())]).toContain(to);
      expect(Date.parse(to) - Date.parse(from)).toBe(6 * DAY_MS);
      const range = { from, to };

      // What the service says about this period.
      const summary = await asCustomer(customer, `/api/usage/summary?${query(range)}`);
      expect(summary.totals.requests).toBe(56);
      expect(summary.byPath.map((p: any) => [p.path, p.requests])).toEqual([
        ['/api/billing', 43],
        ['/api/usage', 12],
        ['/trpc/billing.get', 1],
      ]);
      expect(summary.byKey.map((k: any) => [k.keyName, k.requests])).toEqual([
        ['alpha', 40],
        ['beta', 16],
      ]);

      // The chart: a picture with its name, over all 7 days (6 of them without usage: filled with zero).
      await page.getByText('1–50 of 56', { exact: true }).waitFor();
      await settled(page);
      const chart = page.getByRole('img', { name: /^Requests \(bars, left scale\) and cost in USD \(line, right scale\) per day \(UTC\)/ });
      expect(await chart.evaluate((c) => c.tagName)).toBe('CANVAS');
      expect(await chart.getAttribute('aria-label')).toBe(
        `Requests (bars, left scale) and cost in USD (line, right scale) per day (UTC), ${from} to ${to}, 7 days: 56 requests, ${formatUsd(summary.totals.costUsd)} in all`,
      );
      // Its numbers as a table: the one day with usage.
      await page.getByText('The numbers per day (table)').click();
      const perDay = await tableRows(page, 'Requests and cost per day');
      expect(perDay.map((r) => r.slice(1))).toEqual(summary.buckets.map((b: any) => [formatCount(b.requests), formatUsd(b.costUsd)]));

      // Per route and per key: the summary's numbers.
      expect(await tableRows(page, 'By route')).toEqual(summaryRows(summary).byPath);
      expect(await tableRows(page, 'By API key')).toEqual(summaryRows(summary).byKey);

      // The records, newest first, 50 a page.
      const all = (await asCustomer(customer, `/api/usage?${query({ ...range, limit: '10000' })}`)).records as UsageRecord[];
      expect(all.length).toBe(56);
      expect(await tableRows(page, 'Requests')).toEqual(shownAs(all.slice(0, 50), names));
      await expectAccessible(page, `usage at ${width}`);
      await shot(page, 'usage', width);
      await page.getByRole('button', { name: 'Next' }).click();
      await page.getByText('51–56 of 56', { exact: true }).waitFor();
      expect(await tableRows(page, 'Requests')).toEqual(shownAs(all.slice(50), names));
      expect(await page.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);
      await page.getByRole('button', { name: 'Previous' }).click();
      await page.getByText('1–50 of 56', { exact: true }).waitFor();

      // The CSV of everything: exactly the API's records, in its order, header first.
      const everything = await downloadCsv(page);
      expect(everything.name).toBe(`usage-${from}-to-${to}.csv`);
      expect(everything.rows).toEqual(csvRowsOf(all));

      // Filtered by key: the records table holds exactly beta's records; the breakdowns follow.
      await page.getByLabel('API key', { exact: true }).selectOption({ label: 'beta' });
      await page.getByText('1–16 of 16', { exact: true }).waitFor();
      await settled(page);
      const betaOnly = (await asCustomer(customer, `/api/usage?${query({ ...range, keyId: beta.id, limit: '10000' })}`)).records as UsageRecord[];
      expect(betaOnly.length).toBe(16);
      expect(await tableRows(page, 'Requests')).toEqual(shownAs(betaOnly, names));
      const betaSummary = await asCustomer(customer, `/api/usage/summary?${query({ ...range, keyId: beta.id })}`);
      expect(await tableRows(page, 'By route')).toEqual(summaryRows(betaSummary).byPath);
      expect(await tableRows(page, 'By API key')).toEqual([['beta', '16', formatUsd(betaSummary.totals.costUsd)]]);

      // And by route: beta's calls to /api/usage only.
      await page.getByLabel('Route', { exact: true }).selectOption('/api/usage');
      await page.getByText('1–12 of 12', { exact: true }).waitFor();
      await settled(page);
      const narrowed = (await asCustomer(customer, `/api/usage?${query({ ...range, keyId: beta.id, path: '/api/usage', limit: '10000' })}`)).records as UsageRecord[];
      expect(narrowed.length).toBe(12);
      expect(narrowed.every((r) => r.keyId === beta.id && r.path === '/api/usage')).toBe(true);
      expect(await tableRows(page, 'Requests')).toEqual(shownAs(narrowed, names));
      expect(await tableRows(page, 'By route')).toEqual([['/api/usage', '12', formatUsd(narrowed.reduce((s, r) => s + r.costUsd, 0))]]);
      const filteredCsv = await downloadCsv(page);
      // The same filters on GET /api/usage with an API key (alpha's own call is not beta's: it is not in the answer).
      const res = await fetch(`${origin}/api/usage?${query({ ...range, keyId: beta.id, path: '/api/usage', limit: '10000' })}`, { headers: { 'x-api-key': alpha.key } });
      expect(res.status).toBe(200);
      const viaKey = (await res.json()) as { records: UsageRecord[]; total: number };
      expect(viaKey.total).toBe(12);
      expect(filteredCsv.rows).toEqual(csvRowsOf(viaKey.records));
      // That call was billed to alpha: one more request to /api/usage, which the page shows from now on.
      const after = await asCustomer(customer, `/api/usage/summary?${query(range)}`);
      expect(after.totals.requests).toBe(57);
      expect(after.byPath.find((p: any) => p.path === '/api/usage').requests).toBe(13);

      // Only the route: every key's calls to /api/billing.
      await page.getByLabel('API key', { exact: true }).selectOption({ label: 'All keys' });
      await page.getByLabel('Route', { exact: true }).selectOption('/api/billing');
      await page.getByText('1–43 of 43', { exact: true }).waitFor();
      await settled(page);
      const billingOnly = (await asCustomer(customer, `/api/usage?${query({ ...range, path: '/api/billing', limit: '10000' })}`)).records as UsageRecord[];
      expect(await tableRows(page, 'Requests')).toEqual(shownAs(billingOnly, names));
      expect((await downloadCsv(page)).rows).toEqual(csvRowsOf(billingOnly));

      // By hour: the same numbers per route; more than 31 days of hours is explained, not sent (no 400 in `problems`).
      await page.getByLabel('Route', { exact: true }).selectOption({ label: 'All routes' });
      await page.getByLabel('Group by', { exact: true }).selectOption('hour');
      await page.getByRole('heading', { name: 'Requests and cost per hour' }).waitFor();
      await settled(page);
      await page.getByRole('img', { name: /per hour \(UTC\)/ }).waitFor();
      expect(await tableRows(page, 'By route')).toEqual(summaryRows(after).byPath);
      await page.getByLabel('From', { exact: true }).fill(utcDate(Date.parse(to) - 40 * DAY_MS));
      await page.getByText('Grouping by hour covers at most 31 days, and this period has 41. Shorten the period or group by day.').first().waitFor();
      expect(await page.getByRole('img').count()).toBe(0);
      // The records do not depend on the grouping: still shown.
      await page.getByText('1–50 of 57', { exact: true }).waitFor();
      await page.getByLabel('Group by', { exact: true }).selectOption('day');
      await page.getByRole('img', { name: /per day \(UTC\)/ }).waitFor();
      await settled(page);
      expect(await tableRows(page, 'By route')).toEqual(summaryRows(after).byPath);

      // Dates the wrong way round: said in words, nothing asked.
      await page.getByLabel('From', { exact: true }).fill(utcDate(Date.parse(to) + DAY_MS));
      await page.getByText('From must be on or before To.').waitFor();
      expect(await page.getByRole('heading', { name: 'By route' }).count()).toBe(0);

      expect(problems).toEqual([]);
      await context.close();
    }, 120_000);

    test(`overview at ${width} px: requests and spend today and this month equal the summary; a healthy balance has no warning`, async () => {
      const { page, problems, context } = await walletPage(rig, width);
      await signIn(rig, page);
      const customer = await customerOf(context);
      const key = await createKey(customer, 'main');
      await operator(customer, 'POST', '/api/accounts/credits', { amountUsd: 10, reference: `overview-test-${width}` });
      await call(key.key, '/api/billing', 5);
      await call(key.key, '/api/usage?limit=1', 2);
      await page.reload();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await page.getByText('Last 24 hours', { exact: true }).waitFor();
      await settled(page);

      const now = Date.now();
      const today = await asCustomer(customer, `/api/usage/summary?${query({ from: utcDate(now) })}`);
      const month = await asCustomer(customer, `/api/usage/summary?${query({ from: `${utcDate(now).slice(0, 8)}01` })}`);
      expect(today.totals.requests).toBe(7);
      expect(await fact(page, 'Requests today')).toBe(formatCount(today.totals.requests));
      expect(await fact(page, 'Spent today')).toBe(formatUsd(today.totals.costUsd));
      expect(await fact(page, 'Spent this month')).toBe(formatUsd(month.totals.costUsd));
      expect(await fact(page, 'Last 24 hours')).toBe(formatUsd(today.totals.costUsd));
      expect(formatUsd(today.totals.costUsd)).toBe('$0.014');
      // The existing figures stay: the balance of the credit minus the calls.
      expect(await fact(page, 'Balance')).toBe(formatUsd(10 - 0.014));
      expect(await page.getByText('Your balance runs out within a day').count()).toBe(0);
      await expectAccessible(page, `overview at ${width}`);
      await shot(page, 'overview-spending', width);
      expect(problems).toEqual([]);
      await context.close();
    }, 120_000);
  }

  test('overview: a prepaid balance that lasts less than a day at the last 24 hours\' rate is warned about, with how long it lasts', async () => {
    const { page, problems, context } = await walletPage(rig, 1280);
    await signIn(rig, page);
    const customer = await customerOf(context);
    const key = await createKey(customer, 'busy');
    await operator(customer, 'POST', '/api/accounts/credits', { amountUsd: 1, reference: 'runout-test' });
    await operator(customer, 'PUT', '/api/accounts/rate', { costPerRequestUsd: 0.2 });
    // Before any spending: no warning (no rate to extrapolate).
    await page.reload();
    await page.getByText('Last 24 hours', { exact: true }).waitFor();
    await settled(page);
    expect(await page.getByText('Your balance runs out within a day').count()).toBe(0);

    // $0.80 spent in the last 24 hours, $0.20 left: about 6 hours at that rate.
    await call(key.key, '/api/billing', 4);
    const me = await fetch(`${origin}/api/accounts/me`, { headers: { 'x-api-key': DASHBOARD_KEY, 'x-account-id': customer.accountId } });
    expect(((await me.json()) as { balanceUsd: number }).balanceUsd).toBe(0.2);
    await page.reload();
    const warning = page.getByRole('status').filter({ hasText: 'Your balance runs out within a day' });
    await warning.waitFor();
    expect(await warning.textContent()).toContain("At the last 24 hours' rate of $0.80/day your balance of $0.20 lasts about 6 hours.");
    expect(await warning.getByRole('link', { name: 'Add funds' }).getAttribute('href')).toBe('#/funds');
    await expectAccessible(page, 'overview with the warning');
    await shot(page, 'overview-warning', 1280);

    // One more request: the balance no longer covers one, and the warning says so.
    await call(key.key, '/api/billing');
    await page.reload();
    await page.getByText('Your balance of $0.00 no longer covers a request ($0.20 each)').waitFor();

    // Funded again: the same rate is now healthy.
    await operator(customer, 'POST', '/api/accounts/credits', { amountUsd: 50, reference: 'runout-test-2' });
    await page.reload();
    await page.getByText('Last 24 hours', { exact: true }).waitFor();
    await settled(page);
    expect(await fact(page, 'Last 24 hours')).toBe('$1.00');
    expect(await page.getByText('Your balance runs out within a day').count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  }, 120_000);
});
