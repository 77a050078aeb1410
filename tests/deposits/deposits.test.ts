/**
 * Stablecoin deposits verified on chain, on the in-process EVM: MiniErc20 stands
 * in for native USDC and USDC.e at their Polygon addresses, and a third at a random address is a
 * token we do not accept. The in-process node answers the `finalized` tag with the latest block, so
 * the deposit chain is built with a finality depth: a block is final once FINALITY more are mined.
 *
 * Covered: a final transfer credited once (claim, repeated claim, watcher), a claim before finality
 * answered pending and credited by finalisation, a reorganisation before finality (dropped, never
 * credited), claim/watcher and watcher/watcher races (once), unclaimed transfers credited at sign-in,
 * every refusal, exact 6-decimal amounts, and a restarted watcher resuming from its cursor.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { and, eq } from 'drizzle-orm';
import { encodeFunctionData, type Abi, type Address, type Hex } from 'viem';
import { accounts, accountWallets, auditLog, credits, deposits, depositScans } from '../../db/schema.ts';
import { createDepositChain, type DepositChain } from '../../server/deposits/chain.ts';
import { claimDeposit, creditUnclaimedFor, finalizeDeposits, listDeposits, type DepositConfig } from '../../server/deposits/deposits.ts';
import { scanDeposits, startDepositWatcher } from '../../server/deposits/watcher.ts';
import { ApiError } from '../../server/errors.ts';
import { createLogger } from '../../server/lib/logger.ts';
import { freshDatabase, type TestDatabase } from '../harness/databases.ts';
import { contractAbi, startEvm, type InProcessEvm } from '../harness/in-process-evm.ts';

const USDC: Address = '0x3c499c542cef5e3811e1192ce70d8cc03d5c3359';
const USDC_E: Address = '0x2791bca1f2de4661ed88a30c99a7a9449aa84174';
const OTHER_TOKEN: Address = '0x00000000000000000000000000000000000c0ffe';
const DEPOSIT_ADDRESS: Address = '0x000000000000000000000000000000000000d395';
const FINALITY = 5;

let database: TestDatabase;
let evm: InProcessEvm;
let chain: DepositChain;
let erc20: Abi;
const config: DepositConfig = { address: DEPOSIT_ADDRESS, tokens: [USDC, USDC_E], minMicros: 1_000_000, scanIntervalMs: 0 };
const db = () => database.db;

let counter = 0;
/** A fresh wallet address (lower case, as account_wallets stores it). */
function newWallet(): Address {
  return `0x${(0xa11ce000000 + ++counter).toString(16).padStart(40, '0')}` as Address;
}

async function newAccount(...wallets: Address[]): Promise<string> {
  const id = `acct_dep_${++counter}`;
  await db().insert(accounts).values({ id });
  for (const address of wallets) await db().insert(accountWallets).values({ address, accountId: id });
  return id;
}

/** Mints `micros` of `token` to `from` and sends them to `to`; answers the transfer's hash. */
async function send(from: Address, micros: bigint, options: { token?: Address; to?: Address } = {}): Promise<Hex> {
  const token = options.token ?? USDC;
  await evm.write({ address: token, abi: erc20, functionName: 'mint', args: [from, micros] });
  const receipt = await evm.write({ address: token, abi: erc20, functionName: 'transfer', args: [options.to ?? DEPOSIT_ADDRESS, micros], from });
  return receipt.transactionHash;
}

const mine = (blocks: number) => evm.request('hardhat_mine', [`0x${blocks.toString(16)}`]);
const makeFinal = () => mine(FINALITY);

async function balanceOf(accountId: string): Promise<number> {
  const [row] = await db().select({ balance: accounts.balanceMicros }).from(accounts).where(eq(accounts.id, accountId));
  return row!.balance;
}

async function creditsOf(accountId: string) {
  return db().select().from(credits).where(eq(credits.accountId, accountId));
}

async function rowOf(txHash: Hex) {
  return db().select().from(deposits).where(eq(deposits.txHash, txHash.toLowerCase()));
}

/** The ApiError a promise rejects with (fails the test if it resolves). */
async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (e) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

