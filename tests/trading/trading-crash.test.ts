/**
 * A crash between placing orders and recording their fills: a child process runs the real
 * app and is killed (SIGKILL) right after the venue filled an order. After a restart on the same
 * database, orders/sync and positions/sync bring our records in line with the venue's ledger.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Database } from '../../db/client.ts';
import { seedDatabase } from '../../seeds/index.ts';
import { createLogger } from '../../server/lib/logger.ts';
import type { TestApp } from '../harness/app.ts';
import { engine, freshDatabase, type TestDatabase } from '../harness/databases.ts';
import { eq, sql } from 'drizzle-orm';
import { accounts, credits, usageRecords } from '../../db/schema.ts';
import { TEST_ENV } from '../harness/app.ts';
import { startServer } from '../harness/server-process.ts';
import { api, buy, expectBooksAgree, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp, standinOf, TEST_VENUE } from '../harness/trading-venue.ts';
import type { ClobStandin } from '../harness/clob-standin.ts';

const TIMEOUT_MS = 300;
let dataDir: string | undefined;
let database: TestDatabase | Database;
let t: TestApp;
let who: Trader;
/** On the polymarket venue, the CLOB stand-in outlives the restarts (it is the venue). */
let standin: ClobStandin | undefined;

/** PostgreSQL: a fresh database. PGlite: a data directory on disk, which the child opens after us. */
async function openShared(): Promise<TestDatabase | Database> {
  if (engine === 'postgres') return freshDatabase();
  const db = await openDatabase({ kind: 'pglite', dataDir: dataDir! });
  return db;
}

async function restart() {
  database = await openShared();
  t = await createTradingApp({ VENUE_TIMEOUT_MS: String(TIMEOUT_MS) }, { database, standin, keepStandin: true });
  standin ??= standinOf(t);
}

async function stopForChild() {
  // PGlite allows one process per data directory: hand it over to the child.
  if (engine === 'pglite') {
    await t.close();
    await database.close();
  }
}

beforeAll(async () => {
  if (engine === 'pglite') {
    dataDir = mkdtempSync(join(tmpdir(), 'pipo-crash-'));
    const db = await openDatabase({ kind: 'pglite', dataDir });
    await db.migrate();
    await seedDatabase(db.db, createLogger('silent'));
    await db.close();
  }
  await restart();
  who = await trader(t);
  await api(t, who, 'PUT', '/api/trading/settings', { walletAddress: who.userId });
}, 60_000);

