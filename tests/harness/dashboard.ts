/**
 * The customer dashboard in a real browser: the built page served by the real app on a
 * local port (the page's origin is the service's PUBLIC_URL: the sign-in message's domain and the
 * trusted Origin), Debian's Chromium, and pages with an injected EIP-1193 wallet backed by a test key.
 * Every page records what went wrong (console errors, failed requests, HTTP errors, requests to
 * another origin) so a journey can fail on any of it.
 */
import { afterAll, beforeAll, expect } from 'bun:test';
import { mkdirSync, readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page, Response as PageResponse } from 'playwright-core';
import { parseAbi, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createDepositChain } from '../../server/deposits/chain.ts';
import { startCandleRecording } from '../../server/history/recording.ts';
import { DASHBOARD_KEY, type TestApp } from './app.ts';
import { chromiumAvailable, launchChromium } from './chromium.ts';
import { startEvm, type InProcessEvm } from './in-process-evm.ts';
import { signIn as signInByApi } from './sign-in.ts';
import { createTradingApp } from './trading-venue.ts';

export const ROOT = new URL('../..', import.meta.url).pathname;
const SHOTS = process.env.SCREENSHOTS === '1' ? `${ROOT}docs/screenshots` : null;
export const USDC: Address = '0x3c499c542cef5e3811e1192ce70d8cc03d5c3359';
export const DEPOSIT_ADDRESS: Address = '0x1111111111111111111111111111111111111111';
export const erc20 = parseAbi(['function mint(address to, uint256 value)', 'function transfer(address to, uint256 value) returns (bool)']);

export interface DashboardRig {
  t: TestApp;
  evm: InProcessEvm;
  origin: string;
  browser: Browser;
  close(): Promise<void>;
}

/** Builds the dashboard, serves the app (trading on the test venue, deposits on an in-process chain), launches Chromium. */
export async function startDashboard(env: Record<string, string> = {}): Promise<DashboardRig> {
  // The build npm start and npm test run first; built again here so `bun test` alone works too.
  const build = Bun.spawnSync([process.execPath, 'scripts/build-dashboard.ts'], { cwd: ROOT, stderr: 'pipe', stdout: 'pipe' });
  if (build.exitCode !== 0) throw new Error(`dashboard build failed: ${build.stderr.toString()}`);
  let handler: (request: Request) => Response | Promise<Response> = () => new Response('starting', { status: 503 });
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => handler(request) });
  const origin = `http://127.0.0.1:${server.port}`;
  const evm = await startEvm();
  await evm.deploy('MiniErc20', [], USDC);
  const t = await createTradingApp(
    { PUBLIC_URL: origin, DEPOSIT_ADDRESS, DEPOSIT_SCAN_INTERVAL_MS: '0', ...env },
    { depositChain: createDepositChain(evm.client, { finalityDepth: 0 }) },
  );
  handler = (request) => t.app.handle(request, { clientIp: '127.0.0.1' });
  // Valuation candles as a server records them (the tests take snapshots by hand: services.recorder.record()).
  const candles = startCandleRecording(t.services);
  await t.services.recorder.record();
  const browser = await launchChromium();
  return {
    t,
    evm,
    origin,
    browser,
    async close() {
      await candles.stop();
      await browser.close();
      server.stop(true);
      await t.close();
      await evm.close();
    },
  };
}

/**
 * The rig of a dashboard browser test file, started once for the file (beforeAll) and closed after it
 * (afterAll), when Chromium is there (`chromiumAvailable`; the file's tests skip themselves otherwise).
 * Call it at the top of the file: `const rig = useDashboardRig();`. The rig it returns reads through to
 * the one started, so it is used in tests (and their helpers) like `startDashboard`'s.
 */
export function useDashboardRig(env: Record<string, string> = {}): DashboardRig {
  let started: DashboardRig | undefined;
  beforeAll(async () => {
    if (chromiumAvailable) started = await startDashboard(env);
  }, 120_000);
  afterAll(async () => {
    await started?.close();
    started = undefined;
  });
  const rig = () => {
    if (!started) throw new Error('the dashboard rig is not running: it starts in beforeAll, and only where Chromium is available');
    return started;
  };
  return {
    get t() {
      return rig().t;
    },
    get evm() {
      return rig().evm;
    },
    get origin() {
      return rig().origin;
    },
    get browser() {
      return rig().browser;
    },
    close: () => rig().close(),
  };
}

export interface WalletPage {
  page: Page;
  context: BrowserContext;
  wallet: PrivateKeyAccount;
  /** Everything that went wrong on the page; a journey ends with `expect(problems).toEqual([])`. */
  problems: string[];
}

