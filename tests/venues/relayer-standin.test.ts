/**
 * Proves the redemption stand-ins before anything relies on them: a DepositWallet, a CollateralAdapter
 * and the relayer stand-in on an in-process EVM. An owner-signed batch approves the adapter and
 * authorises a session key; a session-key-signed batch (in the session-signer envelope) redeems a
 * resolved condition through the relayer, paying pUSD for the winning tokens and taking both outcome
 * tokens out of the wallet. Also: a second redemption pays nothing, an unauthorised key and a session
 * self-call fail on chain, a stale nonce and bad Builder auth are refused over HTTP, and a lost /submit
 * response still leaves the transaction executed. Batches are signed here with viem.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { concat, encodeAbiParameters, encodeFunctionData, keccak256, pad, parseAbi, toHex, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createHmac } from 'node:crypto';
import { contractAbi, startEvm, type InProcessEvm } from '../harness/in-process-evm.ts';
import { RelayerStandin } from '../harness/relayer-standin.ts';
import { BATCH_TYPES, batchDomain, signBatchAsSessionKey } from '../../server/venues/polymarket/wallet-batch.ts';

const FACTORY: Address = '0x00000000000Fb5C9ADea0298D729A0CB3823Cc07';
const SESSION_SUFFIX: Hex = '0x6492649264926492649264926492649264926492649264926492649264926492';
const BUILDER = { key: 'builder-key', secret: Buffer.from('builder secret bytes').toString('base64'), passphrase: 'builder-pass' };
const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)']);
const YES = 40_000_000n;
const NO = 15_000_000n;

type Call = { target: Address; value: bigint; data: Hex };

let evm: InProcessEvm;
let relayer: RelayerStandin;
let pUsd: Address;
let ctf: Address;
let adapter: Address;
let wallet: Address;
let conditionId: Hex;
let yesId: bigint;
let noId: bigint;
const owner = privateKeyToAccount(generatePrivateKey());
const sessionKey = privateKeyToAccount(generatePrivateKey());
const ctfAbi = () => contractAbi('ConditionalTokens');
const walletAbi = () => contractAbi('DepositWallet');

/** A batch signed as the service signs it (server/venues/polymarket/wallet-batch.ts), or by the wallet's owner (a plain 65-byte signature). */
async function signBatch(signer: PrivateKeyAccount, nonce: bigint, deadline: bigint, calls: Call[], session: boolean): Promise<Hex> {
  const batch = { wallet, nonce, deadline, calls };
  if (session) return signBatchAsSessionKey(signer, batch, 31337);
  return signer.signTypedData({ domain: batchDomain(wallet, 31337), types: BATCH_TYPES, primaryType: 'Batch', message: batch });
}

function builderHeaders(method: string, path: string, body: string, secret = BUILDER.secret): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', Buffer.from(secret, 'base64')).update(timestamp + method + path + body).digest('base64url');
  return { POLY_BUILDER_API_KEY: BUILDER.key, POLY_BUILDER_TIMESTAMP: timestamp, POLY_BUILDER_PASSPHRASE: BUILDER.passphrase, POLY_BUILDER_SIGNATURE: signature };
}

async function walletNonce(): Promise<bigint> {
  const response = await fetch(`${relayer.url}/v1/account/transactions/params?address=${wallet}&type=WALLET`);
  const body = (await response.json()) as { address: string; nonce: string };
  return BigInt(body.nonce);
}

/** Signs and POSTs a batch; answers the HTTP status and body. */
async function submit(signer: PrivateKeyAccount, calls: Call[], opts: { session?: boolean; nonce?: bigint; headers?: Record<string, string> } = {}) {
  const nonce = opts.nonce ?? (await walletNonce());
  const deadline = BigInt(Math.floor(Date.now() / 1000) + 600);
  const signature = await signBatch(signer, nonce, deadline, calls, opts.session ?? false);
  const body = JSON.stringify({
    type: 'WALLET',
    from: signer.address,
    to: FACTORY,
    nonce: String(nonce),
    signature,
    metadata: 'redeem',
    depositWalletParams: { depositWallet: wallet, deadline: String(deadline), calls: calls.map((c) => ({ target: c.target, value: String(c.value), data: c.data })) },
  });
  const response = await fetch(`${relayer.url}/submit`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...(opts.headers ?? builderHeaders('POST', '/submit', body)) } });
  return { status: response.status, body: (await response.json()) as any };
}

async function waitFor(id: string) {
  for (let i = 0; i < 200; i++) {
    const body = (await (await fetch(`${relayer.url}/v1/account/transactions/${id}`)).json()) as any;
    if (!['STATE_NEW', 'STATE_EXECUTED', 'STATE_MINED'].includes(body.state)) return body as { transaction_id: string; transaction_hash: string; state: string; error_msg: string };
    await Bun.sleep(10);
  }
  throw new Error(`transaction ${id} never settled`);
}

