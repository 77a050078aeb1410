/**
 * README.md's "A five-minute tour", pasted as it is: its ```sh block, read from the README at run
 * time, runs in bash in the repository with PORT=3901 — `npm start &` (the dashboard build, then the
 * server), a key, a credit, a billed call, venue credentials, a quote, a buy, the positions and five
 * seconds of the live stream — followed by docs/trading.md's resolution example (an operator resolves
 * an event the seeds leave open, with the tour's DASH). Each step's answer is checked from what it
 * prints. Like a shell it was pasted into, the run goes on past a failing command; the ERR trap records
 * each one, and the only one allowed is the stream's curl ending at its --max-time (exit 28).
 *
 * The environment is a fresh clone's: PATH and HOME, and no NODE_ENV (npm start sets production), so
 * the paper venue's prices move as they do by default (the buy's maxAveragePrice must hold at any
 * hour); besides, a fresh DATA_DIR so ./.data is not touched, the suite's company sample
 * (SEED_COMPANIES), no background history fill (HISTORY_FILL_INTERVAL_MS=0: time), and LOG_LEVEL=warn
 * so the server's request logs do not interleave with the answers. A second test quotes the tour's
 * buy at every half hour of a day, at the default price drift: its maxAveragePrice holds at any hour. The server is the process group of the bash run: it is stopped
 * (SIGTERM, then SIGKILL) whatever happens, and port 3901 is free again afterwards.
 */
import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../server/config.ts';
import { createTestApp } from '../harness/app.ts';
import { fundedAccount } from '../harness/factories.ts';

const root = new URL('../..', import.meta.url).pathname;
const PORT = 3901;
const dataDir = mkdtempSync(join(tmpdir(), 'readme-tour-'));
let group: number | undefined;

/** The first ```sh block of the section `heading` of a markdown file (the block's text as written). */
function shBlock(file: string, heading: string): string {
  const text = readFileSync(join(root, file), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${file} has no heading "${heading}"`);
  const end = text.indexOf('\n## ', start + heading.length);
  const open = text.indexOf('\n```sh\n', start);
  if (open < 0 || (end >= 0 && open > end)) throw new Error(`${file}, "${heading}": no sh block in the section`);
  const close = text.indexOf('\n```\n', open + 1);
  return text.slice(open + '\n```sh\n'.length, close + 1);
}

/** Every top-level JSON object in a text where answers follow each other without newlines (`{…}{…}`). */
function jsonObjects(text: string): any[] {
  const found: any[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '{') continue;
    let depth = 0;
    let inString = false;
    for (let j = i; j < text.length; j++) {
      const c = text[j];
      if (inString) {
        if (c === '\\') j++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) {
        try {
          found.push(JSON.parse(text.slice(i, j + 1)));
          i = j;
        } catch {}
        break;
      }
    }
  }
  return found;
}

/** Whether anything still listens on the port (the server binds every interface). */
function portTaken(port: number): boolean {
  try {
    Bun.listen({ hostname: '0.0.0.0', port, socket: { data() {} } }).stop(true);
    return false;
  } catch {
    return true;
  }
}

