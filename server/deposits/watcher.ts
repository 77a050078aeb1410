/**
 * The deposit watcher: finds transfers to the deposit address nobody claimed, by reading
 * each accepted token's Transfer logs (recipient = the deposit address) from a stored cursor per
 * (chain, token) to the latest block, in bounded ranges (RPC providers cap a log query's range).
 *
 * The cursor never passes the finalized height: blocks above it may still be reorganised, so every
 * pass reads them again — a transfer that moved to another block is then seen where it is now, and
 * recording is idempotent. Any number of watchers may run (several server instances): rows are
 * unique per log, the cursor only moves forward, and crediting is one conditional statement.
 */
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { depositScans } from '../../db/schema.ts';
import { startJob, type Job, type JobRecorder } from '../lib/jobs.ts';
import type { Logger } from '../lib/logger.ts';
import type { DepositChain } from './chain.ts';
import { depositRules, finalizeDeposits, type DepositConfig, type FinalizeResult } from './deposits.ts';
import { recordDeposit } from './store.ts';
import { classifyTransfers } from './verify.ts';
import { errorMessage } from '../lib/error-message.ts';

/** One log query's block range (≈ 1 hour of Polygon blocks) and how many one pass makes per token. */
const LOG_RANGE = 2_000n;
const MAX_RANGES_PER_PASS = 25;
/** Without a cursor (first start), how far below the finalized block the first scan begins (≈ 3 hours). */
const FIRST_SCAN_WINDOW = 5_000n;

export interface ScanResult {
  /** Deposit transfers seen this pass (new or already recorded). */
  seen: number;
  /** The cursor per token after the pass (-1: nothing scanned yet). */
  scannedThrough: Record<string, number>;
  finalize: FinalizeResult;
}

async function cursorOf(db: Db, id: string): Promise<bigint | null> {
  const [row] = await db.select({ scannedThrough: depositScans.scannedThrough }).from(depositScans).where(eq(depositScans.id, id));
  return row ? BigInt(row.scannedThrough) : null;
}

/** Moves the cursor forward only: a slower watcher finishing an older range never moves it back. */
async function advanceCursor(db: Db, id: string, through: bigint): Promise<void> {
  await db
    .insert(depositScans)
    .values({ id, scannedThrough: Number(through) })
    .onConflictDoUpdate({
      target: depositScans.id,
      set: { scannedThrough: sql`greatest(${depositScans.scannedThrough}, excluded.scanned_through)`, updatedAt: sql`now()` },
    });
}

/** One watcher pass: scan every accepted token from its cursor, then settle what became final. */
export async function scanDeposits(db: Db, chain: DepositChain, config: DepositConfig, options: { onError?: (txHash: string, error: unknown) => void } = {}): Promise<ScanResult> {
  const rules = depositRules(config);
  const result: ScanResult = { seen: 0, scannedThrough: {}, finalize: { credited: 0, dropped: 0, failed: 0 } };
  if (!rules) return result;
  const chainId = await chain.chainId();
  const finalized = await chain.finalizedBlock();
  const latest = await chain.latestBlock();
  for (const token of rules.tokens) {
    const id = `${chainId}:${token}`;
    const cursor = await cursorOf(db, id);
    let next = cursor !== null ? cursor + 1n : finalized > FIRST_SCAN_WINDOW ? finalized - FIRST_SCAN_WINDOW : 0n;
    let through = cursor ?? -1n;
    for (let ranges = 0; next <= latest && ranges < MAX_RANGES_PER_PASS; ranges++) {
      const end = next + LOG_RANGE - 1n < latest ? next + LOG_RANGE - 1n : latest;
      const logs = await chain.transferLogs(token as `0x${string}`, rules.address as `0x${string}`, next, end);
      for (const log of logs) {
        // The node filtered by token and recipient; the log is still judged as a receipt's would be.
        for (const transfer of classifyTransfers([log], rules).deposits) {
          const key = { chainId, txHash: log.transactionHash.toLowerCase(), logIndex: transfer.logIndex };
          await recordDeposit(db, key, { number: log.blockNumber, hash: log.blockHash.toLowerCase() }, transfer);
          result.seen++;
        }
      }
      const safe = end < finalized ? end : finalized;
      if (safe > through) {
        await advanceCursor(db, id, safe);
        through = safe;
      }
      next = end + 1n;
    }
    result.scannedThrough[token] = Number(through);
  }
  result.finalize = await finalizeDeposits(db, chain, config, options);
  return result;
}

/**
 * Runs `scanDeposits` every `config.scanIntervalMs` (0, or no deposit address: off) under the job
 * runner's rules (server/lib/jobs.ts): passes never overlap, a failing pass (the RPC down) is logged
 * and retried with backoff, stop() aborts and waits.
 */
export function startDepositWatcher(input: { db: Db; chain: DepositChain; config: DepositConfig; logger: Logger; jobs?: JobRecorder }): Job {
  const { db, chain, config, logger } = input;
  const onError = (txHash: string, error: unknown) => logger.warn('settling a deposit failed; the next pass retries it', { txHash, error: errorMessage(error) });
  return startJob({
    name: 'deposit_scan',
    intervalMs: depositRules(config) ? config.scanIntervalMs : 0,
    logger,
    metrics: input.jobs,
    run: async () => {
      const r = await scanDeposits(db, chain, config, { onError });
      if (r.finalize.credited || r.finalize.dropped) logger.info('deposit pass', { credited: r.finalize.credited, dropped: r.finalize.dropped });
      return r;
    },
  });
}