/** A page with a wallet (EIP-1193 `window.ethereum`) backed by `wallet`'s key. */
export async function walletPage(rig: DashboardRig, width: number, wallet = privateKeyToAccount(generatePrivateKey())): Promise<WalletPage> {
  const { origin } = rig;
  const context = await rig.browser.newContext({ viewport: { width, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'], acceptDownloads: true });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  // ERR_ABORTED is the page cancelling its own request (a reload or navigation while a query was in
  // flight), not a failure of the service; every other failure (reset, refused, …) counts.
  page.on('requestfailed', (r) => r.failure()?.errorText !== 'net::ERR_ABORTED' && problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  // 207: a tRPC batch in which some call failed (the others succeeded) — a failed request all the same.
  page.on('response', (r) => (r.status() >= 400 || r.status() === 207) && problems.push(`HTTP ${r.status()}: ${r.url()}`));
  page.on('request', (r) => !r.url().startsWith(origin) && !r.url().startsWith('data:') && !r.url().startsWith('blob:') && problems.push(`another origin: ${r.url()}`));
  await page.exposeFunction('__testWalletSign', (hex: `0x${string}`) => wallet.signMessage({ message: { raw: hex } }));
  await page.addInitScript(`window.ethereum = { request: async ({ method, params }) => {
    if (method === 'eth_requestAccounts' || method === 'eth_accounts') return ['${wallet.address.toLowerCase()}'];
    if (method === 'personal_sign') return window.__testWalletSign(params[0]);
    throw Object.assign(new Error('unsupported ' + method), { code: 4200 });
  } };`);
  return { page, problems, wallet, context };
}

/**
 * A wallet whose account exists and is funded before any page signs in with it. A session's reads of
 * billed routes (the overview's billing and usage, the usage and trading pages) are billed like a
 * key's calls, so a page signed in at $0 gets 402 on them: the wallet signs in once through the API
 * (which creates its account) and the operator credits `usd` (POST /api/accounts/credits, dashboard key).
 */
export async function fundedWallet(rig: DashboardRig, usd: number): Promise<{ wallet: PrivateKeyAccount; accountId: string }> {
  const wallet = privateKeyToAccount(generatePrivateKey());
  const { accountId } = await signInByApi(rig.t, wallet);
  const res = await fetch(`${rig.origin}/api/accounts/credits`, {
    method: 'POST',
    headers: { 'x-api-key': DASHBOARD_KEY, 'x-account-id': accountId, 'content-type': 'application/json' },
    body: JSON.stringify({ amountUsd: usd, reference: `dashboard-test-${wallet.address}` }),
  });
  expect(`credit → ${res.status}`).toBe('credit → 200');
  return { wallet, accountId };
}

/**
 * Runs `step` on a page whose account has no balance: its reads of billed routes are then refused 402
 * INSUFFICIENT_BALANCE (alone: HTTP 402; in a batch with a free call: 207, every failed call of it
 * saying INSUFFICIENT_BALANCE). Exactly those answers, each read from its body (and Chromium's console
 * line for each 402), are taken out of `problems` and returned; every other problem stays.
 */
export async function expectingInsufficientBalance(w: WalletPage, step: () => Promise<void>): Promise<string[]> {
  const checks: Promise<string | null>[] = [];
  const onResponse = (r: PageResponse) => {
    if (r.status() !== 402 && r.status() !== 207) return;
    checks.push(
      r.json().then(
        (body: unknown) => {
          const failed = (Array.isArray(body) ? body : [body]).filter((call: any) => call && typeof call === 'object' && 'error' in call);
          return failed.length > 0 && failed.every((call: any) => call.error?.data?.api?.code === 'INSUFFICIENT_BALANCE') ? `HTTP ${r.status()}: ${r.url()}` : null;
        },
        () => null,
      ),
    );
  };
  w.page.on('response', onResponse);
  try {
    await step();
  } finally {
    w.page.off('response', onResponse);
  }
  const refused = (await Promise.all(checks)).filter((p): p is string => p !== null);
  const take = (predicate: (p: string) => boolean) => {
    const at = w.problems.findIndex(predicate);
    if (at >= 0) w.problems.splice(at, 1);
    return at >= 0;
  };
  for (const problem of refused) {
    expect(take((p) => p === problem)).toBe(true);
    if (problem.startsWith('HTTP 402:')) take((p) => p.startsWith('console: Failed to load resource: the server responded with a status of 402'));
  }
  return refused;
}

/** Opens /dashboard and signs in with the page's wallet; resolves on the overview. */
export async function signIn(rig: DashboardRig, page: Page): Promise<void> {
  await page.goto(`${rig.origin}/dashboard`);
  await page.getByRole('button', { name: 'Sign in with your wallet' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

/** The signed-in page's account id, as the service knows it (from the session). */
export async function accountIdOf(rig: DashboardRig, context: BrowserContext): Promise<string> {
  const cookie = (await context.cookies()).find((c) => c.name === 'pipo_session')!;
  const res = await fetch(`${rig.origin}/api/auth/session`, { headers: { cookie: `pipo_session=${cookie.value}` } });
  return ((await res.json()) as { accountId: string }).accountId;
}

/** axe-core on the page as it is: no serious or critical violation. */
export async function expectAccessible(page: Page, where: string): Promise<void> {
  await page.evaluate(readFileSync(`${ROOT}node_modules/axe-core/axe.min.js`, 'utf8'));
  const violations = await page.evaluate(async () =>
    (await (window as any).axe.run(document)).violations.map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length, target: v.nodes[0]?.target })),
  );
  expect(`${where}: ${JSON.stringify(violations.filter((v: any) => v.impact === 'serious' || v.impact === 'critical'))}`).toBe(`${where}: []`);
}

/** With SCREENSHOTS=1: the README's screenshot `docs/screenshots/<name>-<width>.png`. */
export async function shot(page: Page, name: string, width: number): Promise<void> {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: `${SHOTS}/${name}-${width}.png`, fullPage: true });
}
