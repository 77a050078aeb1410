/**
 * Migration 0013 moves the paper ledger from one account per venue API key to one per owner
 * (account, user), attributing the old rows by the owners of our orders (each paper order's client
 * order id is our order id). A database migrated up to 0012 is filled with a ledger of the old shape,
 * then migrated to the end, on whichever engine this run targets.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { sql } from 'drizzle-orm';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { migrationsFolder, openDatabase, type Database } from '../../db/client.ts';
import { paperAccounts, paperHoldings, paperOrders } from '../../db/schema.ts';
import { testDatabaseUrl } from '../harness/databases.ts';

const LAST_OLD_SHAPE = '0012_trades_by_user_position';

let folder: string;
let database: Database;
let dropDatabase = async () => {};

/** db/migrations as it was before the paper ledger changed owner. */
function migrationsUpTo(tag: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'pipo-migrations-'));
  const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta/_journal.json'), 'utf8'));
  const entries = journal.entries.slice(0, journal.entries.findIndex((e: { tag: string }) => e.tag === tag) + 1);
  mkdirSync(join(dir, 'meta'));
  writeFileSync(join(dir, 'meta/_journal.json'), JSON.stringify({ ...journal, entries }));
  for (const e of entries) cpSync(join(migrationsFolder, `${e.tag}.sql`), join(dir, `${e.tag}.sql`));
  return dir;
}

