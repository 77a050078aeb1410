/**
 * A market's resolution as the chain records it: the Conditional Tokens contract's payout vector for
 * the market's condition (`payoutDenominator(conditionId)` is 0 until the oracle reports, then each
 * `payoutNumerators(conditionId, i)` is outcome i's share). Neg-risk markets' conditions live on the
 * same contract (the adapter is their oracle), so one reader serves both. Polymarket's binary
 * markets have two outcomes; their order is Gamma's `outcomes` order (Yes first).
 */
import { parseAbi, type Address, type Hex, type PublicClient } from 'viem';
import { chainUnavailable, POSITION_CONTRACTS } from './position-reader.ts';

export interface ConditionPayouts {
  /** Outcome i's numerator; `denominator` is their sum. */
  numerators: bigint[];
  denominator: bigint;
}

export interface ResolutionReader {
  /** Each condition's reported payouts, or null while the oracle has not reported. */
  payoutsOf(conditionIds: string[]): Promise<Map<string, ConditionPayouts | null>>;
}

const CTF = parseAbi(['function payoutDenominator(bytes32 conditionId) view returns (uint256)', 'function payoutNumerators(bytes32 conditionId, uint256 index) view returns (uint256)']);
const OUTCOMES = 2;

export const isConditionId = (value: unknown): value is Hex => typeof value === 'string' && /^0x[0-9a-fA-F]{64}$/.test(value);

export function createResolutionReader(client: PublicClient, options: { conditionalTokens?: Address } = {}): ResolutionReader {
  const address = options.conditionalTokens ?? POSITION_CONTRACTS.v1;
  const read = (functionName: 'payoutDenominator' | 'payoutNumerators', args: readonly unknown[]) => client.readContract({ address, abi: CTF, functionName, args } as any) as Promise<bigint>;
  return {
    async payoutsOf(conditionIds) {
      const result = new Map<string, ConditionPayouts | null>();
      try {
        await Promise.all(
          [...new Set(conditionIds.filter(isConditionId))].map(async (conditionId) => {
            const denominator = await read('payoutDenominator', [conditionId]);
            if (denominator === 0n) return void result.set(conditionId, null);
            const numerators = await Promise.all(Array.from({ length: OUTCOMES }, (_, i) => read('payoutNumerators', [conditionId, BigInt(i)])));
            result.set(conditionId, { numerators, denominator });
          }),
        );
      } catch (error) {
        throw chainUnavailable(error);
      }
      return result;
    },
  };
}