beforeAll(async () => {
  [database, evm] = await Promise.all([freshDatabase(), startEvm()]);
  erc20 = contractAbi('MiniErc20');
  for (const at of [USDC, USDC_E, OTHER_TOKEN]) await evm.deploy('MiniErc20', [], at);
  chain = createDepositChain(evm.client, { finalityDepth: FINALITY });
});

afterAll(async () => {
  await database?.close();
  await evm?.close();
});

describe('claims', () => {
  test('a final transfer is credited once: repeated claims and the watcher change nothing', async () => {
    const wallet = newWallet();
    const accountId = await newAccount(wallet);
    const txHash = await send(wallet, 12_345_678n);
    await makeFinal();

    const claimed = await claimDeposit(db(), chain, config, { accountId, txHash });
    expect(claimed.deposits).toHaveLength(1);
    expect(claimed.deposits[0]).toMatchObject({ txHash: txHash.toLowerCase(), token: USDC, from: wallet, amount: 12.345678, status: 'credited', chainId: 31337 });
    expect(claimed.deposits[0]!.creditedAt).toBeInstanceOf(Date);
    expect(await balanceOf(accountId)).toBe(12_345_678);
    const [credit] = await creditsOf(accountId);
    expect(credit).toMatchObject({ amountMicros: 12_345_678, reference: `deposit:31337:${txHash.toLowerCase()}:${claimed.deposits[0]!.logIndex}` });
    expect(credit!.id).toStartWith('crd_');

    const again = await claimDeposit(db(), chain, config, { accountId, txHash });
    expect(again.deposits[0]!.status).toBe('credited');
    await scanDeposits(db(), chain, config);
    await finalizeDeposits(db(), chain, config);
    expect(await balanceOf(accountId)).toBe(12_345_678);
    expect(await creditsOf(accountId)).toHaveLength(1);
    // The audit log has it once, by the deposits path.
    const audited = await db().select().from(auditLog).where(and(eq(auditLog.accountId, accountId), eq(auditLog.action, 'account.credited')));
    expect(audited.map((e) => [e.actorKind, e.actorId, e.targetId, e.details.amountUsd, e.details.txHash])).toEqual([['system', 'deposits', claimed.deposits[0]!.id, 12.345678, txHash.toLowerCase()]]);
  });

  test('USDC.e is accepted too, amounts exact to the micro', async () => {
    const wallet = newWallet();
    const accountId = await newAccount(wallet);
    const txHash = await send(wallet, 1_000_000_000_001n, { token: USDC_E });
    await makeFinal();
    const claimed = await claimDeposit(db(), chain, config, { accountId, txHash });
    expect(claimed.deposits[0]).toMatchObject({ token: USDC_E, amount: 1_000_000.000001, status: 'credited' });
    expect(await balanceOf(accountId)).toBe(1_000_000_000_001);
  });

  test('a claim before finality is pending, then credited once the block is final', async () => {
    const wallet = newWallet();
    const accountId = await newAccount(wallet);
    const txHash = await send(wallet, 2_500_000n);

    const claimed = await claimDeposit(db(), chain, config, { accountId, txHash });
    expect(claimed.deposits[0]).toMatchObject({ status: 'pending', amount: 2.5, creditedAt: null });
    expect(await balanceOf(accountId)).toBe(0);
    await finalizeDeposits(db(), chain, config);
    expect(await balanceOf(accountId)).toBe(0);

    await makeFinal();
    const pass = await finalizeDeposits(db(), chain, config);
    expect(pass.credited).toBeGreaterThanOrEqual(1);
    expect(await balanceOf(accountId)).toBe(2_500_000);
    expect((await rowOf(txHash))[0]!.status).toBe('credited');
    await finalizeDeposits(db(), chain, config);
    expect(await claimDeposit(db(), chain, config, { accountId, txHash })).toMatchObject({ deposits: [{ status: 'credited' }] });
    expect(await balanceOf(accountId)).toBe(2_500_000);
  });

  test('a reorganisation before finality drops the transfer, which is never credited', async () => {
    const wallet = newWallet();
    const accountId = await newAccount(wallet);
    await evm.write({ address: USDC, abi: erc20, functionName: 'mint', args: [wallet, 7_000_000n] });
    const snapshot = await evm.request('evm_snapshot');
    const { transactionHash: txHash } = await evm.write({ address: USDC, abi: erc20, functionName: 'transfer', args: [DEPOSIT_ADDRESS, 7_000_000n], from: wallet });
    expect((await claimDeposit(db(), chain, config, { accountId, txHash })).deposits[0]!.status).toBe('pending');
    await scanDeposits(db(), chain, config);

    // The transfer's block is replaced by other blocks: the canonical chain never had it.
    expect(await evm.request('evm_revert', [snapshot])).toBe(true);
    await mine(FINALITY + 2);
    const pass = await scanDeposits(db(), chain, config);
    expect(pass.finalize.dropped).toBe(1);
    expect((await rowOf(txHash))[0]!.status).toBe('dropped');
    expect(await balanceOf(accountId)).toBe(0);

    // Now unknown to the chain: a claim is refused and nothing is credited later.
    expect((await refusal(claimDeposit(db(), chain, config, { accountId, txHash }))).apiCode).toBe('NOT_FOUND');
    await scanDeposits(db(), chain, config);
    expect(await balanceOf(accountId)).toBe(0);
    expect(await creditsOf(accountId)).toHaveLength(0);
  });

  test('a transfer a reorganisation moved to another block is followed there and credited once', async () => {
    const wallet = newWallet();
    const accountId = await newAccount(wallet);
    await evm.write({ address: USDC, abi: erc20, functionName: 'mint', args: [wallet, 9_000_000n] });
    await evm.request('hardhat_impersonateAccount', [wallet]);
    await evm.request('hardhat_setBalance', [wallet, '0x3635C9ADC5DEA00000']);
    // The same transaction (same fields, so the same hash) mined in two different histories.
    const nonce = await evm.request('eth_getTransactionCount', [wallet, 'latest']);
    const tx = {
      from: wallet,
      to: USDC,
      nonce,
      gas: '0x30000',
      maxFeePerGas: '0x2540be400',
      maxPriorityFeePerGas: '0x1',
      data: encodeFunctionData({ abi: erc20, functionName: 'transfer', args: [DEPOSIT_ADDRESS, 9_000_000n] }),
    };
    const snapshot = await evm.request('evm_snapshot');
    const txHash = (await evm.request('eth_sendTransaction', [tx])) as Hex;
    const before = (await claimDeposit(db(), chain, config, { accountId, txHash })).deposits[0]!;
    expect(before.status).toBe('pending');

    await evm.request('evm_revert', [snapshot]);
    await mine(2);
    // In its new block a mint (a Transfer log) precedes it, so its log index changes as well.
    await evm.request('evm_setAutomine', [false]);
    const mintData = encodeFunctionData({ abi: erc20, functionName: 'mint', args: [newWallet(), 1n] });
    await evm.request('eth_sendTransaction', [{ from: evm.deployer, to: USDC, data: mintData, gas: '0x30000', maxFeePerGas: '0x2540be400', maxPriorityFeePerGas: '0x2' }]);
    expect(await evm.request('eth_sendTransaction', [tx])).toBe(txHash);
    await evm.request('evm_mine');
    await evm.request('evm_setAutomine', [true]);
    const moved = await evm.client.getTransactionReceipt({ hash: txHash });
    expect(moved.blockNumber).not.toBe(BigInt(before.blockNumber));
    expect(moved.logs[0]!.logIndex).not.toBe(before.logIndex);

    await makeFinal();
    await scanDeposits(db(), chain, config);
    await finalizeDeposits(db(), chain, config);
    const rows = await rowOf(txHash);
    const credited = rows.filter((r) => r.status === 'credited');
    expect(credited).toHaveLength(1);
    expect(rows.find((r) => r.logIndex === before.logIndex)!.status).toBe('dropped');
    expect(credited[0]!.blockNumber).toBe(Number(moved.blockNumber));
    expect(await balanceOf(accountId)).toBe(9_000_000);
    expect(await creditsOf(accountId)).toHaveLength(1);
  });

  test('a node that has lost a receipt of a block still canonical drops nothing', async () => {
    const wallet = newWallet();
    const accountId = await newAccount(wallet);
    const txHash = await send(wallet, 1_100_000n);
    await claimDeposit(db(), chain, config, { accountId, txHash });
    await makeFinal();
    const lagging: DepositChain = { ...chain, receipt: async () => null };
    expect((await finalizeDeposits(db(), lagging, config)).dropped).toBe(0);
    expect((await rowOf(txHash))[0]!.status).toBe('pending');
    await finalizeDeposits(db(), chain, config);
    expect(await balanceOf(accountId)).toBe(1_100_000);
  });

  test('refusals: reverted, unknown, wrong token, wrong recipient, below the minimum', async () => {
    const wallet = newWallet();
    const accountId = await newAccount(wallet, evm.deployer.toLowerCase() as Address);

    // A transfer beyond the sender's balance reverts; a fixed gas limit gets it mined as reverted.
    const reverted = (await evm.request('eth_sendTransaction', [
      { from: evm.deployer, to: USDC, data: encodeFunctionData({ abi: erc20, functionName: 'transfer', args: [DEPOSIT_ADDRESS, 5_000_000n] }), gas: '0x30000' },
    ])) as Hex;
    expect((await evm.client.getTransactionReceipt({ hash: reverted })).status).toBe('reverted');
    await makeFinal();
    const revertedError = await refusal(claimDeposit(db(), chain, config, { accountId, txHash: reverted }));
    expect(revertedError.apiCode).toBe('BAD_REQUEST');
    expect(revertedError.message).toContain('reverted');

    const unknown = await refusal(claimDeposit(db(), chain, config, { accountId, txHash: `0x${'ab'.repeat(32)}` }));
    expect(unknown.apiCode).toBe('NOT_FOUND');
    expect((await refusal(claimDeposit(db(), chain, config, { accountId, txHash: '0x1234' }))).apiCode).toBe('BAD_REQUEST');

    const wrongToken = await send(wallet, 5_000_000n, { token: OTHER_TOKEN });
    const wrongRecipient = await send(wallet, 5_000_000n, { to: newWallet() });
    const small = await send(wallet, 999_999n);
    await makeFinal();
    const tokenError = await refusal(claimDeposit(db(), chain, config, { accountId, txHash: wrongToken }));
    expect(tokenError.apiCode).toBe('BAD_REQUEST');
    expect(tokenError.message).toContain('does not accept');
    const recipientError = await refusal(claimDeposit(db(), chain, config, { accountId, txHash: wrongRecipient }));
    expect(recipientError.apiCode).toBe('BAD_REQUEST');
    expect(recipientError.message).toContain('not to the deposit address');
    const smallError = await refusal(claimDeposit(db(), chain, config, { accountId, txHash: small }));
    expect(smallError.apiCode).toBe('BAD_REQUEST');
    expect(smallError.message).toContain('minimum of 1 USD');

    // The watcher does not take any of them either.
    await scanDeposits(db(), chain, config);
    for (const hash of [reverted, wrongToken, wrongRecipient, small]) expect(await rowOf(hash)).toHaveLength(0);
    expect(await balanceOf(accountId)).toBe(0);
  });

  test("a transfer from another account's wallet is refused without naming that account", async () => {
    const theirs = newWallet();
    const owner = await newAccount(theirs);
    const claimer = await newAccount(newWallet());
    const txHash = await send(theirs, 3_000_000n);
    await makeFinal();
    const error = await refusal(claimDeposit(db(), chain, config, { accountId: claimer, txHash }));
    expect(error.apiCode).toBe('BAD_REQUEST');
    expect(error.message).toContain('not a wallet of your account');
    expect(error.message).not.toContain(owner);
    expect(await balanceOf(claimer)).toBe(0);
    // The transfer was verified all the same: it belongs to its sender's account.
    expect(await balanceOf(owner)).toBe(3_000_000);
    expect((await listDeposits(db(), claimer, { limit: 10, offset: 0 })).total).toBe(0);
  });

  test('an unknown account is NOT_FOUND; deposits off is NOT_FOUND', async () => {
    const txHash = await send(newWallet(), 1_000_000n);
    expect((await refusal(claimDeposit(db(), chain, config, { accountId: 'acct_nobody', txHash }))).apiCode).toBe('NOT_FOUND');
    expect((await refusal(claimDeposit(db(), chain, { ...config, address: undefined }, { accountId: 'acct_nobody', txHash }))).apiCode).toBe('NOT_FOUND');
  });
});