afterAll(async () => {
  await t.close();
  await database.close();
  standin?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** An open event whose every band has a bid, so whatever a crash leaves unsold can be sold later. */
async function eventWithBidsEverywhere(): Promise<string> {
  const events = (await api(t, who, 'GET', '/api/trading/events')).body.events.filter((e: any) => e.status === 'open');
  for (const e of events) {
    const prices = (await api(t, who, 'GET', `/api/trading/valuation?eventSlug=${e.id}`)).body.slippage.bandPrices;
    if (prices.every((p: { bid: number }) => p.bid > 0)) return e.id;
  }
  throw new Error('no open event with bids on every band');
}

async function crashDuring(path: string, body: unknown, crashAfter: number) {
  await stopForChild();
  const child = Bun.spawn([process.execPath, 'tests/harness/crash-child.ts'], {
    cwd: new URL('../..', import.meta.url).pathname,
    env: {
      PATH: process.env.PATH!,
      HOME: process.env.HOME ?? '/tmp',
      NODE_ENV: 'test',
      CRASH_AFTER: String(crashAfter),
      CRASH_PATH: path,
      CRASH_BODY: JSON.stringify(body),
      CRASH_HEADERS: JSON.stringify(who.headers),
      ...(TEST_VENUE === 'polymarket' ? { VENUE: 'polymarket', POLYMARKET_CLOB_URL: standin!.url } : {}),
      ...('url' in database && database.url ? { CRASH_DATABASE_URL: database.url } : { CRASH_DATA_DIR: dataDir! }),
    },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  await child.exited;
  const output = await new Response(child.stdout).text();
  expect({ signal: child.signalCode, output }).toEqual({ signal: 'SIGKILL', output: '' });
  if (engine === 'pglite') await restart();
  // Past the grace period in which an order unknown to the venue might still arrive there.
  await Bun.sleep(TIMEOUT_MS * 3 + 50);
}

/** orders/sync, repeated as a client would while a venue call times out under load. */
async function syncUntilSettled(as: Trader = who) {
  let updated = 0;
  let synced = -1;
  for (let round = 0; round < 5; round++) {
    const sync = (await api(t, as, 'POST', '/api/trading/orders/sync', {})).body;
    if (synced < 0) synced = sync.synced;
    updated += sync.updated;
    if (sync.updated === sync.synced) break;
  }
  return { synced, updated };
}

describe('crash mid-trade', () => {
  test('killed after the venue filled the 3rd band of a buy: orders/sync and positions/sync reconcile', async () => {
    const events = (await api(t, who, 'GET', '/api/trading/events')).body.events;
    const eventId = events.find((e: any) => e.status === 'open').id;
    await crashDuring('/api/trading/buy', { eventId, side: 'LONG', amount: 120 }, 3);

    // Right after the restart: the position and its orders exist (written before any order was sent),
    // and the records claim no share the venue has not confirmed to us.
    const pending = (await api(t, who, 'GET', '/api/trading/positions?status=pending')).body.positions;
    expect(pending).toHaveLength(1);
    const positionId = pending[0].id;
    const orders = (await api(t, who, 'GET', `/api/trading/orders?positionId=${positionId}`)).body.orders;
    expect(orders.length).toBeGreaterThanOrEqual(3);
    expect(orders.some((o: any) => o.status === 'PENDING')).toBe(true);

    const first = await syncUntilSettled();
    expect(first.synced).toBe(orders.filter((o: any) => o.status === 'PENDING').length);
    const after = (await api(t, who, 'GET', `/api/trading/orders?positionId=${positionId}&limit=500`)).body.orders;
    expect(after.filter((o: any) => o.status === 'PENDING')).toEqual([]);
    // Every fill the venue made is now recorded once; the bands it never received were cancelled
    // there, so the buy was not whole and its fills were sold back.
    expect(after.filter((o: any) => o.purpose === 'open' && o.status === 'MATCHED').length).toBeGreaterThanOrEqual(3);
    const position = (await api(t, who, 'GET', `/api/trading/positions/${positionId}`)).body;
    expect(['open', 'closed']).toContain(position.status);
    const positions = (await api(t, who, 'POST', '/api/trading/positions/sync', {})).body;
    expect(positions.untracked).toEqual([]);
    await expectBooksAgree(t, who);
  }, 60_000);

  test('killed after the venue filled the 2nd band of a sale: the sale is completed by orders/sync', async () => {
    const eventId = await eventWithBidsEverywhere();
    const { body: bought } = await buy(t, who, { eventId, side: 'SHORT', amount: 120 });
    expect(bought.status).toBe('open');
    await crashDuring('/api/trading/sell', { positionId: bought.positionId, percentage: 100 }, 2);

    const reserved = (await api(t, who, 'GET', `/api/trading/orders?positionId=${bought.positionId}&status=pending`)).body.orders;
    expect(reserved.length).toBeGreaterThanOrEqual(1);
    const { updated } = await syncUntilSettled();
    expect(updated).toBe(reserved.length);
    const position = (await api(t, who, 'GET', `/api/trading/positions/${bought.positionId}`)).body;
    const held = position.bands.reduce((s: number, b: any) => s + b.tokens, 0);
    expect(position.status).toBe(held > 0 ? 'open' : 'closed');
    // Whatever the crash left unsold can be sold now: nothing stays reserved.
    if (held > 0) {
      const rest = await api(t, who, 'POST', '/api/trading/sell', { positionId: bought.positionId });
      expect(`${rest.res.status} ${rest.body.message ?? ''}`).toBe('200 ');
    }
    const positions = (await api(t, who, 'POST', '/api/trading/positions/sync', {})).body;
    expect(positions.positions.every((p: any) => p.onChainVerified)).toBe(true);
    await expectBooksAgree(t, who);
  }, 60_000);

  test('killed during trades under load (4 users buying and selling at once): every user reconciles', async () => {
    const eventId = (await api(t, who, 'GET', '/api/trading/events')).body.events.find((e: any) => e.status === 'open').id;
    const traders = [who, ...(await Promise.all([1, 2, 3].map(() => trader(t))))];
    for (const w of traders.slice(1)) await api(t, w, 'PUT', '/api/trading/settings', { walletAddress: w.userId });
    await stopForChild();
    // The real server process, as deployed, on the same database and venue.
    const server = await startServer({
      ...TEST_ENV,
      SEED_ON_START: 'false', // the seeds would reset the venue token mapping the stand-in trades on
      VENUE_TIMEOUT_MS: String(TIMEOUT_MS),
      ...('url' in database && database.url ? { DATABASE_URL: database.url } : { DATA_DIR: dataDir! }),
      ...(TEST_VENUE === 'polymarket' ? { VENUE: 'polymarket', POLYMARKET_CLOB_URL: standin!.url } : {}),
    });
    const post = async (as: Trader, path: string, body: unknown) => {
      const res = await fetch(server.url + path, { method: 'POST', headers: { ...as.headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, body: await res.json() };
    };
    let stop = false;
    let bought = 0;
    const loops = traders.flatMap((as) =>
      ['LONG', 'SHORT'].map(async (side) => {
        while (!stop) {
          try {
            const buyAnswer = await post(as, '/api/trading/buy', { eventId, side, amount: 120 });
            if (buyAnswer.status !== 200) continue;
            bought++;
            await post(as, '/api/trading/sell', { positionId: buyAnswer.body.positionId, percentage: 50 });
          } catch {
            return; // the process is gone
          }
        }
      }),
    );
    for (let waited = 0; bought < 8 && waited < 20_000; waited += 20) await Bun.sleep(20);
    await Bun.sleep(Math.random() * 200); // somewhere inside the next trades, not between them
    server.process.kill('SIGKILL');
    await server.process.exited;
    stop = true;
    await Promise.all(loops);
    expect(bought).toBeGreaterThanOrEqual(8);

    if (engine === 'pglite') await restart();
    await Bun.sleep(TIMEOUT_MS * 3 + 50);
    for (const as of traders) {
      await syncUntilSettled(as);
      const pendingOrders = (await api(t, as, 'GET', '/api/trading/orders?status=pending')).body.orders;
      expect(pendingOrders).toEqual([]);
      const pendingPositions = (await api(t, as, 'GET', '/api/trading/positions?status=pending')).body.positions;
      expect(pendingPositions).toEqual([]);
      const onChain = await api(t, as, 'POST', '/api/trading/positions/sync', {});
      expect(onChain.res.status).toBe(200);
      expect(onChain.body.untracked).toEqual([]);
      await expectBooksAgree(t, as);
      // Billing too: balance = credits − usage, to the micro-unit, for every account under load.
      const accountId = as.account.accountId;
      const [row] = await t.database.db.select({ balance: accounts.balanceMicros }).from(accounts).where(eq(accounts.id, accountId));
      const [usage] = await t.database.db.select({ cost: sql<string>`coalesce(sum(${usageRecords.costMicros}), 0)` }).from(usageRecords).where(eq(usageRecords.accountId, accountId));
      const [credited] = await t.database.db.select({ total: sql<string>`sum(${credits.amountMicros})` }).from(credits).where(eq(credits.accountId, accountId));
      expect(row!.balance).toBe(Number(credited!.total) - Number(usage!.cost));
    }
  }, 120_000);
});