const groupAlive = (pgid: number) => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Stops every process of the run's group (bash, npm, the server): SIGTERM, then SIGKILL after 20 s. */
async function stopGroup(pgid: number): Promise<void> {
  if (!groupAlive(pgid)) return;
  process.kill(-pgid, 'SIGTERM');
  const deadline = Date.now() + 20_000;
  while (groupAlive(pgid) && Date.now() < deadline) await Bun.sleep(100);
  if (groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
  while (groupAlive(pgid)) await Bun.sleep(50);
}

afterAll(async () => {
  if (group !== undefined) await stopGroup(group);
  rmSync(dataDir, { recursive: true, force: true });
});

test("README's tour and docs/trading.md's resolution, pasted as they are, work end to end on port 3901", async () => {
  expect(portTaken(PORT), `port ${PORT} is taken: the tour would talk to another server`).toBe(false);
  const tour = shBlock('README.md', '## A five-minute tour');
  const resolution = shBlock('docs/trading.md', '## Resolution and settlement');
  const script = [
    'set -uo pipefail',
    `trap 'echo "failed: status $? at: $BASH_COMMAND" >&2' ERR`,
    tour,
    'printf "\\ntour-key=%s\\n" "$KEY"',
    resolution,
    'echo',
  ].join('\n');

  const env: Record<string, string> = {
    PATH: process.env.PATH!,
    HOME: process.env.HOME ?? '/tmp',
    PORT: String(PORT),
    DATA_DIR: dataDir,
    HISTORY_FILL_INTERVAL_MS: '0',
    LOG_LEVEL: 'warn',
  };
  if (process.env.SEED_COMPANIES) env.SEED_COMPANIES = process.env.SEED_COMPANIES;
  const child = Bun.spawn(['bash', '-c', script], { cwd: root, env, detached: true, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
  group = child.pid;
  // Detached (its own process group, so it can be stopped whole): not left behind if the runner itself exits early.
  process.once('exit', () => groupAlive(child.pid) && process.kill(-child.pid, 'SIGKILL'));
  // The server started with `&` keeps the pipes open after bash ends: read them as they come.
  const stdout = new Response(child.stdout).text();
  const stderr = new Response(child.stderr).text();
  const timer = setTimeout(() => stopGroup(child.pid), 150_000);
  const exitCode = await child.exited;
  clearTimeout(timer);
  await stopGroup(child.pid);
  const [out, err] = await Promise.all([stdout, stderr]);
  const context = `exit ${exitCode}\nstdout:\n${out.slice(-6000)}\nstderr:\n${err.slice(-3000)}`;

  // Only the stream's curl failed, ending at its --max-time; everything after it ran.
  const failures = err.split('\n').filter((line) => line.startsWith('failed: '));
  expect(failures, context).toEqual([expect.stringMatching(/^failed: status 28 at: curl -sN --max-time 5 /)]);
  expect(exitCode, context).toBe(0);

  const answers = jsonObjects(out);
  const one = (what: string, predicate: (o: any) => boolean) => {
    const matching = answers.filter(predicate);
    expect(matching.length, `${what}: ${context}`).toBe(1);
    return matching[0];
  };
  // 1. A key, shown once (the block keeps it in $KEY), and the credit.
  expect(out, context).toMatch(/\ntour-key=pipo_live_[1-9A-HJ-NP-Za-km-z]{40,46}\n/);
  expect(one('the credit', (o) => 'credited' in o)).toEqual({ accountId: 'acme', balanceUsd: 5, credited: true });
  // 2. The billed call: 200, its price in X-Request-Cost-USD.
  expect(out, context).toMatch(/HTTP\/1\.1 200 OK\r?\n/);
  expect(out, context).toMatch(/\nx-request-cost-usd: 0\.002\r?\n/i);
  expect(one('the billing answer', (o) => 'costPerRequestUsd' in o)).toMatchObject({ costPerRequestUsd: 0.002, usageCount: 1, balanceUsd: 4.998 });
  // 3. The paper trade: credentials, the quote, the buy (with its position), the positions listing it.
  expect(one('the credentials', (o) => 'success' in o)).toEqual({ success: true, message: 'Venue credentials stored' });
  const maxAveragePrice = Number(/"maxAveragePrice":([\d.]+)/.exec(tour)![1]);
  const quote = one('the quote', (o) => 'totalCost' in o && !('positionId' in o));
  expect(quote).toMatchObject({ eventId: 'openai-ipo', side: 'LONG', requestedAmount: 100 });
  expect(quote.totalCost).toBeLessThanOrEqual(100);
  expect(quote.averagePrice).toBeLessThanOrEqual(maxAveragePrice);
  const bought = one('the buy', (o) => 'positionId' in o);
  expect(bought).toMatchObject({ positionId: expect.stringMatching(/^pos_/), eventId: 'openai-ipo', side: 'LONG', status: 'open', requestedAmount: 100 });
  expect(bought.totalCost).toBeLessThanOrEqual(100);
  expect(bought.averagePrice).toBeLessThanOrEqual(maxAveragePrice);
  expect(bought.orders.every((order: any) => order.status === 'MATCHED'), context).toBe(true);
  const listed = one('the positions', (o) => Array.isArray(o.positions));
  expect(listed.positions.map((p: any) => [p.id, p.status])).toEqual([[bought.positionId, 'open']]);
  // 4. The stream: its opening comment, then a data frame of the event.
  expect(out, context).toContain(': connected\nretry: 3000\n');
  const frame = /\ndata: (\{.*\})\n/.exec(out);
  expect(frame, context).not.toBeNull();
  expect(JSON.parse(frame![1]!).event).toMatchObject({ slug: 'openai-ipo', status: 'open' });
  // docs/trading.md: the operator resolves anthropic-ipo (open in the seeds) to its top band.
  expect(one('the resolution', (o) => o.eventId === 'anthropic-ipo' && 'winningBandId' in o)).toMatchObject({
    status: 'resolved',
    winningBandId: 'paper-anthropic-ipo-6',
    winningBandLabel: '$600B+',
    changed: true,
  });

  // Nothing of the run is left, and the port is free again.
  expect(groupAlive(child.pid)).toBe(false);
  expect(portTaken(PORT)).toBe(false);
}, 200_000);

test("the tour's maxAveragePrice holds at any hour of the day, at the paper venue's default prices", async () => {
  const tour = shBlock('README.md', '## A five-minute tour');
  const buy = JSON.parse(/-d '(\{[^']*"maxAveragePrice"[^']*\})'/.exec(tour)![1]!);
  let clock = Date.UTC(2026, 0, 1);
  const app = await createTestApp({ PAPER_DRIFT: String(loadConfig({}).paper.drift), MARKET_DATA_TTL_MS: '0' }, { now: () => clock });
  try {
    const account = await fundedAccount(app, { usd: 100 });
    const headers = { ...account.headers, 'x-user-id': 'alice', 'content-type': 'application/json' };
    const { maxAveragePrice, ...quoted } = buy;
    const prices: number[] = [];
    for (let halfHour = 0; halfHour < 48; halfHour++, clock += 30 * 60_000) {
      const res = await app.request('/api/trading/quote', { method: 'POST', headers, body: JSON.stringify(quoted) });
      const body = await res.json();
      expect(res.status, JSON.stringify(body)).toBe(200);
      prices.push(body.averagePrice);
    }
    expect(Math.max(...prices)).toBeLessThanOrEqual(maxAveragePrice);
    expect(Math.max(...prices)).toBeGreaterThan(Math.min(...prices)); // the prices did move
  } finally {
    await app.close();
  }
}, 60_000);
