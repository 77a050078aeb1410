/**
 * A batch of calls a Polymarket deposit wallet executes for us (redemptions), signed by the user's
 * session key: EIP-712 `Batch(address wallet,uint256 nonce,uint256 deadline,Call[] calls)` in the
 * wallet's own domain ("DepositWallet", version "1"). A session key's signature travels in an
 * envelope, `abi.encode(bytes32 signer, bytes32 0, bytes signature)` followed by the ERC-6492 magic
 * suffix, which tells the wallet to check it against its authorised session signers rather than its
 * owner. Polymarket's relayer submits the batch through the wallet factory and pays the gas.
 * Sources: docs.polymarket.com/trading/session-keys; README "Redemption on the live venue".
 */
import { concatHex, encodeAbiParameters, hashTypedData, pad, type Address, type Hex } from 'viem';
import type { LocalAccount } from 'viem/accounts';

export interface WalletCall {
  target: Address;
  value: bigint;
  data: Hex;
}

export interface WalletBatch {
  wallet: Address;
  nonce: bigint;
  /** Unix seconds: the wallet refuses the batch after it. */
  deadline: bigint;
  calls: WalletCall[];
}

export const BATCH_TYPES = {
  Call: [
    { name: 'target', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'data', type: 'bytes' },
  ],
  Batch: [
    { name: 'wallet', type: 'address' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
    { name: 'calls', type: 'Call[]' },
  ],
} as const;

const ERC6492_SUFFIX: Hex = '0x6492649264926492649264926492649264926492649264926492649264926492';

export const batchDomain = (wallet: Address, chainId: number) => ({ name: 'DepositWallet', version: '1', chainId, verifyingContract: wallet }) as const;

/** What the wallet checks the signature against. */
export const batchDigest = (batch: WalletBatch, chainId: number) => hashTypedData({ domain: batchDomain(batch.wallet, chainId), types: BATCH_TYPES, primaryType: 'Batch', message: batch });

/** The session key's signature of `batch`, in the session-signer envelope. */
export async function signBatchAsSessionKey(sessionKey: LocalAccount, batch: WalletBatch, chainId: number): Promise<Hex> {
  const signature = await sessionKey.signTypedData({ domain: batchDomain(batch.wallet, chainId), types: BATCH_TYPES, primaryType: 'Batch', message: batch });
  const envelope = encodeAbiParameters([{ type: 'bytes32' }, { type: 'bytes32' }, { type: 'bytes' }], [pad(sessionKey.address), pad('0x00'), signature]);
  return concatHex([envelope, ERC6492_SUFFIX]);
}
