/**
 * Pure decoding of ERC-20 Transfer logs into deposits. A deposit is judged only from the
 * logs a token contract emitted — token, recipient, amount, sender — never from a transaction's
 * `value` or what a client claims. Accepted tokens are 6-decimal USD stablecoins (USDC, USDC.e), so
 * one token unit is one micro-USD and the amount is taken as is.
 */
import { decodeEventLog, type Hex } from 'viem';
import { TRANSFER_EVENT, type ChainLog } from './chain.ts';

/** An ERC-20 Transfer, addresses in lower case. */
export interface TokenTransfer {
  logIndex: number;
  token: string;
  from: string;
  to: string;
  value: bigint;
}

/** A transfer of an accepted token to the deposit address, in micro-USD. */
export interface DepositTransfer {
  logIndex: number;
  token: string;
  from: string;
  to: string;
  amountMicros: number;
}

export interface DepositRules {
  /** The deposit address, lower case. */
  address: string;
  /** Accepted token contracts, lower case. */
  tokens: readonly string[];
  minMicros: number;
}

/** What a receipt (or a set of logs) carries, sorted by what a claim needs to say about it. */
export interface TransferVerdict {
  /** Accepted token, to the deposit address, at least the minimum: these are credited. */
  deposits: DepositTransfer[];
  /** Accepted token, to the deposit address, below the minimum (or beyond any plausible amount). */
  belowMinimum: DepositTransfer[];
  /** Some other token sent to the deposit address. */
  wrongToken: TokenTransfer[];
  /** An accepted token sent somewhere else. */
  wrongRecipient: TokenTransfer[];
}

const TRANSFER_ABI = [TRANSFER_EVENT] as const;

/**
 * The ERC-20 Transfers among `logs`. Anything else is skipped, including ERC-721 Transfers (same
 * topic, but the token id is a fourth indexed topic and there is no data), which do not decode here.
 */
export function decodeTransfers(logs: readonly ChainLog[]): TokenTransfer[] {
  const transfers: TokenTransfer[] = [];
  for (const log of logs) {
    if (log.topics.length !== 3) continue;
    try {
      const event = decodeEventLog({ abi: TRANSFER_ABI, topics: log.topics as [Hex, ...Hex[]], data: log.data, strict: true });
      transfers.push({
        logIndex: log.logIndex,
        token: log.address.toLowerCase(),
        from: event.args.from.toLowerCase(),
        to: event.args.to.toLowerCase(),
        value: event.args.value,
      });
    } catch {
      // Not a Transfer of the ERC-20 shape: not a deposit.
    }
  }
  return transfers;
}

export function classifyTransfers(logs: readonly ChainLog[], rules: DepositRules): TransferVerdict {
  const verdict: TransferVerdict = { deposits: [], belowMinimum: [], wrongToken: [], wrongRecipient: [] };
  const accepted = new Set(rules.tokens.map((t) => t.toLowerCase()));
  const address = rules.address.toLowerCase();
  for (const t of decodeTransfers(logs)) {
    const known = accepted.has(t.token);
    if (t.to !== address) {
      if (known) verdict.wrongRecipient.push(t);
      continue;
    }
    if (!known) {
      verdict.wrongToken.push(t);
      continue;
    }
    // Above 2^53 micro-USD (9 billion USD) a JS number is no longer exact: never credited.
    const exact = t.value <= BigInt(Number.MAX_SAFE_INTEGER);
    const deposit = { logIndex: t.logIndex, token: t.token, from: t.from, to: t.to, amountMicros: exact ? Number(t.value) : 0 };
    if (exact && deposit.amountMicros >= rules.minMicros && deposit.amountMicros > 0) verdict.deposits.push(deposit);
    else verdict.belowMinimum.push(deposit);
  }
  return verdict;
}
