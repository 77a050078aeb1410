/**
 * The Polygon position reader against an in-process EVM with a minimal ERC-1155 at both real
 * contract addresses: per-version contracts, batching, duplicates, 78-digit ids, unknown tokens,
 * no RPC call for nothing, and a dead RPC reported as ChainUnavailable.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { ChainUnavailable, createPolygonClient, createPositionReader, POSITION_CONTRACTS } from '../../server/chain/position-reader.ts';
import { startEvm, type InProcessEvm } from '../harness/in-process-evm.ts';
import { newUserId } from '../harness/factories.ts';

let evm: InProcessEvm;
const owner = newUserId() as `0x${string}`;
const MAX_ID = (2n ** 256n - 1n).toString();

beforeAll(async () => {
  evm = await startEvm();
  await evm.deployMiniErc1155At(POSITION_CONTRACTS.v1);
  await evm.deployMiniErc1155At(POSITION_CONTRACTS.v2);
  for (let id = 1n; id <= 12n; id++) await evm.mint(POSITION_CONTRACTS.v1, owner, id, id * 1_000_000n);
  await evm.mint(POSITION_CONTRACTS.v2, owner, 1007n, 42n);
  await evm.mint(POSITION_CONTRACTS.v1, owner, BigInt(MAX_ID), 5n);
}, 60_000);
afterAll(() => evm.close());

test('reads each version from its own contract, in batches, duplicates and unknown ids included', async () => {
  const calls: string[] = [];
  const counting = { ...evm.client, readContract: (args: any) => (calls.push(args.address), evm.client.readContract(args)) } as typeof evm.client;
  const reader = createPositionReader(counting, { batchSize: 5 });
  const v1 = Array.from({ length: 12 }, (_, i) => ({ tokenId: String(i + 1), version: 'v1' as const }));
  const balances = await reader.balancesOf(owner, [...v1, { tokenId: '1', version: 'v1' }, { tokenId: '1007', version: 'v2' }, { tokenId: '99', version: 'v2' }, { tokenId: MAX_ID, version: 'v1' }]);
  expect(balances.get('3')).toBe(3_000_000n);
  expect(balances.get('12')).toBe(12_000_000n);
  expect(balances.get('1007')).toBe(42n);
  expect(balances.get('7')).toBe(7_000_000n);
  expect(balances.get('99')).toBe(0n);
  expect(balances.get(MAX_ID)).toBe(5n);
  expect(calls.filter((a) => a === POSITION_CONTRACTS.v1)).toHaveLength(3); // 13 distinct v1 ids / 5
  expect(calls.filter((a) => a === POSITION_CONTRACTS.v2)).toHaveLength(1);
});

test('another owner holds nothing; an empty request makes no call', async () => {
  const reader = createPositionReader(evm.client);
  expect((await reader.balancesOf(newUserId() as `0x${string}`, [{ tokenId: '3', version: 'v1' }])).get('3')).toBe(0n);
  expect((await reader.balancesOf(owner, [])).size).toBe(0);
});

test('a dead RPC is ChainUnavailable', async () => {
  const reader = createPositionReader(createPolygonClient('http://127.0.0.1:9', { timeoutMs: 300 }));
  await expect(reader.balancesOf(owner, [{ tokenId: '1', version: 'v1' }])).rejects.toBeInstanceOf(ChainUnavailable);
});