async function submitAndWait(signer: PrivateKeyAccount, calls: Call[], session = false) {
  const { status, body } = await submit(signer, calls, { session });
  expect(status).toBe(200);
  expect(body.state).toBe('STATE_NEW');
  return waitFor(body.transactionID);
}

const redeemCall = (): Call => ({
  target: adapter,
  value: 0n,
  data: encodeFunctionData({ abi: contractAbi('CollateralAdapter'), functionName: 'redeemPositions', args: [pUsd, pad('0x'), conditionId, [1n, 2n]] }),
});
const balance = (token: Address, id: bigint) => evm.client.readContract({ address: token, abi: ctfAbi(), functionName: 'balanceOf', args: [wallet, id] }) as Promise<bigint>;
const pUsdOf = (who: Address) => evm.client.readContract({ address: pUsd, abi: ERC20, functionName: 'balanceOf', args: [who] });

beforeAll(async () => {
  evm = await startEvm();
  pUsd = await evm.deploy('MiniErc20');
  ctf = await evm.deploy('ConditionalTokens');
  const usdce = await evm.deploy('MiniErc20'); // positions are keyed by USDC.e, not pUSD
  adapter = await evm.deploy('CollateralAdapter', [ctf, pUsd, usdce]);
  wallet = await evm.deploy('DepositWallet', [owner.address, FACTORY]);
  const questionId = keccak256(toHex('will it rain'));
  await evm.write({ address: ctf, abi: ctfAbi(), functionName: 'prepareCondition', args: [evm.deployer, questionId, 2n] });
  conditionId = (await evm.client.readContract({ address: ctf, abi: ctfAbi(), functionName: 'getConditionId', args: [evm.deployer, questionId, 2n] })) as Hex;
  const adapterAbi = contractAbi('CollateralAdapter');
  yesId = (await evm.client.readContract({ address: adapter, abi: adapterAbi, functionName: 'positionIdOf', args: [conditionId, 1n] })) as bigint;
  noId = (await evm.client.readContract({ address: adapter, abi: adapterAbi, functionName: 'positionIdOf', args: [conditionId, 2n] })) as bigint;
  await evm.write({ address: ctf, abi: ctfAbi(), functionName: 'mint', args: [wallet, yesId, YES] });
  await evm.write({ address: ctf, abi: ctfAbi(), functionName: 'mint', args: [wallet, noId, NO] });
  await evm.write({ address: pUsd, abi: contractAbi('MiniErc20'), functionName: 'mint', args: [adapter, 1_000_000_000n] });
  relayer = new RelayerStandin({ evm, factory: FACTORY, builder: BUILDER }).start();
});

afterAll(async () => {
  relayer?.stop();
  await evm?.close();
});

