/**
 * kill -9 of the server in the middle of a company export: the export reserved every unit before its
 * first byte, the reader got the first rows, and the process died with most of the file unwritten.
 * After a restart on the same database, the lapsed-units job refunds the thousands that were never
 * written, once: the account pays only for what the stream wrote, and its balance, usage rows and
 * totals agree. On both databases (PGlite: one process per data directory, handed over).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, eq, isNotNull, sql } from 'drizzle-orm';
import { resultRows } from '../../db/prepared.ts';
import { accounts, usageRecords } from '../../db/schema.ts';
import { loadDataset } from '../../seeds/company-dataset.ts';
import { creditAccount, ensureAccount } from '../../server/accounts/accounts.ts';
import { createApiKey } from '../../server/accounts/api-keys.ts';
import { EXPORT_BATCH_ROWS, ROWS_PER_UNIT } from '../../server/companies/export.ts';
import { upsertCompanies } from '../../server/companies/store.ts';
import { handedOverDatabase, type HandedOverDatabase } from '../harness/handed-over-database.ts';
import { startServer, type RunningServer } from '../harness/server-process.ts';

const EXPORT = '/api/private-companies/export';
const ACCOUNT = 'export-crash';
const LEASE_MS = 2_000;
const DASHBOARD = 'dash_export_crash_0123456789abcdef0123456789';

let scratch: string;
let database: HandedOverDatabase;
let apiKey: string;
let rows: number;

const env = () => ({
  TRADING_ENCRYPTION_KEY: 'e'.repeat(64),
  SEED_ON_START: 'false',
  LOG_LEVEL: 'warn',
  UNIT_LEASE_MS: String(LEASE_MS),
  DASHBOARD_KEYS: DASHBOARD,
  ...database.env,
});

/** The account's balance and its export usage: the units kept for good and those still provisional. */
function ledger() {
  return database.use(async (db) => {
    const [account] = await db.db.select().from(accounts).where(eq(accounts.id, ACCOUNT));
    const exportRows = await db.db.select().from(usageRecords).where(and(eq(usageRecords.accountId, ACCOUNT), eq(usageRecords.path, EXPORT)));
    const [{ cost }] = (await db.db.select({ cost: sql<string>`coalesce(sum(${usageRecords.costMicros}), 0)` }).from(usageRecords).where(eq(usageRecords.accountId, ACCOUNT))) as [{ cost: string }];
    const provisional = await db.db.select().from(usageRecords).where(and(eq(usageRecords.accountId, ACCOUNT), isNotNull(usageRecords.provisionalUntil)));
    return { account: account!, exportUnits: exportRows.length, provisional: provisional.length, usageCost: Number(cost) };
  });
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'pipo-export-crash-'));
  database = await handedOverDatabase(scratch);
  await database.use(async (db) => {
    // Enough rows for several units: two more copies of every company.
    const dataset = (await loadDataset()).records;
    await upsertCompanies(db.db, [1, 2].flatMap((n) => dataset.map((r) => ({ ...r, sourceId: `${r.sourceId}-crash-${n}`.slice(0, 128) }))));
    rows = (await db.db.execute(sql`select count(*)::int as n from companies`).then(resultRows<{ n: number }>))[0]!.n;
    await ensureAccount(db.db, ACCOUNT);
    await creditAccount(db.db, { accountId: ACCOUNT, amountMicros: 10_000_000, reference: 'crash' });
    apiKey = (await createApiKey(db.db, { accountId: ACCOUNT, name: 'exporter' })).key;
  });
}, 120_000);
afterAll(async () => {
  await database?.close();
  rmSync(scratch, { recursive: true, force: true });
});

test('kill -9 mid-export: after a restart the unwritten thousands are refunded, once; the account pays for what was written', async () => {
  const units = Math.ceil(rows / ROWS_PER_UNIT);
  expect(units).toBeGreaterThanOrEqual(3);
  const first = await startServer(env());
  let second: RunningServer | undefined;
  try {
    // Read as a client reads a file, without the harness's response check (it would read the whole body first).
    process.env.RESPONSE_VALIDATION = 'off';
    const res = await fetch(`${first.url}${EXPORT}`, { headers: { 'x-api-key': apiKey } });
    expect(res.status).toBe(200);
    const rate = Math.round((Number(res.headers.get('x-request-cost-usd')) * 1_000_000) / units);
    const reader = res.body!.getReader();
    let received = '';
    while (received.split('\n').length - 1 < EXPORT_BATCH_ROWS) {
      const { value, done: ended } = await reader.read();
      expect(ended).toBe(false);
      received += new TextDecoder().decode(value);
    }
    first.process.kill('SIGKILL');
    await first.process.exited;
    await reader.cancel().catch(() => {});
    const receivedRows = received.split('\n').length - 1;

    // The dead process reserved every unit and wrote few: the unwritten ones are still charged, provisional.
    const atCrash = await ledger();
    expect(atCrash.exportUnits).toBe(units);
    expect(atCrash.provisional).toBeGreaterThan(0);
    expect(Number(atCrash.account.balanceMicros)).toBe(10_000_000 - units * rate);

    second = await startServer(env());
    for (const deadline = Date.now() + 30_000; ; await Bun.sleep(100)) {
      const me = await fetch(`${second.url}/api/accounts/me`, { headers: { 'x-api-key': DASHBOARD, 'x-account-id': ACCOUNT } }).then((r) => r.json());
      // Refunds are one statement per unit: wait for every provisional unit's, not the first one's.
      if (Math.round(me.balanceUsd * 1_000_000) >= 10_000_000 - (units - atCrash.provisional) * rate) break;
      if (Date.now() > deadline) throw new Error('the provisional units were not all refunded after the restart');
    }
    await Bun.sleep(LEASE_MS); // a further pass: it must find nothing more to refund
    expect(await second.stop()).toBe(0);
    second = undefined;

    const after = await ledger();
    expect(after.provisional).toBe(0);
    expect(after.exportUnits).toBe(atCrash.exportUnits - atCrash.provisional);
    expect(after.exportUnits).toBeGreaterThanOrEqual(Math.ceil(receivedRows / ROWS_PER_UNIT));
    expect(after.exportUnits).toBeLessThan(units);
    // Balance = credits − every usage row's cost; totals agree; nothing refunded twice.
    expect(Number(after.account.balanceMicros)).toBe(10_000_000 - after.usageCost);
    expect(Number(after.account.usageCostMicros)).toBe(after.usageCost);
  } finally {
    delete process.env.RESPONSE_VALIDATION;
    if (first.process.exitCode === null) first.process.kill('SIGKILL');
    await second?.stop();
  }
}, 120_000);
