/**
 * /docs in a real headless Chromium (Debian's `chromium`, installed by .ci/run): the page loads
 * from our own server, makes no request anywhere else, and shows every route group and route.
 * Outside CI the test is skipped when Chromium is not installed; in CI a missing browser fails it.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { chromiumAvailable, launchChromium } from './harness/chromium.ts';
import { createTestApp, type TestApp } from './harness/app.ts';

const available = chromiumAvailable;

let t: TestApp;
let server: ReturnType<typeof Bun.serve>;
let browser: Browser;
beforeAll(async () => {
  if (!available) return;
  t = await createTestApp();
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (req) => t.app.handle(req) });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  if (!available) return;
  await browser?.close();
  server.stop(true);
  await t.close();
});

test.skipIf(!available)('renders every route group offline, loading nothing from elsewhere', async () => {
  const page = await browser.newPage();
  const requested: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  const consoleErrors: string[] = [];
  page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text()));

  const origin = `http://127.0.0.1:${server.port}`;
  await page.goto(`${origin}/docs`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 15_000 });

  const groups = await page.$$eval('.tag-group', (nodes) => nodes.map((n) => n.getAttribute('data-tag')));
  const documentedTags = [...new Set(t.app.routes.flatMap((r) => r.meta.openapi?.tags ?? []))];
  expect(groups.sort()).toEqual(documentedTags.sort());
  const operations = await page.$$eval('.op h3', (nodes) => nodes.map((n) => n.textContent ?? ''));
  for (const route of t.app.routes) expect(operations.some((text) => text.includes(`${route.method}/api${route.template}`))).toBe(true);

  for (const url of requested) expect(url.startsWith(origin)).toBe(true);
  expect(requested.some((u) => u.endsWith('/openapi.json'))).toBe(true);
  expect(consoleErrors).toEqual([]);

  await page.screenshot({ path: '/tmp/pipo-docs.png', fullPage: false });
  await page.close();
}, 60_000);

test.skipIf(!available)('“Try it” sends a request and shows the answer with its headers', async () => {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${server.port}/docs`);
  await page.waitForSelector('body[data-ready="true"]');
  const card = page.locator('#pricing-get');
  await card.locator('summary', { hasText: 'Try it' }).click();
  await card.locator('button', { hasText: 'Send request' }).click();
  await page.waitForFunction(() => /^200 /.test(document.querySelector('#pricing-get .try-output')?.textContent ?? ''), null, { timeout: 10_000 });
  const text = await card.locator('.try-output').textContent();
  expect(text).toContain('costPerRequestUsd');
  expect(text).toContain('x-request-id');
  await page.close();
}, 60_000);