describe('relayer stand-in with a deposit wallet and a collateral adapter', () => {
  test('an owner-signed batch approves the adapter on CTF', async () => {
    const approve: Call = { target: ctf, value: 0n, data: encodeFunctionData({ abi: ctfAbi(), functionName: 'setApprovalForAll', args: [adapter, true] }) };
    const result = await submitAndWait(owner, [approve]);
    expect(result.state).toBe('STATE_CONFIRMED');
    expect(result.transaction_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await evm.client.readContract({ address: ctf, abi: ctfAbi(), functionName: 'isApprovedForAll', args: [wallet, adapter] })).toBe(true);
    expect(await walletNonce()).toBe(1n);
  });

  test('redeeming before resolution fails with the adapter reason', async () => {
    const authorize: Call = { target: wallet, value: 0n, data: encodeFunctionData({ abi: walletAbi(), functionName: 'authorizeSessionSigner', args: [sessionKey.address, BigInt(Math.floor(Date.now() / 1000) + 86_400)] }) };
    expect((await submitAndWait(owner, [authorize])).state).toBe('STATE_CONFIRMED');
    const failed = await submitAndWait(sessionKey, [redeemCall()], true);
    expect(failed.state).toBe('STATE_FAILED');
    expect(failed.error_msg).toContain('result for condition not received yet');
  });

  test('a session-key batch redeems the resolved condition for pUSD; a second one pays nothing', async () => {
    await evm.write({ address: ctf, abi: ctfAbi(), functionName: 'reportPayouts', args: [keccak256(toHex('will it rain')), [1n, 0n]] });
    const nonceBefore = await walletNonce();
    const result = await submitAndWait(sessionKey, [redeemCall()], true);
    expect(result.state).toBe('STATE_CONFIRMED');
    expect(await pUsdOf(wallet)).toBe(YES);
    expect(await balance(ctf, yesId)).toBe(0n);
    expect(await balance(ctf, noId)).toBe(0n);
    expect(await walletNonce()).toBe(nonceBefore + 1n);
    const receipt = await evm.client.getTransactionReceipt({ hash: result.transaction_hash as Hex });
    expect(receipt.status).toBe('success');

    const again = await submitAndWait(sessionKey, [redeemCall()], true);
    expect(again.state).toBe('STATE_CONFIRMED');
    expect(await pUsdOf(wallet)).toBe(YES);
    const tx = relayer.transactions.find((t) => t.id === again.transaction_id)!;
    expect(tx.signer).toBe(sessionKey.address);
    expect(tx.wallet).toBe(wallet);
  });

  test('an unauthorised session key fails on chain', async () => {
    const stranger = privateKeyToAccount(generatePrivateKey());
    const result = await submitAndWait(stranger, [redeemCall()], true);
    expect(result.state).toBe('STATE_FAILED');
    expect(result.error_msg).toContain('InvalidSignature');
  });

  test('a session key may not call the wallet itself', async () => {
    const other = privateKeyToAccount(generatePrivateKey());
    const selfCall: Call = { target: wallet, value: 0n, data: encodeFunctionData({ abi: walletAbi(), functionName: 'authorizeSessionSigner', args: [other.address, 2n ** 40n] }) };
    const result = await submitAndWait(sessionKey, [selfCall], true);
    expect(result.state).toBe('STATE_FAILED');
    expect(result.error_msg).toContain('SessionSignerSelfCallNotAllowed');
  });

  test('ERC-1271: the owner and an authorised session key sign for the wallet; a stranger does not', async () => {
    const digest = keccak256(toHex('some message'));
    const check = (signature: Hex) => evm.client.readContract({ address: wallet, abi: walletAbi(), functionName: 'isValidSignature', args: [digest, signature] });
    const envelope = async (account: PrivateKeyAccount) =>
      concat([encodeAbiParameters([{ type: 'bytes32' }, { type: 'bytes32' }, { type: 'bytes' }], [pad(account.address), pad('0x'), await account.sign({ hash: digest })]), SESSION_SUFFIX]);
    expect(await check(await owner.sign({ hash: digest }))).toBe('0x1626ba7e');
    expect(await check(await envelope(sessionKey))).toBe('0x1626ba7e');
    expect(await check(await envelope(privateKeyToAccount(generatePrivateKey())))).toBe('0xffffffff');
    expect(await check(await sessionKey.sign({ hash: digest }))).toBe('0xffffffff');
  });

  test('a stale nonce is refused with 400 and nothing is recorded', async () => {
    const before = relayer.submissions;
    const current = await walletNonce();
    const { status, body } = await submit(sessionKey, [redeemCall()], { session: true, nonce: current - 1n });
    expect(status).toBe(400);
    expect(body.error).toBe(`batch nonce ${current - 1n} does not match on-chain nonce ${current}`);
    expect(relayer.submissions).toBe(before);
  });

  test('bad shapes are refused with 400', async () => {
    const post = async (payload: unknown) => {
      const body = JSON.stringify(payload);
      const response = await fetch(`${relayer.url}/submit`, { method: 'POST', body, headers: builderHeaders('POST', '/submit', body) });
      return { status: response.status, body: (await response.json()) as any };
    };
    const good = { type: 'WALLET', from: owner.address, to: FACTORY, nonce: '0', signature: '0x00', depositWalletParams: { depositWallet: wallet, deadline: '1', calls: [{ target: ctf, value: '0', data: '0x' }] } };
    for (const bad of [{ ...good, type: 'SAFE' }, { ...good, to: ctf }, { ...good, nonce: 7 }, { ...good, depositWalletParams: { ...good.depositWalletParams, calls: [] } }]) {
      const { status, body } = await post(bad);
      expect(status).toBe(400);
      expect(typeof body.error).toBe('string');
    }
  });

  test('missing or wrong Builder auth is refused with 401', async () => {
    const before = relayer.submissions;
    expect((await submit(sessionKey, [redeemCall()], { session: true, headers: {} })).status).toBe(401);
    const wrong = builderHeaders('POST', '/submit', '{}', Buffer.from('another secret').toString('base64'));
    const refused = await submit(sessionKey, [redeemCall()], { session: true, headers: wrong });
    expect(refused.status).toBe(401);
    expect(typeof refused.body.error).toBe('string');
    expect(relayer.submissions).toBe(before);
  });

  test('held transactions stay STATE_NEW until released', async () => {
    relayer.hold();
    const { body } = await submit(sessionKey, [redeemCall()], { session: true });
    await Bun.sleep(30);
    const status = (await (await fetch(`${relayer.url}/v1/account/transactions/${body.transactionID}`)).json()) as any;
    expect(status.state).toBe('STATE_NEW');
    await relayer.release();
    expect((await waitFor(body.transactionID)).state).toBe('STATE_CONFIRMED');
  });

  test('a lost /submit response still executes the transaction', async () => {
    const nonce = await walletNonce();
    const before = relayer.submissions;
    relayer.loseNextResponse();
    const { status } = await submit(sessionKey, [redeemCall()], { session: true });
    expect(status).toBe(503);
    expect(relayer.submissions).toBe(before + 1);
    expect(await walletNonce()).toBe(nonce + 1n);
    const last = relayer.transactions.at(-1)!;
    expect(last.state).toBe('STATE_CONFIRMED');
    expect(last.nonce).toBe(nonce);
  });
});
