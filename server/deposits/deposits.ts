/**
 * Stablecoin deposits verified on chain. A customer sends USDC (or USDC.e) from a wallet
 * of their account to the operator's deposit address; the transfer is credited once its block is
 * final, exactly once per (chain id, transaction hash, log index), by whichever path sees it first:
 * a claim (`claimDeposit`, the customer names the transaction) or the watcher (`scanDeposits` in
 * watcher.ts, which reads the tokens' Transfer logs to the deposit address; it imports this file,
 * so import it from there, not through here). Both verify the same way: from the receipt's logs,
 * re-read when the block is final, so a reorganisation never credits a transfer that disappeared.
 */
import { and, asc, eq, inArray, lte, min } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { accountWallets, deposits } from '../../db/schema.ts';
import { requireAccount } from '../accounts/accounts.ts';
import type { Config } from '../config.ts';
import { ApiError } from '../errors.ts';
import { formatUsd } from '../lib/money.ts';
import { ChainUnavailable, type DepositChain, type DepositReceipt } from './chain.ts';
import type { ReadReceipt } from './claim-reads.ts';
import { creditDeposit, depositsOfTransaction, markDropped, markUnclaimed, ownedUnclaimed, pendingRowsOf, recordDeposit, type DepositView } from './store.ts';
import { classifyTransfers, type DepositRules } from './verify.ts';

export { listDeposits, type DepositView } from './store.ts';
export type DepositConfig = Config['deposits'];

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

/** The deposit rules, or null when the operator configured no deposit address (deposits off). */
export function depositRules(config: DepositConfig): DepositRules | null {
  if (!config.address) return null;
  return { address: config.address.toLowerCase(), tokens: config.tokens.map((t) => t.toLowerCase()), minMicros: config.minMicros };
}

/** A chain failure during a request: the caller may retry, nothing about the claim is wrong. */
async function onChain<T>(what: Promise<T>): Promise<T> {
  try {
    return await what;
  } catch (error) {
    if (error instanceof ChainUnavailable) throw new ApiError('VENUE_UNAVAILABLE', 'The Polygon RPC did not answer; retry shortly', { cause: error });
    throw error;
  }
}

/** True when `receipt`'s block is final and still the canonical block at its height. */
async function isFinal(chain: DepositChain, receipt: DepositReceipt, finalized: bigint): Promise<boolean> {
  if (receipt.blockNumber > finalized) return false;
  // The receipt and the finalized height were read separately: only a matching hash proves the
  // receipt came from the block that is now final (else the next pass looks again).
  return (await chain.blockHash(receipt.blockNumber))?.toLowerCase() === receipt.blockHash.toLowerCase();
}

/** True when the canonical block at `height` is another block than `hash` (null: the node does not know the height yet). */
async function replaced(chain: DepositChain, height: number, hash: string): Promise<boolean> {
  const canonical = await chain.blockHash(BigInt(height));
  return canonical !== null && canonical.toLowerCase() !== hash.toLowerCase();
}

export interface SettleResult {
  credited: number;
  dropped: number;
}

/**
 * Brings one transaction's deposit rows in line with its receipt now: pending rows whose log the
 * receipt no longer carries are dropped, the receipt's deposits are recorded (or follow a moved
 * block), and — when the block is final — credited, or held unclaimed when no account owns the
 * sender. `receipt` saves a second read when the caller has just fetched it.
 */
