/**
 * Accounts and their funding. An account is named by the dashboard (x-account-id) and created on
 * first use. Balances only move through single conditional statements: a credit together with its
 * ledger row, a charge together with its usage row (billing.ts).
 */
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { accounts, credits } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import { newId } from '../lib/ids.ts';

export async function ensureAccount(db: Db, accountId: string): Promise<void> {
  await db.insert(accounts).values({ id: accountId }).onConflictDoNothing({ target: accounts.id });
}

export async function getAccount(db: Db, accountId: string) {
  const [row] = await db
    .select({
      id: accounts.id,
      balanceMicros: accounts.balanceMicros,
      costPerRequestMicros: accounts.costPerRequestMicros,
      createdAt: accounts.createdAt,
    })
    .from(accounts)
    .where(eq(accounts.id, accountId));
  if (!row) throw new ApiError('NOT_FOUND', `No account ${accountId}`);
  return row;
}

/**
 * Adds funds once per (account, reference): the ledger insert and the balance update are one
 * statement, so a repeated or concurrent reference credits nothing.
 */
export async function creditAccount(db: Db, input: { accountId: string; amountMicros: number; reference: string }) {
  const added = db.$with('added').as(
    db
      .insert(credits)
      .values({ id: newId('crd'), accountId: input.accountId, amountMicros: input.amountMicros, reference: input.reference })
      .onConflictDoNothing({ target: [credits.accountId, credits.reference] })
      .returning({ accountId: credits.accountId, amountMicros: credits.amountMicros }),
  );
  const [updated] = await db
    .with(added)
    .update(accounts)
    .set({ balanceMicros: sql`${accounts.balanceMicros} + ${added.amountMicros}` })
    .from(added)
    .where(eq(accounts.id, added.accountId))
    .returning({ balanceMicros: accounts.balanceMicros });
  if (updated) return { credited: true, balanceMicros: updated.balanceMicros };
  const account = await getAccount(db, input.accountId);
  return { credited: false, balanceMicros: account.balanceMicros };
}

export async function setAccountRate(db: Db, input: { accountId: string; costPerRequestMicros: number }) {
  await db
    .update(accounts)
    .set({ costPerRequestMicros: input.costPerRequestMicros })
    .where(eq(accounts.id, input.accountId));
  return getAccount(db, input.accountId);
}
