/** Independent reads of the money tables, to check the balance invariant from outside the service. */
import { expect } from 'bun:test';
import { and, eq, isNull, ne, or, sql, sum } from 'drizzle-orm';
import { resultRows } from '../../db/prepared.ts';
import { accounts, apiKeys, credits, usageRecords } from '../../db/schema.ts';
import type { TestApp } from './app.ts';

export async function ledger(t: TestApp, accountId: string) {
  const db = t.database.db;
  const [account] = await db
    .select({ balance: accounts.balanceMicros, usageCount: accounts.usageCount, usageCost: accounts.usageCostMicros })
    .from(accounts)
    .where(eq(accounts.id, accountId));
  const [credited] = await db.select({ total: sum(credits.amountMicros) }).from(credits).where(eq(credits.accountId, accountId));
  const usage = await db.select({ cost: usageRecords.costMicros }).from(usageRecords).where(eq(usageRecords.accountId, accountId));
  const used = usage.reduce((total, row) => total + row.cost, 0);
  // usage_records has no foreign keys (db/tables/accounts.ts): every row must still name an existing
  // key of this very account.
  const dangling = await db
    .select({ id: usageRecords.id })
    .from(usageRecords)
    .leftJoin(apiKeys, eq(apiKeys.id, usageRecords.apiKeyId))
    .where(and(eq(usageRecords.accountId, accountId), or(isNull(apiKeys.id), ne(apiKeys.accountId, usageRecords.accountId))));
  expect(dangling).toEqual([]);
  // The account's running totals always equal its usage rows.
  expect({ count: account!.usageCount, cost: account!.usageCost }).toEqual({ count: usage.length, cost: used });
  // And so do its hourly cells, cell by cell (db/tables/accounts.ts usage_hours).
  expect(await cellsOf(t, accountId)).toEqual(await cellsFromRows(t, accountId));
  // And its day cells are its hour cells summed per UTC day (the trigger of migration 0032).
  expect(await dayCellsOf(t, accountId)).toEqual(await dayCellsFromHours(t, accountId));
  return { balance: account!.balance, credited: Number(credited?.total ?? 0), used, usageRows: usage.length };
}

type Cell = { hour: string; keyId: string; path: string; requests: number; cost: number };
const byCell = (a: Cell, b: Cell) => `${a.hour}${a.keyId}${a.path}`.localeCompare(`${b.hour}${b.keyId}${b.path}`);

/** The account's usage cells with any request in them. */
async function cellsOf(t: TestApp, accountId: string): Promise<Cell[]> {
  const rows = await t.database.db.execute(sql`
    select to_char(hour at time zone 'UTC', 'YYYY-MM-DD HH24') as hour, key_id as "keyId", path, requests::int as requests, cost_micros::bigint as cost
      from usage_hours where account_id = ${accountId} and requests <> 0`);
  return resultRows<Cell>(rows).map((c) => ({ ...c, cost: Number(c.cost) })).sort(byCell);
}

/** The account's day cells with any request in them. */
async function dayCellsOf(t: TestApp, accountId: string): Promise<Cell[]> {
  const rows = await t.database.db.execute(sql`
    select to_char(day at time zone 'UTC', 'YYYY-MM-DD HH24') as hour, key_id as "keyId", path, requests::int as requests, cost_micros::bigint as cost
      from usage_days where account_id = ${accountId} and requests <> 0`);
  return resultRows<Cell>(rows).map((c) => ({ ...c, cost: Number(c.cost) })).sort(byCell);
}

/** The day cells, summed from the hour cells. */
async function dayCellsFromHours(t: TestApp, accountId: string): Promise<Cell[]> {
  const rows = await t.database.db.execute(sql`
    select to_char(date_trunc('day', hour, 'UTC') at time zone 'UTC', 'YYYY-MM-DD HH24') as hour, key_id as "keyId", path,
           sum(requests)::int as requests, sum(cost_micros)::bigint as cost
      from usage_hours where account_id = ${accountId} group by 1, 2, 3 having sum(requests) <> 0`);
  return resultRows<Cell>(rows).map((c) => ({ ...c, cost: Number(c.cost) })).sort(byCell);
}

/** The same cells, summed from the usage rows themselves. */
async function cellsFromRows(t: TestApp, accountId: string): Promise<Cell[]> {
  const rows = await t.database.db.execute(sql`
    select to_char(date_trunc('hour', created_at, 'UTC') at time zone 'UTC', 'YYYY-MM-DD HH24') as hour, coalesce(api_key_id, '') as "keyId", path,
           count(*)::int as requests, sum(cost_micros)::bigint as cost
      from usage_records where account_id = ${accountId} group by 1, 2, 3`);
  return resultRows<Cell>(rows).map((c) => ({ ...c, cost: Number(c.cost) })).sort(byCell);
}

/**
 * Moves usage rows in time, as a test that spreads its requests over days needs, and puts the account's
 * hourly cells back in step with its rows (the service keeps them in step as it writes rows; an
 * UPDATE behind its back does not). The day cells follow the hour cells by themselves (their trigger).
 */
export async function redateUsage(t: TestApp, accountId: string, times: Array<[id: string, at: string]>) {
  const db = t.database.db;
  for (const [id, at] of times) await db.execute(sql`update usage_records set created_at = ${at}::timestamptz where id = ${id} and account_id = ${accountId}`);
  await db.execute(sql`delete from usage_hours where account_id = ${accountId}`);
  await db.execute(sql`
    insert into usage_hours (account_id, hour, key_id, path, requests, cost_micros)
    select account_id, date_trunc('hour', created_at, 'UTC'), coalesce(api_key_id, ''), path, count(*), sum(cost_micros)
      from usage_records where account_id = ${accountId} group by 1, 2, 3, 4`);
}