export async function settleTransaction(
  db: Db,
  chain: DepositChain,
  rules: DepositRules,
  input: { chainId: number; txHash: string; finalized: bigint; receipt?: DepositReceipt | null },
): Promise<SettleResult> {
  const result: SettleResult = { credited: 0, dropped: 0 };
  const txHash = input.txHash.toLowerCase();
  const receipt = input.receipt !== undefined ? input.receipt : await chain.receipt(txHash as `0x${string}`);
  const transfers = receipt?.status === 'success' ? classifyTransfers(receipt.logs, rules).deposits : [];
  const byIndex = new Map(transfers.map((t) => [t.logIndex, t]));
  for (const row of await pendingRowsOf(db, input.chainId, txHash)) {
    const now = byIndex.get(row.logIndex);
    const same = now && now.token === row.token && now.from === row.fromAddress && now.to === row.toAddress && now.amountMicros === row.amountMicros;
    if (same) continue;
    // No receipt at all may be a lagging RPC node, not a reorganisation: drop only once the block
    // the log was seen in is provably gone (another block at its height).
    if (!receipt && !(await replaced(chain, row.blockNumber, row.blockHash))) continue;
    if (await markDropped(db, { chainId: input.chainId, txHash, logIndex: row.logIndex })) result.dropped++;
  }
  if (!receipt || !transfers.length) return result;
  const block = { number: receipt.blockNumber, hash: receipt.blockHash.toLowerCase() };
  for (const t of transfers) await recordDeposit(db, { chainId: input.chainId, txHash, logIndex: t.logIndex }, block, t);
  if (!(await isFinal(chain, receipt, input.finalized))) return result;
  for (const t of transfers) {
    const key = { chainId: input.chainId, txHash, logIndex: t.logIndex };
    if (await creditDeposit(db, key, block.hash)) result.credited++;
    else await markUnclaimed(db, key, block.hash);
  }
  return result;
}

/**
 * A customer's claim of a transfer they sent (`txHash`). Answers the claimed deposits (credited, or
 * pending until the block is final); refuses with BAD_REQUEST / NOT_FOUND what cannot be credited to
 * this account. Repeating a claim changes nothing. `readReceipt` replaces the direct receipt read
 * (the HTTP route passes claim-reads.ts's guard: one read per hash, unknown hashes remembered).
 */
export async function claimDeposit(
  db: Db,
  chain: DepositChain,
  config: DepositConfig,
  input: { accountId: string; txHash: string },
  options: { readReceipt?: ReadReceipt } = {},
): Promise<{ deposits: DepositView[] }> {
  const rules = depositRules(config);
  if (!rules) throw new ApiError('NOT_FOUND', 'Deposits are not enabled on this server');
  if (!TX_HASH.test(input.txHash)) throw new ApiError('BAD_REQUEST', 'txHash: expected 0x followed by 64 hexadecimal digits');
  const txHash = input.txHash.toLowerCase();
  await requireAccount(db, input.accountId);
  const chainId = await onChain(chain.chainId());
  // The receipt first, so an unknown hash costs one read, not two. Reading the finalized height after
  // it is as safe as before: isFinal still requires the receipt's block hash to be the canonical one
  // at its height, read after the finalized height (so from a block that was final by then).
  const receipt = await onChain((options.readReceipt ?? ((hash) => chain.receipt(hash)))(txHash as `0x${string}`));
  if (!receipt) throw new ApiError('NOT_FOUND', `No mined transaction ${txHash} on chain ${chainId}; check the hash, or claim again once it is mined (an unknown hash is looked up again after DEPOSIT_NOT_FOUND_TTL_MS, 10 s by default)`);
  if (receipt.status !== 'success') throw new ApiError('BAD_REQUEST', `Transaction ${txHash} reverted: it transferred nothing`);

  const verdict = classifyTransfers(receipt.logs, rules);
  if (!verdict.deposits.length) throw new ApiError('BAD_REQUEST', whyNotADeposit(txHash, rules, verdict));
  const finalized = await onChain(chain.finalizedBlock());

  const senders = [...new Set(verdict.deposits.map((d) => d.from))];
  const owners = new Map(
    (await db.select({ address: accountWallets.address, accountId: accountWallets.accountId }).from(accountWallets).where(inArray(accountWallets.address, senders))).map((w) => [w.address, w.accountId]),
  );
  // Every deposit of the transaction is recorded, whoever sent it: the watcher would record it
  // anyway, and a transfer from an unknown wallet is then held for that wallet's sign-in.
  await onChain(settleTransaction(db, chain, rules, { chainId, txHash, finalized, receipt }));

  const mine = verdict.deposits.filter((d) => owners.get(d.from) === input.accountId);
  if (!mine.length) {
    // One answer whether the sender belongs to another account or to none: a claim must not reveal
    // which wallets are customers here (transfers to the deposit address are public on chain).
    const sender = verdict.deposits[0]!.from;
    throw new ApiError(
      'BAD_REQUEST',
      `The sender ${sender} of this transfer is not a wallet of your account; claim only transfers sent from wallets you signed in with (a transfer from a wallet with no account yet is credited when that wallet first signs in)`,
    );
  }
  return {
    deposits: await depositsOfTransaction(
      db,
      input.accountId,
      chainId,
      txHash,
      mine.map((d) => d.logIndex),
    ),
  };
}

