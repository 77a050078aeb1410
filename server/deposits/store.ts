/**
 * The deposit rows and the one statement that credits them. A row is keyed by
 * (chain id, transaction hash, log index); whichever path sees a transfer first (a claim or the
 * watcher) inserts it, and every later sighting either changes nothing or — while the row is not
 * final — follows the chain (a moved block, a revived log). Status changes are conditional updates,
 * so a claim, any number of watchers and a sign-in can race without crediting twice.
 */
import { and, count, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { preparedSql } from '../../db/prepared.ts';
import { accountWallets, deposits } from '../../db/schema.ts';
import { newId } from '../lib/ids.ts';
import { microsToUsd } from '../lib/money.ts';
import type { DepositTransfer } from './verify.ts';
import { accountEventCtes, usdSql } from '../notifications/announce.ts';
import { balanceCreditCtes } from '../accounts/balance-credit.ts';

export interface DepositKey {
  chainId: number;
  txHash: string;
  logIndex: number;
}

export type DepositStatus = 'pending' | 'credited' | 'unclaimed' | 'dropped';

/** The owner of a sender wallet, looked up inside the statement that needs it (never a stale read). */
const ownerOf = (fromAddress: unknown) => sql`(select ${accountWallets.accountId} from ${accountWallets} where ${accountWallets.address} = ${fromAddress})`;

/**
 * Records a transfer seen on chain as pending (the account is the sender's owner, or none yet). An
 * existing row changes only while it is not final: a pending row seen in another block (a
 * reorganisation moved it) or a dropped row seen again (its transaction was mined anew) takes what
 * the chain says now. Credited and unclaimed rows were verified final and never change here.
 */
export async function recordDeposit(db: Db, key: DepositKey, block: { number: bigint; hash: string }, transfer: DepositTransfer): Promise<void> {
  await db
    .insert(deposits)
    .values({
      id: newId('dep'),
      chainId: key.chainId,
      txHash: key.txHash,
      logIndex: key.logIndex,
      token: transfer.token,
      fromAddress: transfer.from,
      toAddress: transfer.to,
      amountMicros: transfer.amountMicros,
      blockNumber: Number(block.number),
      blockHash: block.hash,
      accountId: ownerOf(transfer.from),
      status: 'pending',
    })
    .onConflictDoUpdate({
      target: [deposits.chainId, deposits.txHash, deposits.logIndex],
      set: {
        token: sql`excluded.token`,
        fromAddress: sql`excluded.from_address`,
        toAddress: sql`excluded.to_address`,
        amountMicros: sql`excluded.amount_micros`,
        blockNumber: sql`excluded.block_number`,
        blockHash: sql`excluded.block_hash`,
        accountId: sql`excluded.account_id`,
        status: 'pending',
      },
      // The watcher re-reads the unfinalised blocks every pass: an unchanged sighting writes nothing,
      // unless the sender's wallet was linked to an account since the row was recorded.
      setWhere: sql`${deposits.status} = 'dropped' or (${deposits.status} = 'pending' and (${deposits.blockHash} <> excluded.block_hash or (${deposits.accountId} is null and excluded.account_id is not null)))`,
    });
}

/** Pending rows of one transaction (what a re-verification compares with the receipt). */
export function pendingRowsOf(db: Db, chainId: number, txHash: string) {
  return db
    .select({ logIndex: deposits.logIndex, token: deposits.token, fromAddress: deposits.fromAddress, toAddress: deposits.toAddress, amountMicros: deposits.amountMicros, blockNumber: deposits.blockNumber, blockHash: deposits.blockHash })
    .from(deposits)
    .where(and(eq(deposits.chainId, chainId), eq(deposits.txHash, txHash), eq(deposits.status, 'pending')));
}

/** A pending log the canonical chain no longer has: never credited. */
export async function markDropped(db: Db, key: DepositKey): Promise<boolean> {
  const rows = await db
    .update(deposits)
    .set({ status: 'dropped' })
    .where(and(eq(deposits.chainId, key.chainId), eq(deposits.txHash, key.txHash), eq(deposits.logIndex, key.logIndex), eq(deposits.status, 'pending')))
    .returning({ id: deposits.id });
  return rows.length > 0;
}

/**
 * A final transfer from a wallet no account owns: held until that wallet signs in. The ownership
 * test is in the statement, so a wallet linked a moment ago is credited instead (by creditDeposit).
 */
export async function markUnclaimed(db: Db, key: DepositKey, blockHash: string): Promise<boolean> {
  const rows = await db
    .update(deposits)
    .set({ status: 'unclaimed' })
    .where(
      and(
        eq(deposits.chainId, key.chainId),
        eq(deposits.txHash, key.txHash),
        eq(deposits.logIndex, key.logIndex),
        eq(deposits.status, 'pending'),
        eq(deposits.blockHash, blockHash),
        sql`${deposits.accountId} is null`,
        sql`not exists (select 1 from ${accountWallets} where ${accountWallets.address} = ${deposits.fromAddress})`,
      ),
    )
    .returning({ id: deposits.id });
  return rows.length > 0;
}

interface CreditRow {
  account_id: string | null;
  amount: string | number | bigint | null;
}

/**
 * Credits one deposit in ONE statement (so in one transaction): the row turns credited only from
 * `unclaimed`, or from `pending` in the very block the caller verified final (`blockHash`); the
 * ledger row and the balance move only with that change. Under concurrent callers the row lock
 * lets one update win and the others re-check `status` and find it credited, so nothing repeats;
 * the credits reference (unique per account) is a second guard. The account is the row's, or the
 * sender's owner now. Answers the amount credited, or null when nothing was (already credited, not
 * final in that block, or no owner).
 */
export async function creditDeposit(db: Db, key: DepositKey, blockHash: string | null): Promise<{ accountId: string; amountMicros: number } | null> {
  const statement = preparedSql<CreditRow>(
    db,
    'deposit_credit',
    sql`
      with credited as (
        update deposits d
           set status = 'credited',
               credited_at = now(),
               account_id = coalesce(d.account_id, (select w.account_id from account_wallets w where w.address = d.from_address))
         where d.chain_id = ${sql.placeholder('chainId')}::int
           and d.tx_hash = ${sql.placeholder('txHash')}::text
           and d.log_index = ${sql.placeholder('logIndex')}::int
           and (d.status = 'unclaimed' or (d.status = 'pending' and d.block_hash = ${sql.placeholder('blockHash')}::text))
           and coalesce(d.account_id, (select w.account_id from account_wallets w where w.address = d.from_address)) is not null
        returning d.id, d.account_id, d.amount_micros, d.chain_id, d.tx_hash, d.log_index, d.token, d.from_address
      ), ${balanceCreditCtes(sql`
        select ${sql.placeholder('creditId')}::text, c.account_id, c.amount_micros, 'deposit:' || c.chain_id || ':' || c.tx_hash || ':' || c.log_index
          from credited c`)},
      -- deposit.credited and balance.changed, committed with the credit they announce.
      ${accountEventCtes(
        'deposit',
        sql`select ${sql.placeholder('creditedEventId')}::text as id, c.account_id, null::text as user_id, 'deposit.credited' as type,
                   jsonb_build_object('depositId', c.id, 'chainId', c.chain_id, 'txHash', c.tx_hash, 'logIndex', c.log_index,
                                      'token', c.token, 'from', c.from_address, 'amount', ${usdSql('c.amount_micros')}) as data
              from credited c join added on added.account_id = c.account_id
            union all
            select ${sql.placeholder('balanceEventId')}::text, u.id, null::text, 'balance.changed',
                   jsonb_build_object('balance', ${usdSql('u.balance_micros')}, 'change', ${usdSql('u.amount_micros')}, 'reason', 'deposit',
                                      'depositId', (select c.id from credited c))
              from updated u`,
      )},
      -- The credit in the audit log (server/audit/log.ts), by the deposits path, in the same statement.
      audit_entry as (
        insert into audit_log (id, account_id, actor_kind, actor_id, action, target_id, details)
        select ${sql.placeholder('auditId')}::text, c.account_id, 'system', 'deposits', 'account.credited', c.id,
               jsonb_build_object('amountUsd', ${usdSql('c.amount_micros')}, 'chainId', c.chain_id, 'txHash', c.tx_hash, 'logIndex', c.log_index)
          from credited c join added on added.account_id = c.account_id
        returning id
      )
      select (select account_id from added) as account_id, (select amount_micros from added) as amount`,
  );
  // '' never equals a stored hash: without a verified block only unclaimed rows can be credited.
  const [row] = await statement.execute({
    chainId: key.chainId,
    txHash: key.txHash,
    logIndex: key.logIndex,
    blockHash: blockHash ?? '',
    creditId: newId('crd'),
    creditedEventId: newId('evt'),
    balanceEventId: newId('evt'),
    auditId: newId('aud'),
  });
  if (!row?.account_id || row.amount == null) return null;
  return { accountId: row.account_id, amountMicros: Number(row.amount) };
}

/** Unclaimed deposits whose sender some account owns by now (a sign-in linked the wallet). */
export function ownedUnclaimed(db: Db, filter: { chainId?: number; address?: string; accountId?: string; limit: number }) {
  return db
    .select({ chainId: deposits.chainId, txHash: deposits.txHash, logIndex: deposits.logIndex })
    .from(deposits)
    .innerJoin(accountWallets, eq(accountWallets.address, deposits.fromAddress))
    .where(
      and(
        eq(deposits.status, 'unclaimed'),
        filter.chainId !== undefined ? eq(deposits.chainId, filter.chainId) : undefined,
        filter.address !== undefined ? eq(deposits.fromAddress, filter.address) : undefined,
        filter.accountId !== undefined ? eq(accountWallets.accountId, filter.accountId) : undefined,
      ),
    )
    .limit(filter.limit);
}

const view = {
  id: deposits.id,
  chainId: deposits.chainId,
  txHash: deposits.txHash,
  logIndex: deposits.logIndex,
  token: deposits.token,
  from: deposits.fromAddress,
  amountMicros: deposits.amountMicros,
  status: deposits.status,
  blockNumber: deposits.blockNumber,
  creditedAt: deposits.creditedAt,
  createdAt: deposits.createdAt,
};

export interface DepositView {
  id: string;
  chainId: number;
  txHash: string;
  logIndex: number;
  token: string;
  from: string;
  /** USD, exact to the micro (6 decimals). */
  amount: number;
  status: DepositStatus;
  blockNumber: number;
  creditedAt: Date | null;
  createdAt: Date;
}

function toView({ amountMicros, ...row }: { amountMicros: number } & Omit<DepositView, 'amount'>): DepositView {
  return { ...row, amount: microsToUsd(amountMicros) };
}

/** Deposits of one account among the given logs of one transaction (a claim's answer). */
export async function depositsOfTransaction(db: Db, accountId: string, chainId: number, txHash: string, logIndexes: number[]): Promise<DepositView[]> {
  if (!logIndexes.length) return [];
  const rows = await db
    .select(view)
    .from(deposits)
    .where(and(eq(deposits.accountId, accountId), eq(deposits.chainId, chainId), eq(deposits.txHash, txHash), inArray(deposits.logIndex, logIndexes)))
    .orderBy(deposits.logIndex);
  return rows.map(toView);
}

/** One account's deposits, newest first; `total` counts them all. */
export async function listDeposits(db: Db, accountId: string, page: { limit: number; offset: number }): Promise<{ deposits: DepositView[]; total: number }> {
  const where = eq(deposits.accountId, accountId);
  const [rows, [total]] = await Promise.all([
    db.select(view).from(deposits).where(where).orderBy(desc(deposits.createdAt), desc(deposits.id)).limit(page.limit).offset(page.offset),
    db.select({ total: count() }).from(deposits).where(where),
  ]);
  return { deposits: rows.map(toView), total: total?.total ?? 0 };
}

/** The account's credited and pending deposit totals, in micro-USD (the billing summary shows them). */
export async function depositTotals(db: Db, accountId: string): Promise<{ creditedMicros: number; pendingMicros: number }> {
  const [row] = await db
    .select({
      credited: sql<string>`coalesce(sum(${deposits.amountMicros}) filter (where ${deposits.status} = 'credited'), 0)`,
      pending: sql<string>`coalesce(sum(${deposits.amountMicros}) filter (where ${deposits.status} = 'pending'), 0)`,
    })
    .from(deposits)
    .where(eq(deposits.accountId, accountId));
  return { creditedMicros: Number(row?.credited ?? 0), pendingMicros: Number(row?.pending ?? 0) };
}