describe('unclaimed transfers', () => {
  test('held while no account owns the sender, credited once when the wallet signs in', async () => {
    const stranger = newWallet();
    const claimer = await newAccount(newWallet());
    const txHash = await send(stranger, 4_200_000n);
    await makeFinal();

    const error = await refusal(claimDeposit(db(), chain, config, { accountId: claimer, txHash }));
    expect(error.apiCode).toBe('BAD_REQUEST');
    expect(error.message).toContain('not a wallet of your account'); // the same answer as for another account's wallet
    const [row] = await rowOf(txHash);
    expect(row).toMatchObject({ status: 'unclaimed', accountId: null, amountMicros: 4_200_000 });

    // Not the owner: nothing happens.
    expect(await creditUnclaimedFor(db(), stranger, claimer)).toEqual({ credited: 0, amountMicros: 0 });

    const signedIn = await newAccount(stranger);
    const [first, second] = await Promise.all([creditUnclaimedFor(db(), stranger.toUpperCase().replace('0X', '0x'), signedIn), finalizeDeposits(db(), chain, config)]);
    expect(first.credited + second.credited).toBeGreaterThanOrEqual(1);
    expect(await creditUnclaimedFor(db(), stranger, signedIn)).toEqual({ credited: 0, amountMicros: 0 });
    expect(await balanceOf(signedIn)).toBe(4_200_000);
    expect(await creditsOf(signedIn)).toHaveLength(1);
    expect((await rowOf(txHash))[0]).toMatchObject({ status: 'credited', accountId: signedIn });
  });

  test('a wallet linked while its transfer is still pending is claimable at once', async () => {
    const stranger = newWallet();
    const txHash = await send(stranger, 2_000_000n);
    await scanDeposits(db(), chain, config);
    expect((await rowOf(txHash))[0]).toMatchObject({ status: 'pending', accountId: null });
    const accountId = await newAccount(stranger);
    expect(await claimDeposit(db(), chain, config, { accountId, txHash })).toMatchObject({ deposits: [{ status: 'pending', amount: 2 }] });
    await makeFinal();
    await finalizeDeposits(db(), chain, config);
    expect(await balanceOf(accountId)).toBe(2_000_000);
    expect((await listDeposits(db(), accountId, { limit: 10, offset: 0 })).deposits).toMatchObject([{ status: 'credited', amount: 2 }]);
  });

  test('a wallet linked after the transfer was held is credited by the next watcher pass too', async () => {
    const stranger = newWallet();
    const txHash = await send(stranger, 1_500_000n);
    await makeFinal();
    await scanDeposits(db(), chain, config);
    expect((await rowOf(txHash))[0]!.status).toBe('unclaimed');
    // A sign-in that linked the wallet but whose creditUnclaimedFor raced with the row's marking.
    const accountId = await newAccount(stranger);
    await scanDeposits(db(), chain, config);
    expect(await balanceOf(accountId)).toBe(1_500_000);
    expect(await creditUnclaimedFor(db(), stranger, accountId)).toEqual({ credited: 0, amountMicros: 0 });
  });
});

