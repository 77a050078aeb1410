/**
 * /docs in a real headless Chromium (Debian's `chromium`, installed by .ci/run): Scalar's API
 * reference loads from our own server under its CSP, makes no request anywhere else, shows every
 * tag and operation of /openapi.json, and its "Try it" client reaches this server and shows the
 * answer. Outside CI the test is skipped when Chromium is not installed; in CI a missing browser fails it.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { chromiumAvailable, launchChromium } from '../harness/chromium.ts';
import { createTestApp, json, type TestApp } from '../harness/app.ts';
import { fundedAccount } from '../harness/factories.ts';

const available = chromiumAvailable;

let t: TestApp;
let server: ReturnType<typeof Bun.serve>;
let browser: Browser;
/** The API requests that reached the server (not the page and its assets). */
const arrived: Array<{ path: string; apiKey: string | null }> = [];
beforeAll(async () => {
  if (!available) return;
  t = await createTestApp();
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (req) => {
      const { pathname } = new URL(req.url);
      if (pathname.startsWith('/api/')) arrived.push({ path: pathname, apiKey: req.headers.get('x-api-key') });
      return t.app.handle(req);
    },
  });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  if (!available) return;
  await browser?.close();
  server.stop(true);
  await t.close();
});

/** Opens /docs and records what the page asks for, logs and is refused. */
async function openDocs() {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const requested: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  const consoleErrors: string[] = [];
  page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text()));
  page.on('pageerror', (error) => consoleErrors.push(error.message));
  // Runs before the page's own scripts (through the browser, not the page, so the CSP allows it).
  await page.addInitScript(() => {
    const violations: string[] = [];
    (window as unknown as { cspViolations: string[] }).cspViolations = violations;
    document.addEventListener('securitypolicyviolation', (event) => violations.push(`${event.violatedDirective} ${event.blockedURI}`));
  });
  await page.goto(`${origin()}/docs`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
  const cspViolations = () => page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations);
  return { page, requested, consoleErrors, cspViolations };
}

const origin = () => `http://127.0.0.1:${server.port}`;

test.skipIf(!available)('renders every operation of the document from this server alone, with no error and no CSP violation', async () => {
  const { page, requested, consoleErrors, cspViolations } = await openDocs();
  const doc: { paths: Record<string, Record<string, { summary: string; description: string }>>; tags: Array<{ name: string }> } = await json(await t.request('/openapi.json'));

  // Every tag is a group of the sidebar, and every operation an entry of it and a section of the page, titled by its summary.
  const sidebar = await page.$$eval('[data-sidebar-id]', (items) => items.map((item) => ({ id: item.getAttribute('data-sidebar-id')!, text: item.textContent ?? '' })));
  for (const tag of doc.tags) expect(sidebar.some((item) => item.text.startsWith(tag.name))).toBe(true);
  const suffixes = t.app.routes.map((route) => `/${route.method}${route.template}`);
  // Scalar renders a section when it scrolls into view: bring each in turn, then read it.
  const sections = await page.evaluate(async (suffixes) => {
    const texts: Record<string, string> = {};
    for (const suffix of suffixes) {
      const section = [...document.querySelectorAll<HTMLElement>('[id]')].find((el) => el.id.endsWith(suffix) && el.id.includes('/tag/'));
      if (!section) continue;
      section.scrollIntoView();
      // Until it renders, however long the machine takes (the test's timeout bounds it).
      while (section.dataset.placeholder === 'true') await new Promise(requestAnimationFrame);
      texts[suffix] = section.innerText;
    }
    return texts;
  }, suffixes);
  const missing: string[] = [];
  for (const route of t.app.routes) {
    const operation = doc.paths[route.template]![route.method.toLowerCase()]!;
    const suffix = `/${route.method}${route.template}`;
    if (!sidebar.find((item) => item.id.endsWith(suffix))?.text.includes(operation.summary)) missing.push(`sidebar: ${route.method} ${route.template}`);
    // Its title and the start of its description, as rendered (markdown turned into text).
    const text = sections[suffix] ?? '';
    if (!text.includes(operation.summary) || !text.includes(operation.description.slice(0, 30).replace(/`/g, ''))) missing.push(`section: ${route.method} ${route.template}`);
  }
  expect(missing).toEqual([]);

  expect(requested.some((url) => url === `${origin()}/openapi.json`)).toBe(true);
  expect(requested.filter((url) => !url.startsWith(`${origin()}/`) && !url.startsWith('data:'))).toEqual([]);
  expect(consoleErrors).toEqual([]);
  expect(await cspViolations()).toEqual([]);
  await page.screenshot({ path: '/tmp/pipo-docs.png', fullPage: false });
  await page.close();
}, 120_000);

test.skipIf(!available)('“Try it” sends the request to this server, with the key typed in, and shows the answer', async () => {
  const account = await fundedAccount(t);
  const { page, requested, consoleErrors, cspViolations } = await openDocs();
  const section = page.locator('[id$="/GET/private-companies"]').first();
  await section.scrollIntoViewIfNeeded();
  await section.locator('button', { hasText: 'Test Request' }).first().click();
  const client = page.locator('[role="dialog"]').first();
  await client.getByLabel('Value').first().fill(account.apiKey);
  arrived.length = 0;
  await client.locator('button', { hasText: 'Send' }).first().click();

  // The answer as the server gave it: its status and body, shown in the client.
  await client.getByText('200 OK').first().waitFor({ timeout: 15_000 });
  await client.getByText('"companies"').first().waitFor({ timeout: 15_000 });
  // It reached this server (not a proxy), with the key, and was billed to the account.
  expect(arrived).toEqual([{ path: '/api/private-companies', apiKey: account.apiKey }]);
  const usage = await json(await t.request('/api/usage', { headers: account.headers }));
  expect(usage.records.map((r: { path: string }) => r.path)).toContain('/api/private-companies');

  expect(requested.filter((url) => !url.startsWith(`${origin()}/`) && !url.startsWith('data:'))).toEqual([]);
  expect(consoleErrors).toEqual([]);
  expect(await cspViolations()).toEqual([]);
  await page.close();
}, 120_000);
