/**
 * What deposit verification reads from Polygon: the chain id, the finalized and latest
 * block numbers, a transaction's receipt, a block's hash, and the ERC-20 Transfer logs of one token
 * to the deposit address in a block range (`to` is indexed, so the node filters them for us).
 *
 * Every RPC failure becomes ChainUnavailable (the caller answers VENUE_UNAVAILABLE, or the watcher
 * retries on its next pass); "no such receipt" or "no such block" is an answer (null), not a failure.
 */
import { parseAbiItem, TransactionReceiptNotFoundError, type Address, type Hex, type PublicClient } from 'viem';
import { chainUnavailable, ChainUnavailable } from '../chain/position-reader.ts';

export { ChainUnavailable };

/** One log as both a receipt and eth_getLogs give it (what verify.ts decodes). */
export interface ChainLog {
  address: Address;
  topics: readonly Hex[];
  data: Hex;
  logIndex: number;
  transactionHash: Hex;
  blockNumber: bigint;
  blockHash: Hex;
}

export interface DepositReceipt {
  transactionHash: Hex;
  status: 'success' | 'reverted';
  blockNumber: bigint;
  blockHash: Hex;
  logs: ChainLog[];
}

export interface DepositChain {
  chainId(): Promise<number>;
  /** The newest block that can no longer be reorganised away. */
  finalizedBlock(): Promise<bigint>;
  latestBlock(): Promise<bigint>;
  /** The receipt of a mined transaction on the canonical chain, or null (unknown, pending, or reorganised away). */
  receipt(txHash: Hex): Promise<DepositReceipt | null>;
  /** Transfer logs of `token` whose recipient is `to`, in [fromBlock, toBlock] (the caller bounds the range). */
  transferLogs(token: Address, to: Address, fromBlock: bigint, toBlock: bigint): Promise<ChainLog[]>;
  /** The canonical block hash at height `n`, or null when the chain is not that long. */
  blockHash(n: bigint): Promise<Hex | null>;
}

export const TRANSFER_EVENT = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

export interface DepositChainOptions {
  /**
   * Finality as "latest − depth" instead of the node's `finalized` block tag. Only for chains whose
   * node has no real finality: the in-process EVM of the tests (EDR) answers `finalized` with the
   * latest block, so without a depth every block would be final at once and pending deposits and
   * reorganisations could not be tested. Unset on Polygon, whose `finalized` tag is real.
   */
  finalityDepth?: number;
}

function toChainLog(log: {
  address: Address;
  topics: readonly Hex[];
  data: Hex;
  logIndex: number | null;
  transactionHash: Hex | null;
  blockNumber: bigint | null;
  blockHash: Hex | null;
}): ChainLog | null {
  // Logs of a pending block carry null positions: not a deposit we could ever point to.
  if (log.logIndex == null || log.transactionHash == null || log.blockNumber == null || log.blockHash == null) return null;
  return {
    address: log.address,
    topics: log.topics,
    data: log.data,
    logIndex: log.logIndex,
    transactionHash: log.transactionHash,
    blockNumber: log.blockNumber,
    blockHash: log.blockHash,
  };
}

export function createDepositChain(client: PublicClient, options: DepositChainOptions = {}): DepositChain {
  const guard = async <T>(what: () => Promise<T>): Promise<T> => {
    try {
      return await what();
    } catch (error) {
      throw chainUnavailable(error);
    }
  };
  // viem caches getBlockNumber for 4 s by default; finality decisions must see the current head.
  const latestBlock = () => guard(() => client.getBlockNumber({ cacheTime: 0 }));
  let chainId: Promise<number> | undefined;
  return {
    chainId() {
      // A node never changes its chain id; a failed read is not kept, so the next call retries.
      chainId ??= guard(() => client.getChainId()).catch((error) => {
        chainId = undefined;
        throw error;
      });
      return chainId;
    },
    latestBlock,
    async finalizedBlock() {
      if (options.finalityDepth !== undefined) {
        const latest = await latestBlock();
        const depth = BigInt(options.finalityDepth);
        return latest > depth ? latest - depth : 0n;
      }
      const block = await guard(() => client.getBlock({ blockTag: 'finalized' }));
      return block.number;
    },
    async receipt(txHash) {
      const receipt = await guard(async () => {
        try {
          return await client.getTransactionReceipt({ hash: txHash });
        } catch (error) {
          if (error instanceof TransactionReceiptNotFoundError) return null;
          throw error;
        }
      });
      if (!receipt) return null;
      return {
        transactionHash: receipt.transactionHash,
        status: receipt.status,
        blockNumber: receipt.blockNumber,
        blockHash: receipt.blockHash,
        logs: receipt.logs.map(toChainLog).filter((l): l is ChainLog => l !== null),
      };
    },
    async transferLogs(token, to, fromBlock, toBlock) {
      const logs = await guard(() => client.getLogs({ address: token, event: TRANSFER_EVENT, args: { to }, fromBlock, toBlock, strict: true }));
      // A log flagged `removed` belongs to a block already reorganised away.
      return logs.filter((l) => !l.removed).map(toChainLog).filter((l): l is ChainLog => l !== null);
    },
    async blockHash(n) {
      const block = await guard(async () => {
        try {
          return await client.getBlock({ blockNumber: n });
        } catch (error) {
          if ((error as Error)?.name === 'BlockNotFoundError') return null;
          throw error;
        }
      });
      return block?.hash ?? null;
    },
  };
}
