/**
 * How claims read receipts: a claim names any hash it likes, so without a guard every
 * claim is a Polygon RPC call paid by the operator. Two rules, per instance, for claims only (the
 * watcher and finalisation read the chain directly):
 *
 * - **Single flight**: concurrent claims of one hash share one `receipt` read.
 * - **Not-found cache**: a hash the chain did not know is answered "unknown" without reading again
 *   for `ttlMs`. Short on purpose: a transaction sent but not mined yet is unknown too, and appears a
 *   few blocks later (Polygon: ~2 s a block); its deposit is never lost meanwhile, since the watcher
 *   finds it without a claim. At most `maxEntries` hashes are kept, the oldest dropped first: with one
 *   TTL for all, insertion order is expiry order, so the map's first entries are the stale ones.
 */
import type { Hex } from 'viem';
import type { DepositChain, DepositReceipt } from './chain.ts';

export interface NotFoundOptions {
  ttlMs: number;
  maxEntries: number;
}

export type ReadReceipt = (txHash: Hex) => Promise<DepositReceipt | null>;

export function guardedReceipts(chain: DepositChain, options: NotFoundOptions, now: () => number = () => performance.now()): ReadReceipt {
  const inFlight = new Map<string, Promise<DepositReceipt | null>>();
  /** Unknown hash → when it may be read again. */
  const unknown = new Map<string, number>();

  const remember = (hash: string) => {
    if (options.ttlMs <= 0) return;
    const at = now();
    for (const [old, until] of unknown) {
      if (until > at && unknown.size < options.maxEntries) break;
      unknown.delete(old);
    }
    unknown.delete(hash); // re-inserted at the end: order stays expiry order
    unknown.set(hash, at + options.ttlMs);
  };

  return (txHash) => {
    const hash = txHash.toLowerCase();
    const until = unknown.get(hash);
    if (until !== undefined) {
      if (until > now()) return Promise.resolve(null);
      unknown.delete(hash);
    }
    let read = inFlight.get(hash);
    if (!read) {
      read = chain
        .receipt(hash as Hex)
        .then((receipt) => {
          if (!receipt) remember(hash);
          return receipt;
        })
        .finally(() => inFlight.delete(hash));
      inFlight.set(hash, read);
    }
    return read;
  };
}

/** One guard per deposit chain (that is, per instance's services), built on first use. */
const guards = new WeakMap<DepositChain, ReadReceipt>();

export function claimReceipts(chain: DepositChain, options: NotFoundOptions = { ttlMs: 10_000, maxEntries: 10_000 }): ReadReceipt {
  let guard = guards.get(chain);
  if (!guard) guards.set(chain, (guard = guardedReceipts(chain, options)));
  return guard;
}
