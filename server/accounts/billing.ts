/**
 * Per-request billing. A billed request first reserves its cost: one statement that debits the
 * balance only `WHERE balance >= cost` and inserts the usage row from the debited row, so concurrent
 * requests can never overdraw and balance = credits − Σ usage holds at every commit. If the request
 * then fails, the usage row is deleted and its cost returned, again in one statement: errors cost nothing.
 * The same statements keep the account's usage totals, so balance, totals and rows never disagree.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { prepared } from '../../db/prepared.ts';
import { accounts, usageRecords } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import { newId } from '../lib/ids.ts';

export type PriceTier = 'standard' | 'premium';
/** Private-company data costs ten times the standard rate (interface.md, Billing 2). */
export const PREMIUM_MULTIPLIER = 10;

export function priceFor(tier: PriceTier, standardMicros: number): number {
  return tier === 'premium' ? standardMicros * PREMIUM_MULTIPLIER : standardMicros;
}

export interface Charge {
  usageId: string;
  accountId: string;
  costMicros: number;
}

export async function reserveCharge(
  db: Db,
  input: { accountId: string; apiKeyId: string; costMicros: number; method: string; path: string; requestId: string },
): Promise<Charge> {
  const usageId = newId('use');
  const reserve = prepared(db, 'reserve_charge', (d) => {
    const p = (name: string, type: 'bigint' | 'text') => sql`${sql.placeholder(name)}::${sql.raw(type)}`;
    const debit = d.$with('debit').as(
      d
        .update(accounts)
        .set({
          balanceMicros: sql`${accounts.balanceMicros} - ${p('cost', 'bigint')}`,
          usageCount: sql`${accounts.usageCount} + 1`,
          usageCostMicros: sql`${accounts.usageCostMicros} + ${p('cost', 'bigint')}`,
        })
        .where(and(eq(accounts.id, sql.placeholder('accountId')), sql`${accounts.balanceMicros} >= ${p('cost', 'bigint')}`))
        .returning({ accountId: accounts.id }),
    );
    return d
      .with(debit)
      .insert(usageRecords)
      .select(
        d
          .select({
            id: sql<string>`${p('usageId', 'text')}`.as('id'),
            accountId: debit.accountId,
            apiKeyId: sql<string>`${p('apiKeyId', 'text')}`.as('api_key_id'),
            method: sql<string>`${p('method', 'text')}`.as('method'),
            path: sql<string>`${p('path', 'text')}`.as('path'),
            costMicros: sql<number>`${p('cost', 'bigint')}`.as('cost_micros'),
            requestId: sql<string>`${p('requestId', 'text')}`.as('request_id'),
            createdAt: sql<Date>`now()`.as('created_at'),
          })
          .from(debit),
      )
      .returning({ id: usageRecords.id })
      .prepare('reserve_charge');
  });
  const inserted = await reserve.execute({ ...input, cost: input.costMicros, usageId });
  if (inserted.length === 0) {
    throw new ApiError('INSUFFICIENT_BALANCE', 'Account balance is below the cost of this request; add funds');
  }
  return { usageId, accountId: input.accountId, costMicros: input.costMicros };
}

/** Undoes a reservation: removes its usage row and returns exactly what that row cost. */
export async function refundCharge(db: Db, charge: Charge): Promise<void> {
  const removed = db.$with('removed').as(
    db
      .delete(usageRecords)
      .where(and(eq(usageRecords.id, charge.usageId), eq(usageRecords.accountId, charge.accountId)))
      .returning({ accountId: usageRecords.accountId, costMicros: usageRecords.costMicros }),
  );
  await db
    .with(removed)
    .update(accounts)
    .set({
      balanceMicros: sql`${accounts.balanceMicros} + ${removed.costMicros}`,
      usageCount: sql`${accounts.usageCount} - 1`,
      usageCostMicros: sql`${accounts.usageCostMicros} - ${removed.costMicros}`,
    })
    .from(removed)
    .where(eq(accounts.id, removed.accountId));
}

/** O(1): the account row carries its usage totals, kept by reserve and refund. */
export async function billingSummary(db: Db, accountId: string) {
  const [account] = await db
    .select({
      balanceMicros: accounts.balanceMicros,
      costPerRequestMicros: accounts.costPerRequestMicros,
      usageCount: accounts.usageCount,
      usageCostMicros: accounts.usageCostMicros,
    })
    .from(accounts)
    .where(eq(accounts.id, accountId));
  return {
    usageCount: account?.usageCount ?? 0,
    usageCostMicros: account?.usageCostMicros ?? 0,
    balanceMicros: account?.balanceMicros ?? 0,
    costPerRequestMicros: account?.costPerRequestMicros ?? null,
  };
}
