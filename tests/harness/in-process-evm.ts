/**
 * An in-process EVM for tests (Nomic Foundation's EDR, pinned), exposed to viem as an EIP-1193
 * transport, with the stand-in contracts of ./contracts compiled by solc-js at test time and placed at
 * any address — the real Polymarket contract addresses included — so chain reads and writes run
 * offline, exactly as on Polygon: a minimal ERC-1155, the Conditional Tokens interface, the neg-risk
 * adapter's redemption, a 6-decimal ERC-20 and a deposit wallet.
 */
import edr from '@nomicfoundation/edr';
import { readdirSync, readFileSync } from 'node:fs';
import { createPublicClient, custom, encodeDeployData, encodeFunctionData, parseAbi, type Abi, type Address, type Hex, type PublicClient, type TransactionReceipt } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';

const { EdrContext, ContractDecoder, L1_CHAIN_TYPE, l1ProviderFactory, l1GenesisState, l1HardforkLatest, l1HardforkToString, MineOrdering } = edr as any;

const DEPLOYER_KEY: Hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const DEPLOYER = privateKeyToAddress(DEPLOYER_KEY);
const ABI = parseAbi(['function mint(address to, uint256 id, uint256 amount)', 'function burn(address from, uint256 id, uint256 amount)']);

// One EdrContext per process (EDR requires it); providers are cheap.
let context: Promise<any> | undefined;
function edrContext() {
  context ??= (async () => {
    const ctx = new EdrContext();
    await ctx.registerProviderFactory(L1_CHAIN_TYPE, l1ProviderFactory());
    return ctx;
  })();
  return context;
}

type Compiled = Record<string, { abi: Abi; bytecode: Hex }>;
let compiled: Compiled | undefined;
/** Compiles every contract of ./contracts once per process with solc-js (no download: the compiler is bundled). */
function compileContracts(): Compiled {
  if (compiled) return compiled;
  const solc = require('solc') as any;
  const dir = new URL('./contracts/', import.meta.url);
  const sources = Object.fromEntries(
    readdirSync(dir)
      .filter((f) => f.endsWith('.sol'))
      .map((f) => [f, { content: readFileSync(new URL(f, dir), 'utf8') }]),
  );
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources,
        settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'paris', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
      }),
    ),
  );
  const errors = (output.errors ?? []).filter((e: any) => e.severity === 'error');
  if (errors.length) throw new Error(errors.map((e: any) => e.formattedMessage).join('\n'));
  const result: Compiled = {};
  for (const file of Object.values(output.contracts) as Record<string, any>[]) {
    for (const [name, contract] of Object.entries(file)) result[name] = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
  }
  compiled = result;
  return result;
}

/** A stand-in contract's ABI (as compiled), for viem calls in tests. */
export function contractAbi(name: string): Abi {
  const contract = compileContracts()[name];
  if (!contract) throw new Error(`no contract ${name} in tests/harness/contracts`);
  return contract.abi;
}

export interface InProcessEvm {
  client: PublicClient;
  request(method: string, params?: unknown[]): Promise<any>;
  /** The funded account tests send from (owns no contract role unless a test gives it one). */
  deployer: Address;
  /** Deploys a stand-in contract (by contract name) and answers its address; with `at`, moves its code there (immutables travel with the code, storage does not). */
  deploy(name: string, args?: unknown[], at?: Address): Promise<Address>;
  /** Sends a transaction calling `functionName` (from the deployer unless `from`, which is impersonated and funded); throws when it reverts. */
  write(call: { address: Address; abi: Abi; functionName: string; args?: unknown[]; from?: Address }): Promise<TransactionReceipt>;
  /** Deploys MiniErc1155 and moves its code to `address` (storage starts empty there). */
  deployMiniErc1155At(address: Address): Promise<void>;
  mint(contract: Address, owner: Address, tokenId: bigint, amount: bigint): Promise<void>;
  burn(contract: Address, owner: Address, tokenId: bigint, amount: bigint): Promise<void>;
  close(): Promise<void>;
}

export async function startEvm(): Promise<InProcessEvm> {
  const ctx = await edrContext();
  const hardfork = l1HardforkLatest();
  const provider = await ctx.createProvider(
    L1_CHAIN_TYPE,
    {
      allowBlocksWithSameTimestamp: false,
      allowUnlimitedContractSize: false,
      bailOnCallFailure: false,
      bailOnTransactionFailure: false,
      chainId: 31337n,
      coinbase: new Uint8Array(20).fill(1),
      // The latest hardfork caps a transaction's gas (EIP-7825): stay under it.
      defaultTransactionGasLimit: 16_000_000n,
      genesisState: [...l1GenesisState(hardfork), { address: Buffer.from(DEPLOYER.slice(2), 'hex'), balance: 10n ** 24n }],
      hardfork: l1HardforkToString(hardfork),
      initialBaseFeePerGas: 1_000_000_000n,
      minGasPrice: 0n,
      mining: { autoMine: true, blockGasLimit: 60_000_000n, memPool: { order: MineOrdering.Priority } },
      network: { genesisBlockGasLimit: 60_000_000n },
      networkId: 31337n,
      observability: {},
      ownedAccounts: [DEPLOYER_KEY],
      precompileOverrides: [],
    },
    { enable: false, decodeConsoleLogInputsCallback: () => [], printLineCallback: () => {} },
    { subscriptionCallback: () => {} },
    new ContractDecoder(),
  );
  const request = async (method: string, params: unknown[] = []) => {
    const response = await provider.handleRequest(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));
    const data = typeof response.data === 'string' ? JSON.parse(response.data) : response.data;
    if (data.error) throw Object.assign(new Error(data.error.message), data.error);
    return data.result;
  };
  const client = createPublicClient({ transport: custom({ request: ({ method, params }) => request(method, params as unknown[]) }) }) as PublicClient;
  const impersonated = new Set<string>();
  const send = async (to: Address | undefined, data: Hex, from: Address = DEPLOYER) => {
    if (from !== DEPLOYER && !impersonated.has(from.toLowerCase())) {
      await request('hardhat_impersonateAccount', [from]);
      await request('hardhat_setBalance', [from, '0x3635C9ADC5DEA00000']);
      impersonated.add(from.toLowerCase());
    }
    const hash = await request('eth_sendTransaction', [{ from, ...(to ? { to } : {}), data, gas: '0xF42400' }]);
    const receipt = await client.getTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
    return receipt;
  };
  const deploy = async (name: string, args: unknown[] = [], at?: Address) => {
    const contract = compileContracts()[name];
    if (!contract) throw new Error(`no contract ${name} in tests/harness/contracts`);
    const receipt = await send(undefined, encodeDeployData({ abi: contract.abi, bytecode: contract.bytecode, args }));
    if (!at) return receipt.contractAddress!;
    const code = await request('eth_getCode', [receipt.contractAddress, 'latest']);
    await request('hardhat_setCode', [at, code]);
    return at;
  };
  return {
    client,
    request,
    deployer: DEPLOYER,
    deploy,
    write: ({ address, abi, functionName, args = [], from }) => send(address, encodeFunctionData({ abi, functionName, args } as any), from),
    async deployMiniErc1155At(address) {
      await deploy('MiniErc1155', [], address);
    },
    async mint(contract, owner, tokenId, amount) {
      await send(contract, encodeFunctionData({ abi: ABI, functionName: 'mint', args: [owner, tokenId, amount] }));
    },
    async burn(contract, owner, tokenId, amount) {
      await send(contract, encodeFunctionData({ abi: ABI, functionName: 'burn', args: [owner, tokenId, amount] }));
    },
    close: async () => {},
  };
}
