/**
 * An account's balance history: every credit of the account (the `credits` ledger, whoever wrote
 * it), newest first and keyset-paged, each told apart as a stablecoin deposit or an operator's credit,
 * with the totals that explain the balance (balance = credited − spent for a prepaid account).
 *
 * Cost: a page is one walk of credits (account_id, created_at, id) from the cursor, and each row of it
 * at most one unique lookup of deposits (chain_id, tx_hash, log_index), so it does not grow with the
 * account's history. The totals read the account row (O(1): its usage totals are kept by the billing
 * statements) and sum the account's credits in the same statement: credits are rare (each an
 * operator's act or an on-chain deposit of at least DEPOSIT_MIN_USD, against one usage row per billed
 * request), so that sum is a short index walk and needs no running total of its own.
 */
import { and, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { accounts, credits, deposits } from '../../db/schema.ts';
import { cursorProblem, decodeCursor, encodeCursor, instantKey, type KeyPart } from '../lib/keyset-cursor.ts';

/**
 * What a credit was. `deposit`: a stablecoin deposit credited (server/deposits/store.ts creditDeposit);
 * `operator_credit`: funds an operator added (POST /api/accounts/credits or the CLI's `credit`).
 * Those are the two writers of `credits` (both through accounts/balance-credit.ts); a new writer gets
 * a kind of its own here.
 */
export const BALANCE_ENTRY_KINDS = ['deposit', 'operator_credit'] as const;
export type BalanceEntryKind = (typeof BALANCE_ENTRY_KINDS)[number];

/** The one order of the list, named in its cursors. */
const SORT = 'newest';
/** A cursor holds the last row's (created_at to the microsecond, id). */
const CURSOR_PARTS: readonly KeyPart[] = ['instant', 'text'];
const createdKeySql = instantKey(credits.createdAt);

/** For the route's input rules (routers/params.ts `check`): the cursor's problem, or null when it is absent or one this list gave. */
export const balanceCursorProblem = (cursor: string | undefined) => cursorProblem(cursor, SORT, CURSOR_PARTS);

/**
 * A deposit credit's reference is `deposit:<chain id>:<tx hash>:<log index>` (creditDeposit writes it
 * from the deposit row). The row is recognised by joining that deposit — credited, of this account,
 * whose reference is exactly this one — through its unique key, never by the text alone: an operator
 * credit whose reference merely looks like one finds no such deposit. The numbers are cast only when
 * the reference has the form (a CASE on a column is evaluated row by row, so no cast can fail).
 */
const DEPOSIT_REFERENCE = `'^deposit:[0-9]{1,9}:[^:]+:[0-9]{1,9}$'`;
const referencePart = (reference: unknown, n: 2 | 4) =>
  sql`case when ${reference} ~ ${sql.raw(DEPOSIT_REFERENCE)} then split_part(${reference}, ':', ${sql.raw(String(n))})::int end`;

export interface BalanceEntry {
  id: string;
  amountMicros: number;
  kind: BalanceEntryKind;
  reference: string;
  /** The deposit credited (GET /api/accounts/deposits), for a deposit; null otherwise. */
  depositId: string | null;
  createdAt: Date;
}

/** One page of the account's credits, newest first (ties by id), and the cursor of the next (null on the last). */
export async function listBalanceEntries(db: Db, input: { accountId: string; limit: number; cursor?: string }): Promise<{ entries: BalanceEntry[]; nextCursor: string | null }> {
  const key = input.cursor === undefined ? undefined : decodeCursor(input.cursor, SORT, CURSOR_PARTS);
  const after = key && { createdKey: key[0] as string, id: key[1] as string };
  // The page first (one index walk, limit + 1 rows), then its deposits: the join never widens the walk.
  const page = db
    .select({
      id: credits.id,
      accountId: credits.accountId,
      amountMicros: credits.amountMicros,
      reference: credits.reference,
      createdAt: credits.createdAt,
      createdKey: createdKeySql.as('created_key'),
    })
    .from(credits)
    .where(
      and(
        eq(credits.accountId, input.accountId), // every query filters by the account
        after && sql`(${credits.createdAt}, ${credits.id}) < (${after.createdKey}::timestamptz, ${after.id}::text)`,
      ),
    )
    .orderBy(desc(credits.createdAt), desc(credits.id))
    .limit(input.limit + 1)
    .as('page');
  const rows = await db
    .select({ id: page.id, amountMicros: page.amountMicros, reference: page.reference, createdAt: page.createdAt, createdKey: page.createdKey, depositId: deposits.id })
    .from(page)
    .leftJoin(
      deposits,
      and(
        sql`${deposits.chainId} = ${referencePart(page.reference, 2)}`,
        sql`${deposits.txHash} = split_part(${page.reference}, ':', 3)`,
        sql`${deposits.logIndex} = ${referencePart(page.reference, 4)}`,
        sql`'deposit:' || ${deposits.chainId} || ':' || ${deposits.txHash} || ':' || ${deposits.logIndex} = ${page.reference}`,
        eq(deposits.accountId, page.accountId),
        eq(deposits.status, 'credited'),
      ),
    )
    .orderBy(desc(page.createdAt), desc(page.id));
  const shown = rows.slice(0, input.limit);
  const last = shown.at(-1);
  return {
    entries: shown.map((r) => ({
      id: r.id,
      amountMicros: r.amountMicros,
      kind: r.depositId === null ? 'operator_credit' : 'deposit',
      reference: r.reference,
      depositId: r.depositId,
      createdAt: r.createdAt,
    })),
    nextCursor: rows.length > input.limit && last ? encodeCursor(SORT, [last.createdKey, last.id]) : null,
  };
}

/**
 * What explains the balance, read in ONE statement (one snapshot, so the three agree): every credit,
 * every billed request's cost (the account row's running total, all time, this request included) and
 * the balance. For a prepaid account balance = credited − spent; usage billed to a metered plan is in
 * `spentMicros` but was exported to Stripe, never taken from the balance.
 */
export async function balanceTotals(db: Db, accountId: string): Promise<{ creditedMicros: number; spentMicros: number; balanceMicros: number }> {
  const [row] = await db
    .select({
      balanceMicros: accounts.balanceMicros,
      spentMicros: accounts.usageCostMicros,
      // Named by the parameter, not by the outer row: drizzle writes a single table's columns unqualified.
      credited: sql<string>`(select coalesce(sum(c.amount_micros), 0) from ${credits} c where c.account_id = ${accountId})`,
    })
    .from(accounts)
    .where(eq(accounts.id, accountId));
  return { creditedMicros: Number(row?.credited ?? 0), spentMicros: row?.spentMicros ?? 0, balanceMicros: row?.balanceMicros ?? 0 };
}
