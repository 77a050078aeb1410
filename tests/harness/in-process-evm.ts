/**
 * An in-process EVM for tests (Nomic Foundation's EDR, pinned), exposed to viem as an EIP-1193
 * transport, with a minimal ERC-1155 compiled by solc-js at test time and placed at any address —
 * the real Polymarket contract addresses included — so chain reads run offline, exactly as on Polygon.
 */
import edr from '@nomicfoundation/edr';
import { readFileSync } from 'node:fs';
import { createPublicClient, custom, encodeFunctionData, parseAbi, type Address, type Hex, type PublicClient } from 'viem';
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

let compiled: { bytecode: Hex } | undefined;
/** Compiles MiniErc1155.sol once per process with solc-js (no download: the compiler is bundled). */
async function compileMiniErc1155() {
  if (compiled) return compiled;
  const solc = (await import('solc')).default as any;
  const source = readFileSync(new URL('./contracts/MiniErc1155.sol', import.meta.url), 'utf8');
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'MiniErc1155.sol': { content: source } },
        settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'paris', outputSelection: { '*': { '*': ['evm.bytecode.object'] } } },
      }),
    ),
  );
  const errors = (output.errors ?? []).filter((e: any) => e.severity === 'error');
  if (errors.length) throw new Error(errors.map((e: any) => e.formattedMessage).join('\n'));
  compiled = { bytecode: `0x${output.contracts['MiniErc1155.sol'].MiniErc1155.evm.bytecode.object}` };
  return compiled;
}

export interface InProcessEvm {
  client: PublicClient;
  request(method: string, params?: unknown[]): Promise<any>;
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
  const send = async (to: Address | undefined, data: Hex) => {
    const hash = await request('eth_sendTransaction', [{ from: DEPLOYER, ...(to ? { to } : {}), data, gas: '0xF42400' }]);
    const receipt = await request('eth_getTransactionReceipt', [hash]);
    if (receipt?.status !== '0x1') throw new Error(`transaction failed: ${JSON.stringify(receipt)}`);
    return receipt;
  };
  return {
    client,
    request,
    async deployMiniErc1155At(address) {
      const { bytecode } = await compileMiniErc1155();
      const receipt = await send(undefined, bytecode);
      const code = await request('eth_getCode', [receipt.contractAddress, 'latest']);
      await request('hardhat_setCode', [address, code]);
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