beforeAll(async () => {
  folder = migrationsUpTo(LAST_OLD_SHAPE);
  if (testDatabaseUrl) {
    const name = `pipo_mig_${process.pid}_${Date.now().toString(36)}`;
    const admin = postgres(testDatabaseUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE DATABASE ${name}`);
    const url = new URL(testDatabaseUrl);
    url.pathname = `/${name}`;
    database = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 2 });
    await migratePostgres(database.db as never, { migrationsFolder: folder });
    dropDatabase = async () => {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    };
  } else {
    database = await openDatabase({ kind: 'pglite', client: new PGlite({ extensions: { pg_trgm } }) });
    await migratePglite(database.db as never, { migrationsFolder: folder });
  }
}, 60_000);
afterAll(async () => {
  await database.close();
  await dropDatabase();
  rmSync(folder, { recursive: true, force: true });
});

const A = { accountId: 'acct-1', userId: 'user-a' };
const B = { accountId: 'acct-2', userId: 'user-b' };
const C = { accountId: 'acct-3', userId: 'user-c' };
/** Traded under two API keys (replaced its credentials). */
const D = { accountId: 'acct-1', userId: 'user-d' };

async function ourOrder(id: string, owner: { accountId: string; userId: string }) {
  const db = database.db;
  await db.execute(sql`insert into positions (id, account_id, user_id, event_id, side, floor_l, floor_s, status, units_micros)
    values (${`pos-${id}`}, ${owner.accountId}, ${owner.userId}, 'openai-ipo', 'LONG', 0.2, 0.15, 'open', 1000000)`);
  await db.execute(sql`insert into orders (id, account_id, user_id, position_id, operation_id, purpose, band_index, band_id, side, limit_price_micros, requested_micros, status)
    values (${id}, ${owner.accountId}, ${owner.userId}, ${`pos-${id}`}, ${`op-${id}`}, 'open', 0, 'tok', 'BUY', 500000, 1000000, 'MATCHED')`);
}

async function oldAccount(key: string, collateral: number, holdings: Record<string, number>) {
  await database.db.execute(sql`insert into paper_accounts (account_key, collateral_micros) values (${key}, ${collateral})`);
  for (const [token, shares] of Object.entries(holdings)) {
    await database.db.execute(sql`insert into paper_holdings (account_key, token_id, shares_micros) values (${key}, ${token}, ${shares})`);
  }
}

async function oldOrder(key: string, clientOrderId: string, side: 'BUY' | 'SELL', token: string, shares: number, notional: number, reason: string | null = null) {
  const status = reason ? 'CANCELLED' : 'MATCHED';
  await database.db.execute(sql`insert into paper_orders (id, account_key, client_order_id, token_id, side, requested_micros, filled_micros, notional_micros, status, reason)
    values (${`paper-${key}-${clientOrderId}`}, ${key}, ${clientOrderId}, ${token}, ${side}, ${shares}, ${reason ? 0 : shares}, ${reason ? 0 : notional}, ${status}, ${reason})`);
}

test('the per-API-key paper ledger is handed to the owners its orders name', async () => {
  for (const [id, owner] of [['ord-a1', A], ['ord-b1', B], ['ord-c1', C], ['ord-c2', C], ['ord-d1', D], ['ord-d2', D]] as const) await ourOrder(id, owner);
  // One owner: kept as it was (including a holding changed outside any order).
  await oldAccount('solo', 9_000_000, { 'tok-x': 2_500_000 });
  await oldOrder('solo', 'ord-a1', 'BUY', 'tok-x', 2_000_000, 1_000_000);
  // Shared by B and C (and an order from outside the service): started at $10, each keeps what its own orders did.
  await oldAccount('my-venue-key', 10_000_000 - 1_500_000 - 4_000_000 + 1_000_000 - 500_000, { 'tok-y': 4_000_000, 'tok-z': 0 });
  await oldOrder('my-venue-key', 'ord-b1', 'BUY', 'tok-y', 3_000_000, 1_500_000);
  await oldOrder('my-venue-key', 'ord-c1', 'BUY', 'tok-z', 2_000_000, 4_000_000);
  await oldOrder('my-venue-key', 'ord-c2', 'SELL', 'tok-z', 2_000_000, 1_000_000);
  await oldOrder('my-venue-key', 'from-outside', 'BUY', 'tok-y', 1_000_000, 500_000);
  // D under two keys; the new key also recorded a cancel of the old key's order id.
  await oldAccount('d-old', 9_600_000, { 'tok-x': 1_000_000 });
  await oldOrder('d-old', 'ord-d1', 'BUY', 'tok-x', 1_000_000, 400_000);
  await oldAccount('d-new', 9_200_000, { 'tok-x': 2_000_000 });
  await oldOrder('d-new', 'ord-d2', 'BUY', 'tok-x', 2_000_000, 800_000);
  await oldOrder('d-new', 'ord-d1', 'BUY', '', 0, 0, 'cancelled-before-placement');
  // Never traded: nothing to attribute (its owner opens a fresh account on first use).
  await oldAccount('never-traded', 10_000_000, {});

  await database.migrate();

  const db = database.db;
  const owner = (r: { accountId: string; userId: string }) => `${r.accountId}/${r.userId}`;
  const accounts = Object.fromEntries((await db.select().from(paperAccounts)).map((r) => [owner(r), r.collateralMicros]));
  expect(accounts).toEqual({
    [owner(A)]: 9_000_000,
    [owner(B)]: 10_000_000 - 1_500_000,
    [owner(C)]: 10_000_000 - 4_000_000 + 1_000_000,
    [owner(D)]: 9_600_000 + 9_200_000,
  });
  const holdings = (await db.select().from(paperHoldings)).map((r) => `${owner(r)} ${r.tokenId} ${r.sharesMicros}`).sort();
  expect(holdings).toEqual([`${owner(A)} tok-x 2500000`, `${owner(B)} tok-y 3000000`, `${owner(D)} tok-x 3000000`].sort());
  const orders = (await db.select().from(paperOrders)).map((r) => `${owner(r)} ${r.clientOrderId} ${r.status}`).sort();
  expect(orders).toEqual(
    [`${owner(A)} ord-a1 MATCHED`, `${owner(B)} ord-b1 MATCHED`, `${owner(C)} ord-c1 MATCHED`, `${owner(C)} ord-c2 MATCHED`, `${owner(D)} ord-d1 MATCHED`, `${owner(D)} ord-d2 MATCHED`].sort(),
  );
  // The temporary tables are gone.
  const leftovers = await db.execute(sql`select table_name from information_schema.tables where table_name like 'paper_legacy%'`);
  // (postgres.js answers the rows as an array; PGlite as `{ rows }`.)
  expect(Array.isArray(leftovers) ? leftovers : (leftovers as unknown as { rows: unknown[] }).rows).toEqual([]);
});
