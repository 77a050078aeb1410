/**
 * kill -9 of the server process in the middle of billed load (issue #7): after a restart on the same
 * database, the money invariant holds exactly — balance = credits − Σ usage, the account's usage totals
 * equal its usage rows — and every request a client saw succeed was charged exactly once.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { openDatabase, type Database } from '../db/client.ts';
import { usageRecords } from '../db/schema.ts';
import { seedDatabase } from '../seeds/index.ts';
import { creditAccount, ensureAccount } from '../server/accounts/accounts.ts';
import { createApiKey } from '../server/accounts/api-keys.ts';
import { createLogger } from '../server/lib/logger.ts';
import { engine, freshDatabase, type TestDatabase } from './harness/databases.ts';
import { startServer } from './harness/server-process.ts';

const KEY = 'c'.repeat(64);
let dataDir: string | undefined;
let pg: TestDatabase | undefined;

/** The database the server processes use: PostgreSQL, or a PGlite directory handed between them. */
async function open(): Promise<Database> {
  return pg ?? openDatabase({ kind: 'pglite', dataDir: dataDir! });
}
const serverEnv = () => ({
  TRADING_ENCRYPTION_KEY: KEY,
  SEED_ON_START: 'false',
  RATE_LIMIT_KEY_RPS: '100000',
  RATE_LIMIT_KEY_BURST: '100000',
  ...(pg ? { DATABASE_URL: pg.url! } : { DATA_DIR: dataDir! }),
});

let apiKey: string;
beforeAll(async () => {
  if (engine === 'postgres') pg = await freshDatabase();
  else dataDir = mkdtempSync(join(tmpdir(), 'pipo-crash-billing-'));
  const db = await open();
  await db.migrate();
  await seedDatabase(db.db, createLogger('silent'));
  await ensureAccount(db.db, 'crash-billing');
  await creditAccount(db.db, { accountId: 'crash-billing', amountMicros: 100_000_000, reference: 'crash' });
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
  // 16 clients hammering a billed route until the process dies under them.
  const clients = Array.from({ length: 16 }, async (_, c) => {
    for (let i = 0; !stop; i++) {
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
  await Bun.sleep(1500);
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
  expect(Math.round(billing.balanceUsd * 1e6)).toBe(100_000_000 - used);
}, 90_000);
