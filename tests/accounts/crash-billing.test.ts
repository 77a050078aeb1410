/**
 * kill -9 of the server process in the middle of billed load: after a restart on the same
 * database, the money invariant holds exactly — balance = credits − Σ usage, the account's usage totals
 * equal its usage rows — and every request a client saw succeed was charged exactly once.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { openDatabase, type Database } from '../../db/client.ts';
import { accounts, usageRecords } from '../../db/schema.ts';
import { seedDatabase } from '../../seeds/index.ts';
import { creditAccount, ensureAccount } from '../../server/accounts/accounts.ts';
import { createApiKey } from '../../server/accounts/api-keys.ts';
import { createLogger } from '../../server/lib/logger.ts';
import { loadConfig } from '../../server/config.ts';
import { engine, freshDatabase, type TestDatabase } from '../harness/databases.ts';
import { PacedLoad } from '../harness/paced-load.ts';
import { startServer } from '../harness/server-process.ts';

const KEY = 'c'.repeat(64);
/** 16 clients on a billed route; the server is killed after KILL_AFTER_MS. */
const CLIENTS = 16;
const KILL_AFTER_MS = 1500;
/** The clients stop by then even if the kill is late; the funding covers every request until then. */
const LOAD_MS = KILL_AFTER_MS + 10_000;
/** One request per millisecond and client at most: funding and rate limits are sized from that bound. */
const PACE_MS = 1;
const bound = new PacedLoad(CLIENTS, PACE_MS, LOAD_MS);
let dataDir: string | undefined;
let pg: TestDatabase | undefined;

/** The database the server processes use: PostgreSQL, or a PGlite directory handed between them. */
async function open(): Promise<Database> {
  return pg ?? openDatabase({ kind: 'pglite', dataDir: dataDir! });
}
const serverEnv = () => ({
  TRADING_ENCRYPTION_KEY: KEY,
  SEED_ON_START: 'false',
  ...bound.unreachableLimitsEnv(),
  ...(pg ? { DATABASE_URL: pg.url! } : { DATA_DIR: dataDir! }),
});
/** Every request the load can send, and the billing read after the restart (set once the database is known). */
let fundsMicros: number;