describe('races', () => {
  test('a claim and the watcher racing for the same log credit it once', async () => {
    const wallet = newWallet();
    const accountId = await newAccount(wallet);
    const hashes: Hex[] = [];
    for (let i = 0; i < 8; i++) hashes.push(await send(wallet, BigInt(1_000_000 + i)));
    await makeFinal();
    for (const txHash of hashes) {
      const otherChain = createDepositChain(evm.client, { finalityDepth: FINALITY });
      await Promise.all([
        claimDeposit(db(), chain, config, { accountId, txHash }),
        scanDeposits(db(), otherChain, config),
        claimDeposit(db(), otherChain, config, { accountId, txHash }),
        finalizeDeposits(db(), chain, config),
      ]);
    }
    const expected = hashes.reduce((sum, _, i) => sum + 1_000_000 + i, 0);
    expect(await balanceOf(accountId)).toBe(expected);
    expect(await creditsOf(accountId)).toHaveLength(hashes.length);
  });

  test('two watchers at once credit once', async () => {
    const wallet = newWallet();
    const accountId = await newAccount(wallet);
    const hashes = [await send(wallet, 2_000_000n), await send(wallet, 3_000_000n, { token: USDC_E })];
    await makeFinal();
    await Promise.all([
      scanDeposits(db(), chain, config),
      scanDeposits(db(), createDepositChain(evm.client, { finalityDepth: FINALITY }), config),
      scanDeposits(db(), createDepositChain(evm.client, { finalityDepth: FINALITY }), config),
    ]);
    expect(await balanceOf(accountId)).toBe(5_000_000);
    expect(await creditsOf(accountId)).toHaveLength(2);
    for (const hash of hashes) expect((await rowOf(hash))[0]!.status).toBe('credited');
  });
});

