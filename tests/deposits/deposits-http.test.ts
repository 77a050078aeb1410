/**
 * Deposits as a customer makes them, over /api and /trpc: a wallet signs in, sends
 * USDC to the deposit address on the in-process EVM, and claims it with its session — pending until
 * the block is final, then credited once; the balance and /api/billing show it; another account can
 * neither see nor claim it; a transfer from a wallet with no account is held and credited when that
 * wallet first signs in; the operator can claim for an account; without a deposit address the routes
 * answer 404. The engine's own rules (reorganisations, races, refusals) are in deposits.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { parseAbi, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createDepositChain } from '../../server/deposits/chain.ts';
import { scanDeposits } from '../../server/deposits/watcher.ts';
import { createTestApp, DASHBOARD_KEY, trpcClient, type TestApp } from '../harness/app.ts';
import { dashboardHeaders } from '../harness/factories.ts';
import { startEvm, type InProcessEvm } from '../harness/in-process-evm.ts';
import { signIn, type SignedIn } from '../harness/sign-in.ts';

const USDC: Address = '0x3c499c542cef5e3811e1192ce70d8cc03d5c3359';
const DEPOSIT_ADDRESS: Address = '0x00000000000000000000000000000000deadbeef';
const FINALITY = 5;
const erc20 = parseAbi(['function mint(address to, uint256 value)', 'function transfer(address to, uint256 value) returns (bool)']);

let evm: InProcessEvm;
let t: TestApp;

beforeAll(async () => {
  evm = await startEvm();
  await evm.deploy('MiniErc20', [], USDC);
  t = await createTestApp({ DEPOSIT_ADDRESS, DEPOSIT_SCAN_INTERVAL_MS: '0' }, { depositChain: createDepositChain(evm.client, { finalityDepth: FINALITY }) });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await evm?.close();
});

async function send(from: Address, micros: bigint): Promise<Hex> {
  await evm.write({ address: USDC, abi: erc20, functionName: 'mint', args: [from, micros] });
  return (await evm.write({ address: USDC, abi: erc20, functionName: 'transfer', args: [DEPOSIT_ADDRESS, micros], from })).transactionHash;
}
const mine = (blocks: number) => evm.request('hardhat_mine', [`0x${blocks.toString(16)}`]);
const claim = (who: SignedIn, txHash: string) => t.request('/api/accounts/deposits', { method: 'POST', headers: { ...who.headers, 'content-type': 'application/json' }, body: JSON.stringify({ txHash }) });
const balanceOf = async (who: SignedIn) => (await (await t.request('/api/accounts/me', { headers: who.headers })).json()).balanceUsd;

describe('a customer deposits', () => {
  test('claimed with the session: pending until final, then credited once; the balance and billing show it; others cannot see or claim it', async () => {
    const customer = await signIn(t);
    const txHash = await send(customer.wallet.address, 25_500_001n); // 25.500001 USDC

    const early = await claim(customer, txHash);
    expect(early.status).toBe(200);
    expect((await early.json()).deposits).toEqual([expect.objectContaining({ txHash: txHash.toLowerCase(), from: expect.stringMatching(/^0x/i), amount: 25.500001, status: 'pending' })]);
    expect(await balanceOf(customer)).toBe(0);
    // /api/billing is billed with a session as with a key: at $0 it is 402, while the deposits list (free) shows the pending one.
    const pendingBilling = await t.request('/api/billing', { headers: customer.headers });
    expect(pendingBilling.status).toBe(402);
    expect((await (await t.request('/api/accounts/deposits', { headers: customer.headers })).json()).deposits).toEqual([expect.objectContaining({ status: 'pending', amount: 25.500001 })]);

    await mine(FINALITY + 1);
    const final = await (await claim(customer, txHash)).json();
    expect(final.deposits[0]).toMatchObject({ status: 'credited', amount: 25.500001, creditedAt: expect.any(String) });
    expect(await balanceOf(customer)).toBe(25.500001);
    // Again, by claim and by the watcher: nothing more.
    expect((await claim(customer, txHash)).status).toBe(200);
    await scanDeposits(t.database.db, t.services.depositChain!, t.services.config.deposits);
    expect(await balanceOf(customer)).toBe(25.500001);
    const billing = await t.request('/api/billing', { headers: customer.headers });
    expect(billing.headers.get('x-request-cost-usd')).toBe('0.002');
    expect(await billing.json()).toMatchObject({ depositedUsd: 25.500001, pendingDepositsUsd: 0, balanceUsd: 25.498001 });

    const listed = await (await t.request('/api/accounts/deposits', { headers: customer.headers })).json();
    expect(listed).toMatchObject({ total: 1, depositAddress: DEPOSIT_ADDRESS, deposits: [{ txHash: txHash.toLowerCase(), status: 'credited' }] });
    const viaTrpc = await trpcClient(t, customer.headers).deposits.list.query({});
    expect(viaTrpc.deposits.map((d) => d.txHash)).toEqual([txHash.toLowerCase()]);

    const stranger = await signIn(t);
    expect((await (await t.request('/api/accounts/deposits', { headers: stranger.headers })).json()).deposits).toEqual([]);
    const stolen = await claim(stranger, txHash);
    expect(stolen.status).toBe(400);
    expect((await stolen.json()).message).toContain('not a wallet of your account');
    expect(await balanceOf(stranger)).toBe(0);
  });

  test('from a wallet with no account: held by the watcher, credited when that wallet first signs in', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const txHash = await send(wallet.address, 5_000_000n);
    await mine(FINALITY + 1);
    await scanDeposits(t.database.db, t.services.depositChain!, t.services.config.deposits);
    const customer = await signIn(t, wallet);
    expect(await balanceOf(customer)).toBe(5);
    expect((await (await t.request('/api/accounts/deposits', { headers: customer.headers })).json()).deposits).toEqual([expect.objectContaining({ txHash: txHash.toLowerCase(), status: 'credited' })]);
    // A second sign-in credits nothing more.
    await signIn(t, wallet);
    expect(await balanceOf(customer)).toBe(5);
  });

  test('the operator claims for an account; a bad hash is 400; a claim needs a trusted Origin; without a deposit address deposits are 404', async () => {
    const customer = await signIn(t);
    const txHash = await send(customer.wallet.address, 2_000_000n);
    await mine(FINALITY + 1);
    const ops = await t.request('/api/accounts/deposits', { method: 'POST', headers: { ...dashboardHeaders(DASHBOARD_KEY, customer.accountId), 'content-type': 'application/json' }, body: JSON.stringify({ txHash }) });
    expect(ops.status).toBe(200);
    expect(await balanceOf(customer)).toBe(2);
    expect((await claim(customer, '0x1234')).status).toBe(400);
    expect((await t.request('/api/accounts/deposits', { method: 'POST', headers: { cookie: customer.cookie, 'content-type': 'application/json' }, body: JSON.stringify({ txHash }) })).status).toBe(403);

    const off = await createTestApp({}, { database: t.database });
    try {
      const res = await off.request('/api/accounts/deposits', { method: 'POST', headers: { ...customer.headers, 'content-type': 'application/json' }, body: JSON.stringify({ txHash }) });
      expect(res.status).toBe(404);
      expect((await res.json()).message).toContain('not enabled');
    } finally {
      await off.close();
    }
  });
});
