/** Independent reads of the money tables, to check the balance invariant from outside the service. */
import { expect } from 'bun:test';
import { and, eq, isNull, ne, or, sum } from 'drizzle-orm';
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
  return { balance: account!.balance, credited: Number(credited?.total ?? 0), used, usageRows: usage.length };
}
