/**
 * Per-request billing. A billed request first reserves its cost: one statement that debits the
 * balance only `WHERE balance >= cost` and inserts the usage row from the debited row, so concurrent
 * requests can never overdraw and balance = credits − Σ usage holds at every commit. If the request
 * then fails, the usage row is deleted and its cost returned, again in one statement: errors cost nothing.
 */
import { and, count, eq, sql, sum } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
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
  const debit = db.$with('debit').as(
    db
      .update(accounts)
      .set({ balanceMicros: sql`${accounts.balanceMicros} - ${input.costMicros}` })
      .where(and(eq(accounts.id, input.accountId), sql`${accounts.balanceMicros} >= ${input.costMicros}`))
      .returning({ accountId: accounts.id }),
  );
  const inserted = await db
    .with(debit)
    .insert(usageRecords)
    .select(
      db
        .select({
          id: sql<string>`${usageId}`.as('id'),
          accountId: debit.accountId,
          apiKeyId: sql<string>`${input.apiKeyId}`.as('api_key_id'),
          method: sql<string>`${input.method}`.as('method'),
          path: sql<string>`${input.path}`.as('path'),
          costMicros: sql<number>`${input.costMicros}::bigint`.as('cost_micros'),
          requestId: sql<string>`${input.requestId}`.as('request_id'),
          createdAt: sql<Date>`now()`.as('created_at'),
        })
        .from(debit),
    )
    .returning({ id: usageRecords.id });
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
    .set({ balanceMicros: sql`${accounts.balanceMicros} + ${removed.costMicros}` })
    .from(removed)
    .where(eq(accounts.id, removed.accountId));
}

export async function billingSummary(db: Db, accountId: string) {
  const [usage] = await db
    .select({ usageCount: count(), usageCostMicros: sum(usageRecords.costMicros) })
    .from(usageRecords)
    .where(eq(usageRecords.accountId, accountId));
  const [account] = await db
    .select({ balanceMicros: accounts.balanceMicros, costPerRequestMicros: accounts.costPerRequestMicros })
    .from(accounts)
    .where(eq(accounts.id, accountId));
  return {
    usageCount: usage?.usageCount ?? 0,
    // sum() of a bigint is a numeric, returned as a string by both drivers.
    usageCostMicros: Number(usage?.usageCostMicros ?? 0),
    balanceMicros: account?.balanceMicros ?? 0,
    costPerRequestMicros: account?.costPerRequestMicros ?? null,
  };
}
