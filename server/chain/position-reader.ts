/**
 * ERC-1155 position balances on Polygon. Polymarket markets of `version` "v1" keep their outcome
 * tokens on the Conditional Tokens contract, "v2" markets on the PositionManager; both answer
 * `balanceOfBatch`. Balances are 6-decimal share units, held by the funder (deposit) wallet.
 */
import { createPublicClient, http, parseAbi, type Address, type PublicClient } from 'viem';
import { polygon } from 'viem/chains';
import { errorFirstLine } from '../lib/error-message.ts';

export type MarketVersion = 'v1' | 'v2';

export const POSITION_CONTRACTS: Record<MarketVersion, Address> = {
  v1: '0x4D97DCd97eC945f40cF65F87097ACe5EA0476045',
  v2: '0x006F54F7f9A22e0000CC2AB60031000000ae9fEF',
};

export interface TokenRef {
  /** Decimal uint256. */
  tokenId: string;
  version: MarketVersion;
}

export interface PositionReader {
  /** Balance of every token (0n for tokens not held), keyed by token id. */
  balancesOf(owner: Address, tokens: TokenRef[]): Promise<Map<string, bigint>>;
}

/** The RPC could not answer; callers map it to VENUE_UNAVAILABLE. */
export class ChainUnavailable extends Error {
  override name = 'ChainUnavailable';
}

/** A failed RPC call as ChainUnavailable (unchanged if it is one), with the first line of the failure. */
export function chainUnavailable(error: unknown): ChainUnavailable {
  if (error instanceof ChainUnavailable) return error;
  return new ChainUnavailable(`Polygon RPC failed: ${errorFirstLine(error)}`, { cause: error });
}

const ERC1155 = parseAbi(['function balanceOfBatch(address[] accounts, uint256[] ids) view returns (uint256[])']);

export function createPositionReader(client: PublicClient, options: { batchSize?: number; contracts?: Partial<Record<MarketVersion, Address>> } = {}): PositionReader {
  const batchSize = options.batchSize ?? 200;
  const contracts = { ...POSITION_CONTRACTS, ...options.contracts };
  return {
    async balancesOf(owner, tokens) {
      const result = new Map<string, bigint>();
      const calls: Promise<void>[] = [];
      for (const version of ['v1', 'v2'] as const) {
        const ids = [...new Set(tokens.filter((t) => t.version === version).map((t) => t.tokenId))];
        for (let i = 0; i < ids.length; i += batchSize) {
          const batch = ids.slice(i, i + batchSize);
          calls.push(
            client
              .readContract({ address: contracts[version], abi: ERC1155, functionName: 'balanceOfBatch', args: [batch.map(() => owner), batch.map((id) => BigInt(id))] })
              .then((balances) => batch.forEach((id, k) => result.set(id, balances[k] ?? 0n))),
          );
        }
      }
      try {
        await Promise.all(calls);
      } catch (error) {
        throw chainUnavailable(error);
      }
      return result;
    },
  };
}

export function createPolygonClient(rpcUrl: string, options: { timeoutMs?: number } = {}): PublicClient {
  return createPublicClient({ chain: polygon, transport: http(rpcUrl, { timeout: options.timeoutMs ?? 10_000, retryCount: 1 }) }) as PublicClient;
}