function whyNotADeposit(txHash: string, rules: DepositRules, verdict: ReturnType<typeof classifyTransfers>): string {
  const small = verdict.belowMinimum[0];
  if (small) return `Deposits below the minimum of ${formatUsd(rules.minMicros)} USD are not credited (transaction ${txHash} sent ${formatUsd(small.amountMicros)} USD)`;
  const other = verdict.wrongToken[0];
  if (other) return `Transaction ${txHash} sent token ${other.token}, which this server does not accept; accepted tokens: ${rules.tokens.join(', ')}`;
  const elsewhere = verdict.wrongRecipient[0];
  if (elsewhere) return `Transaction ${txHash} sent ${elsewhere.token} to ${elsewhere.to}, not to the deposit address ${rules.address}`;
  return `Transaction ${txHash} carries no transfer of an accepted token (${rules.tokens.join(', ')}) to the deposit address ${rules.address}`;
}

/** How many rows one finalisation pass looks at; the rest wait for the next pass. */
const FINALIZE_BATCH = 200;

export interface FinalizeResult extends SettleResult {
  /** Transactions whose settlement failed this pass (logged; the next pass retries them). */
  failed: number;
}

/**
 * Settles every pending deposit whose block is at or below the finalized height (re-reading its
 * receipt), and credits unclaimed deposits whose sender has since been linked to an account (a
 * sign-in that raced with the row becoming unclaimed).
 */
export async function finalizeDeposits(db: Db, chain: DepositChain, config: DepositConfig, options: { onError?: (txHash: string, error: unknown) => void } = {}): Promise<FinalizeResult> {
  const result: FinalizeResult = { credited: 0, dropped: 0, failed: 0 };
  const rules = depositRules(config);
  if (!rules) return result;
  const chainId = await chain.chainId();
  const finalized = await chain.finalizedBlock();
  for (const txHash of await pendingTransactions(db, chainId, finalized)) {
    try {
      const settled = await settleTransaction(db, chain, rules, { chainId, txHash, finalized });
      result.credited += settled.credited;
      result.dropped += settled.dropped;
    } catch (error) {
      // A chain outage fails the whole pass; one transaction's database trouble must not stop the others.
      if (error instanceof ChainUnavailable) throw error;
      result.failed++;
      options.onError?.(txHash, error);
    }
  }
  for (const key of await ownedUnclaimed(db, { chainId, limit: FINALIZE_BATCH })) {
    if (await creditDeposit(db, key, null)) result.credited++;
  }
  return result;
}

async function pendingTransactions(db: Db, chainId: number, finalized: bigint): Promise<string[]> {
  const rows = await db
    .select({ txHash: deposits.txHash })
    .from(deposits)
    .where(and(eq(deposits.chainId, chainId), eq(deposits.status, 'pending'), lte(deposits.blockNumber, Number(finalized))))
    .groupBy(deposits.txHash)
    .orderBy(asc(min(deposits.blockNumber)))
    .limit(FINALIZE_BATCH);
  return rows.map((r) => r.txHash);
}

/**
 * Credits the deposits held for `address` (unclaimed: sent from it before any account owned it) to
 * `accountId` — the sign-in code calls it when the wallet is linked. Only if `accountId` really owns
 * the wallet: a wrong call credits nothing. Safe to repeat and to race with the watcher.
 */
export async function creditUnclaimedFor(db: Db, address: string, accountId: string): Promise<{ credited: number; amountMicros: number }> {
  const result = { credited: 0, amountMicros: 0 };
  for (;;) {
    const keys = await ownedUnclaimed(db, { address: address.toLowerCase(), accountId, limit: FINALIZE_BATCH });
    let progressed = false;
    for (const key of keys) {
      const credited = await creditDeposit(db, key, null);
      if (credited?.accountId === accountId) {
        result.credited++;
        result.amountMicros += credited.amountMicros;
      }
      progressed ||= credited !== null;
    }
    // A full batch may hide more rows; a batch another caller credited first ends the loop too.
    if (keys.length < FINALIZE_BATCH || !progressed) return result;
  }
}
