/**
 * Accounts and their funding. An account is named by the dashboard (x-account-id) and created with
 * its first API key (api-keys.ts, createApiKey); every other operation answers NOT_FOUND for an
 * account that does not exist, so a mistyped name never creates or funds one. Balances only move
 * through single conditional statements: a credit together with its ledger row, a charge together
 * with its usage row (billing.ts).
 */
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { preparedSql } from '../../db/prepared.ts';
import { accounts } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import { newId } from '../lib/ids.ts';
import { accountEventCtes, usdSql } from '../notifications/announce.ts';
import { balanceCreditCtes } from './balance-credit.ts';

export function noSuchAccount(accountId: string): ApiError {
  return new ApiError('NOT_FOUND', `No account ${accountId}; creating its first key (POST /api/keys) creates it`);
}

/** Creates the account if it does not exist (the operator CLI's explicit account creation). */
export async function ensureAccount(db: Db, accountId: string): Promise<void> {
  await db.insert(accounts).values({ id: accountId }).onConflictDoNothing({ target: accounts.id });
}

/** NOT_FOUND unless the account exists (accounts are never deleted, so the answer stays true). */
export async function requireAccount(db: Db, accountId: string): Promise<void> {
  const [row] = await db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId));
  if (!row) throw noSuchAccount(accountId);
}

const accountView = {
  id: accounts.id,
  balanceMicros: accounts.balanceMicros,
  costPerRequestMicros: accounts.costPerRequestMicros,
  billingPlan: accounts.billingPlan,
  stripeCustomerId: accounts.stripeCustomerId,
  monthlyCapMicros: accounts.monthlyCapMicros,
  /** The metered spend of the current UTC month (0 when none yet). */
  meteredSpentMicros: sql<number>`case when ${accounts.meteredMonth} = to_char(now() at time zone 'UTC', 'YYYY-MM') then ${accounts.meteredSpentMicros} else 0 end`.mapWith(Number),
  createdAt: accounts.createdAt,
};

export async function getAccount(db: Db, accountId: string) {
  const [row] = await db.select(accountView).from(accounts).where(eq(accounts.id, accountId));
  if (!row) throw noSuchAccount(accountId);
  return row;
}

interface CreditRow {
  /** The balance after this credit; null when nothing was credited. */
  credited: string | number | bigint | null;
  /** The balance before this statement; null when the account does not exist. */
  before: string | number | bigint | null;
}

/**
 * Adds funds once per (account, reference), in ONE statement: the ledger row is inserted only for an
 * existing account (never a foreign-key error) and only for a new reference, and the balance moves
 * with it. A repeated or concurrent reference credits nothing; an unknown account is NOT_FOUND.
 */
/**
 * References of stablecoin deposit credits start with this (deposits/store.ts); an operator credit may
 * not, or it would take a future deposit's place: the deposit would be marked credited and add nothing.
 */
export const DEPOSIT_REFERENCE_PREFIX = 'deposit:';
export const OPERATOR_REFERENCE_RULE = `must not start with ${DEPOSIT_REFERENCE_PREFIX} (kept for stablecoin deposits)`;

export async function creditAccount(db: Db, input: { accountId: string; amountMicros: number; reference: string }) {
  const statement = preparedSql<CreditRow>(
    db,
    'credit_account',
    sql`
      with ${balanceCreditCtes(sql`
        select ${sql.placeholder('id')}::text, a.id, ${sql.placeholder('amountMicros')}::bigint, ${sql.placeholder('reference')}::text
          from accounts a
         where a.id = ${sql.placeholder('accountId')}::text`)},
      -- The credit announced to the account's private streams, in the same statement.
      ${accountEventCtes('credit', sql`select ${sql.placeholder('eventId')}::text as id, u.id as account_id, null::text as user_id, 'balance.changed' as type, jsonb_build_object('balance', ${usdSql('u.balance_micros')}, 'change', ${usdSql('u.amount_micros')}, 'reason', 'credit') as data from updated u`)}
      select (select balance_micros from updated) as credited,
             (select balance_micros from accounts where id = ${sql.placeholder('accountId')}::text) as before`,
  );
  const [row] = await statement.execute({ id: newId('crd'), accountId: input.accountId, amountMicros: input.amountMicros, reference: input.reference, eventId: newId('evt') });
  if (row?.credited != null) return { credited: true, balanceMicros: Number(row.credited) };
  if (row?.before == null) throw noSuchAccount(input.accountId);
  // Nothing credited: a repeated reference. `before` is this statement's snapshot, which misses a
  // concurrent first credit of the same reference it waited for, so the balance is read again.
  return { credited: false, balanceMicros: (await getAccount(db, input.accountId)).balanceMicros };
}

/** One statement; NOT_FOUND for an unknown account. */
/**
 * The operator sets an account's plan: `metered` needs the Stripe customer its usage is
 * exported to; `monthlyCapMicros` (metered only) refuses requests above it in a UTC month; back to
 * `prepaid`, requests are paid from the balance again — and the Stripe customer stays, so the usage
 * metered before the switch is still exported to it.
 */
export async function setBillingPlan(db: Db, input: { accountId: string; plan: 'prepaid' | 'metered'; stripeCustomerId?: string | null; monthlyCapMicros?: number | null }) {
  const metered = input.plan === 'metered';
  const [row] = await db
    .update(accounts)
    .set({ billingPlan: input.plan, ...(metered ? { stripeCustomerId: input.stripeCustomerId! } : {}), monthlyCapMicros: metered ? (input.monthlyCapMicros ?? null) : null })
    .where(eq(accounts.id, input.accountId))
    .returning(accountView);
  if (!row) throw noSuchAccount(input.accountId);
  return row;
}

export async function setAccountRate(db: Db, input: { accountId: string; costPerRequestMicros: number }) {
  const [row] = await db
    .update(accounts)
    .set({ costPerRequestMicros: input.costPerRequestMicros })
    .where(eq(accounts.id, input.accountId))
    .returning(accountView);
  if (!row) throw noSuchAccount(input.accountId);
  return row;
}