describe('the watcher', () => {
  test('a restarted watcher resumes from its cursor', async () => {
    const wallet = newWallet();
    const accountId = await newAccount(wallet);
    await makeFinal();
    const first = await scanDeposits(db(), chain, config);
    const cursor = first.scannedThrough[USDC]!;
    expect(cursor).toBeGreaterThan(0);
    const [stored] = await db().select().from(depositScans).where(eq(depositScans.id, `31337:${USDC}`));
    expect(stored!.scannedThrough).toBe(cursor);

    const txHash = await send(wallet, 6_000_000n);
    await makeFinal();
    // A new process: fresh chain object; it must start right after the stored cursor.
    const inner = createDepositChain(evm.client, { finalityDepth: FINALITY });
    const ranges: [bigint, bigint][] = [];
    const restarted: DepositChain = { ...inner, transferLogs: (token, to, from, toBlock) => (ranges.push([from, toBlock]), inner.transferLogs(token, to, from, toBlock)) };
    const second = await scanDeposits(db(), restarted, config);
    expect(ranges[0]![0]).toBe(BigInt(cursor) + 1n);
    expect(second.scannedThrough[USDC]).toBeGreaterThan(cursor);
    expect(await balanceOf(accountId)).toBe(6_000_000);
    expect((await rowOf(txHash))[0]!.status).toBe('credited');
  });

  test('startDepositWatcher credits on its own and stops cleanly; interval 0 is off', async () => {
    const wallet = newWallet();
    const accountId = await newAccount(wallet);
    await send(wallet, 8_000_000n);
    await makeFinal();
    const off = startDepositWatcher({ db: db(), chain, config, logger: createLogger('silent') });
    await off.stop();
    const watcher = startDepositWatcher({ db: db(), chain, config: { ...config, scanIntervalMs: 20 }, logger: createLogger('silent') });
    try {
      for (let i = 0; i < 200 && (await balanceOf(accountId)) === 0; i++) await Bun.sleep(20);
    } finally {
      await watcher.stop();
    }
    expect(await balanceOf(accountId)).toBe(8_000_000);
  });
});

test('listDeposits shows one account its deposits, newest first, with a total', async () => {
  const wallet = newWallet();
  const accountId = await newAccount(wallet);
  const a = await send(wallet, 1_000_001n);
  const b = await send(wallet, 1_234_567n);
  await makeFinal();
  await claimDeposit(db(), chain, config, { accountId, txHash: a });
  await claimDeposit(db(), chain, config, { accountId, txHash: b });
  const page = await listDeposits(db(), accountId, { limit: 1, offset: 0 });
  expect(page.total).toBe(2);
  expect(page.deposits).toHaveLength(1);
  expect(page.deposits[0]).toMatchObject({ txHash: b.toLowerCase(), amount: 1.234567, status: 'credited', from: wallet, token: USDC });
  expect(typeof page.deposits[0]!.blockNumber).toBe('number');
  const rest = await listDeposits(db(), accountId, { limit: 10, offset: 1 });
  expect(rest.deposits.map((d) => d.txHash)).toEqual([a.toLowerCase()]);
  const rows = await db().select().from(deposits).where(and(eq(deposits.accountId, accountId), eq(deposits.status, 'credited')));
  expect(rows).toHaveLength(2);
});
