/**
 * What a live redemption reads from Polygon (server/venues/polymarket/redeemer.ts): the chain id the
 * wallet's signatures are bound to, the current block, a deposit wallet's batch nonce, payout
 * vectors, token balances, and — to finish a redemption whose record was lost — the latest transfer
 * of given tokens out of a wallet since a block (ERC-1155 TransferSingle / TransferBatch, `from`
 * indexed, so the search is one filtered log query per ledger).
 */
import { parseAbi, parseAbiItem, type Address, type PublicClient } from 'viem';
import { chainUnavailable, createPositionReader, POSITION_CONTRACTS, type MarketVersion, type TokenRef } from './position-reader.ts';
import { createResolutionReader, type ConditionPayouts } from './resolution-reader.ts';

export interface RedemptionChain {
  chainId(): Promise<number>;
  blockNumber(): Promise<bigint>;
  walletNonce(wallet: Address): Promise<bigint>;
  payoutsOf(conditionIds: string[]): Promise<Map<string, ConditionPayouts | null>>;
  balancesOf(owner: Address, tokens: TokenRef[]): Promise<Map<string, bigint>>;
  /** The hash of the latest transaction since `fromBlock` that moved any of `tokens` out of `wallet`, or null. */
  lastTransferOut(wallet: Address, tokens: TokenRef[], fromBlock: bigint): Promise<string | null>;
}

/** One log query's block range, and how many a search may make (≈ 5 days of Polygon blocks). */
const LOG_RANGE = 2_000n;
const MAX_LOG_RANGES = 100;
const WALLET = parseAbi(['function nonce() view returns (uint256)']);
const TRANSFER_SINGLE = parseAbiItem('event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value)');
const TRANSFER_BATCH = parseAbiItem('event TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values)');

export function createRedemptionChain(client: PublicClient, options: { contracts?: Partial<Record<MarketVersion, Address>> } = {}): RedemptionChain {
  const contracts = { ...POSITION_CONTRACTS, ...options.contracts };
  const positions = createPositionReader(client, { contracts });
  const resolutions = createResolutionReader(client, { conditionalTokens: contracts.v1 });
  const guard = async <T>(what: Promise<T>): Promise<T> => {
    try {
      return await what;
    } catch (error) {
      throw chainUnavailable(error);
    }
  };
  /** The latest transfer of `tokens` out of `wallet` within [from, to], on either ledger. */
  async function lastTransferIn(wallet: Address, tokens: TokenRef[], fromBlock: bigint, toBlock: bigint): Promise<string | null> {
    let latest: { block: bigint; index: number; hash: string } | null = null;
    for (const version of ['v1', 'v2'] as const) {
      const ids = new Set(tokens.filter((t) => t.version === version).map((t) => BigInt(t.tokenId)));
      if (!ids.size) continue;
      const [singles, batches] = await guard(
        Promise.all([
          client.getLogs({ address: contracts[version], event: TRANSFER_SINGLE, args: { from: wallet }, fromBlock, toBlock }),
          client.getLogs({ address: contracts[version], event: TRANSFER_BATCH, args: { from: wallet }, fromBlock, toBlock }),
        ]),
      );
      const moved = [...singles.filter((l) => ids.has(l.args.id!)), ...batches.filter((l) => l.args.ids!.some((id) => ids.has(id)))];
      for (const log of moved) {
        if (!latest || log.blockNumber! > latest.block || (log.blockNumber === latest.block && log.logIndex! > latest.index)) {
          latest = { block: log.blockNumber!, index: log.logIndex!, hash: log.transactionHash! };
        }
      }
    }
    return latest?.hash ?? null;
  }
  return {
    chainId: () => guard(client.getChainId()),
    blockNumber: () => guard(client.getBlockNumber({ cacheTime: 0 })),
    walletNonce: (wallet) => guard(client.readContract({ address: wallet, abi: WALLET, functionName: 'nonce' })),
    payoutsOf: (conditionIds) => resolutions.payoutsOf(conditionIds),
    balancesOf: (owner, tokens) => positions.balancesOf(owner, tokens),
    async lastTransferOut(wallet, tokens, fromBlock) {
      // Backwards from the newest block in bounded ranges (RPC providers cap a log query's range):
      // the redemption we look for is usually recent, and the search stops at the first match.
      const latest = await guard(client.getBlockNumber({ cacheTime: 0 }));
      for (let to = latest, ranges = 0; to >= fromBlock && ranges < MAX_LOG_RANGES; ranges++) {
        const from = to - LOG_RANGE + 1n > fromBlock ? to - LOG_RANGE + 1n : fromBlock;
        const hash = await lastTransferIn(wallet, tokens, from, to);
        if (hash) return hash;
        to = from - 1n;
      }
      return null;
    },
  };
}