let apiKey: string;
beforeAll(async () => {
  if (engine === 'postgres') pg = await freshDatabase();
  else dataDir = mkdtempSync(join(tmpdir(), 'pipo-crash-billing-'));
  const db = await open();
  await db.migrate();
  await seedDatabase(db.db, createLogger('silent'));
  await ensureAccount(db.db, 'crash-billing');
  fundsMicros = (bound.maxRequests() + 1) * loadConfig(serverEnv()).costPerRequestMicros;
  await creditAccount(db.db, { accountId: 'crash-billing', amountMicros: fundsMicros, reference: 'crash' });
  apiKey = (await createApiKey(db.db, { accountId: 'crash-billing', name: 'load' })).key;
  if (!pg) await db.close();
}, 60_000);
afterAll(async () => {
  await pg?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test('SIGKILL under billed load loses and duplicates nothing', async () => {
  const server = await startServer(serverEnv());
  const succeeded: string[] = [];
  let stop = false;
  // The clients hammer a billed route until the process dies under them (at their pace, by LOAD_MS).
  const load = new PacedLoad(CLIENTS, PACE_MS, LOAD_MS);
  const clients = Array.from({ length: CLIENTS }, async (_, c) => {
    const next = load.client();
    for (let i = 0; !stop && (await next()); i++) {
      const requestId = `load-${c}-${i}`;
      try {
        const response = await fetch(`${server.url}/api/private-companies/1`, { headers: { 'x-api-key': apiKey, 'x-request-id': requestId } });
        if (response.status === 200) succeeded.push(requestId);
        await response.arrayBuffer();
      } catch {
        return; // the process is gone
      }
    }
  });
  await Bun.sleep(KILL_AFTER_MS);
  server.process.kill('SIGKILL');
  await server.process.exited;
  stop = true;
  await Promise.all(clients);
  expect(succeeded.length).toBeGreaterThan(20);

  // Restart on the same data: the books balance to the micro-unit.
  const restarted = await startServer(serverEnv());
  const billing = await (await fetch(`${restarted.url}/api/billing`, { headers: { 'x-api-key': apiKey } })).json();
  await restarted.stop();
  const db = await open();
  const rows = await db.db.select({ requestId: usageRecords.requestId, cost: usageRecords.costMicros }).from(usageRecords).where(eq(usageRecords.accountId, 'crash-billing'));
  if (!pg) await db.close();
  // Every success the clients saw was charged, once; a request cut off by the kill was charged at most once.
  const charged = new Map<string, number>();
  for (const row of rows) charged.set(row.requestId, (charged.get(row.requestId) ?? 0) + 1);
  for (const id of succeeded) expect(charged.get(id)).toBe(1);
  expect([...charged.values()].every((n) => n === 1)).toBe(true);
  // The billing answer (itself billed, and counted) agrees with the rows: balance = credits − usage.
  const used = rows.reduce((sum, r) => sum + r.cost, 0);
  expect(billing.usageCount).toBe(rows.length);
  expect(Math.round(billing.usageCostUsd * 1e6)).toBe(used);
  expect(Math.round(billing.balanceUsd * 1e6)).toBe(fundsMicros - used);
}, 90_000);

// Two servers on one PostgreSQL (the embedded database allows one process), both billing the same
// account in batches; one is killed mid-load, the other keeps going: the books still balance.
const load0 = new PacedLoad(CLIENTS, PACE_MS, LOAD_MS);
test.skipIf(engine !== 'postgres')('two servers on one account, one killed under load: nothing lost or doubled', async () => {
  const db = await open();
  // Enough for every request this load can send, at the private-company rate.
  const extra = (load0.maxRequests() + 1) * 10 * loadConfig(serverEnv()).costPerRequestMicros;
  await creditAccount(db.db, { accountId: 'crash-billing', amountMicros: extra, reference: 'crash-pair' });
  fundsMicros += extra;
  const [before] = await db.db.select({ rows: sql<number>`count(*)::int` }).from(usageRecords).where(eq(usageRecords.accountId, 'crash-billing'));
  const servers = [await startServer(serverEnv()), await startServer(serverEnv())];
  const succeeded: string[] = [];
  const load = new PacedLoad(CLIENTS, PACE_MS, LOAD_MS);
  let stop = false;
  const clients = Array.from({ length: CLIENTS }, async (_, c) => {
    const next = load.client();
    for (let i = 0; !stop && (await next()); i++) {
      const requestId = `pair-${c}-${i}`;
      const server = servers[c % 2]!;
      try {
        const response = await fetch(`${server.url}/api/private-companies/1`, { headers: { 'x-api-key': apiKey, 'x-request-id': requestId } });
        if (response.status === 200) succeeded.push(requestId);
        await response.arrayBuffer();
      } catch {
        if (c % 2 === 0) return; // the killed one's clients stop; the survivor's never see an error
        throw new Error(`the surviving server failed request ${requestId}`);
      }
    }
  });
  await Bun.sleep(KILL_AFTER_MS);
  servers[0]!.process.kill('SIGKILL');
  await servers[0]!.process.exited;
  await Bun.sleep(1_000); // the survivor keeps billing alone
  stop = true;
  await Promise.all(clients);
  await servers[1]!.stop();
  expect(succeeded.filter((id) => Number(id.split('-')[1]) % 2 === 1).length).toBeGreaterThan(20);
  const rows = await db.db.select({ requestId: usageRecords.requestId, cost: usageRecords.costMicros }).from(usageRecords).where(eq(usageRecords.accountId, 'crash-billing'));
  const charged = new Map<string, number>();
  for (const row of rows) charged.set(row.requestId, (charged.get(row.requestId) ?? 0) + 1);
  for (const id of succeeded) expect(charged.get(id)).toBe(1);
  expect([...charged.values()].every((n) => n === 1)).toBe(true);
  expect(rows.length - before!.rows).toBeGreaterThanOrEqual(succeeded.length);
  const [account] = await db.db.select({ balance: accounts.balanceMicros, count: accounts.usageCount, cost: accounts.usageCostMicros }).from(accounts).where(eq(accounts.id, 'crash-billing'));
  const used = rows.reduce((sum, r) => sum + r.cost, 0);
  expect(account).toEqual({ balance: fundsMicros - used, count: rows.length, cost: used });
}, 90_000);
