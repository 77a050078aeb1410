/**
 * The chain and the relayer as the CLOB stand-in's ledger sees them, for the trading suites on
 * TEST_VENUE=polymarket: one ledger (the stand-in's wallets) for trading and redemption alike, so a
 * settlement's redemption moves the same collateral and tokens the orders did. (The real contracts
 * and relayer protocol are proven on an in-process EVM in tests/venues/polymarket-redemption.test.ts.)
 *
 *  - as `RedemptionChain`: balances are the stand-in's holdings; payouts come from `payouts` (the
 *    harness reports what the event resolved to, as the oracle would); each wallet has a batch nonce;
 *    each executed batch is one "block" and one transfer record.
 *  - as the relayer: POST /submit checks the batch (type WALLET, the factory, the wallet's nonce, a
 *    session-key signature by a signer the wallet authorised at the stand-in), decodes each call
 *    (`redeemPositions(pUSD, 0, conditionId, [1, 2])`), takes the wallet's Yes and No tokens of the
 *    condition and credits what they pay; GET /v1/account/transactions/<id> answers STATE_CONFIRMED.
 */
import { decodeAbiParameters, decodeFunctionData, keccak256, parseAbi, recoverAddress, size, sliceHex, toHex, type Address, type Hex } from 'viem';
import type { ConditionPayouts } from '../../server/chain/resolution-reader.ts';
import type { RedemptionChain } from '../../server/chain/redemption-chain.ts';
import type { TokenRef } from '../../server/chain/position-reader.ts';
import { batchDigest, type WalletBatch } from '../../server/venues/polymarket/wallet-batch.ts';
import type { ClobStandin } from './clob-standin.ts';

const ADAPTER = parseAbi(['function redeemPositions(address collateralToken, bytes32 parentCollectionId, bytes32 conditionId, uint256[] indexSets)']);
const CHAIN_ID = 137;

export interface LedgerRelayerOptions {
  standin: ClobStandin;
  factory: Address;
  /** A condition's Yes and No token ids (decimal). */
  tokensOf: (conditionId: string) => Promise<{ yes: string; no: string | null } | undefined>;
  /** The oracle's report for a condition, or null while unreported. */
  payouts: (conditionId: string) => Promise<ConditionPayouts | null>;
}

interface Executed {
  id: string;
  hash: Hex;
  block: bigint;
  wallet: string;
  tokenIds: string[];
}

export class LedgerRelayer implements RedemptionChain {
  private nonces = new Map<string, bigint>();
  private executed: Executed[] = [];
  private height = 1n;
  private server?: ReturnType<typeof Bun.serve>;
  /** Accepted /submit calls. */
  submissions = 0;

  constructor(private options: LedgerRelayerOptions) {}

  get url() {
    return `http://127.0.0.1:${this.server!.port}`;
  }

  start() {
    this.server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => this.handle(request) });
    return this;
  }

  stop() {
    this.server?.stop(true);
  }

  // RedemptionChain
  chainId = async () => CHAIN_ID;
  blockNumber = async () => this.height;
  walletNonce = async (wallet: Address) => this.nonces.get(wallet.toLowerCase()) ?? 0n;
  async payoutsOf(conditionIds: string[]) {
    return new Map(await Promise.all(conditionIds.map(async (id) => [id, await this.options.payouts(id)] as const)));
  }
  async balancesOf(owner: Address, tokens: TokenRef[]) {
    return new Map(tokens.map((t) => [t.tokenId, BigInt(this.options.standin.held(owner, t.tokenId))]));
  }
  async lastTransferOut(wallet: Address, tokens: TokenRef[], fromBlock: bigint) {
    const ids = new Set(tokens.map((t) => t.tokenId));
    const found = this.executed.filter((e) => e.wallet === wallet.toLowerCase() && e.block >= fromBlock && e.tokenIds.some((id) => ids.has(id)));
    return found.at(-1)?.hash ?? null;
  }

  private async handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (request.method === 'POST' && url.pathname === '/submit') return this.submit(await request.json().catch(() => null));
    const tx = /^\/v1\/account\/transactions\/([\w-]+)$/.exec(url.pathname);
    if (request.method === 'GET' && tx) {
      const found = this.executed.find((e) => e.id === tx[1]);
      if (!found) return Response.json({ error: 'transaction not found' }, { status: 404 });
      return Response.json({ transaction_id: found.id, transaction_hash: found.hash, state: 'STATE_CONFIRMED', error_msg: '' });
    }
    return Response.json({ error: 'not found' }, { status: 404 });
  }

  private async submit(body: any): Promise<Response> {
    const refuse = (error: string) => Response.json({ error }, { status: 400 });
    const params = body?.depositWalletParams;
    if (body?.type !== 'WALLET' || String(body.to).toLowerCase() !== this.options.factory.toLowerCase() || !params?.depositWallet) return refuse('bad request');
    const wallet = String(params.depositWallet) as Address;
    const batch: WalletBatch = {
      wallet,
      nonce: BigInt(body.nonce),
      deadline: BigInt(params.deadline),
      calls: params.calls.map((c: any) => ({ target: c.target, value: BigInt(c.value), data: c.data })),
    };
    const onChain = await this.walletNonce(wallet);
    if (batch.nonce !== onChain) return refuse(`batch nonce ${batch.nonce} does not match on-chain nonce ${onChain}`);
    // The session-signer envelope: abi.encode(bytes32 signer, bytes32 0, bytes signature) ‖ 32-byte suffix.
    const envelope = body.signature as Hex;
    const [signerWord, , signature] = decodeAbiParameters([{ type: 'bytes32' }, { type: 'bytes32' }, { type: 'bytes' }], sliceHex(envelope, 0, size(envelope) - 32));
    const signer = await recoverAddress({ hash: batchDigest(batch, CHAIN_ID), signature });
    if (`0x${signerWord.slice(26)}`.toLowerCase() !== signer.toLowerCase() || !this.options.standin.authorised.get(wallet.toLowerCase())?.has(signer.toLowerCase())) {
      return refuse('invalid signature');
    }
    this.submissions++;
    const tokenIds: string[] = [];
    for (const call of batch.calls) {
      const { args } = decodeFunctionData({ abi: ADAPTER, data: call.data });
      const conditionId = args[2];
      const [tokens, payouts] = [await this.options.tokensOf(conditionId), await this.options.payouts(conditionId)];
      if (!tokens || !payouts) return refuse(`execution reverted: result for condition ${conditionId} not received yet`);
      [tokens.yes, tokens.no].forEach((tokenId, outcome) => {
        if (!tokenId) return;
        const held = this.options.standin.held(wallet, tokenId);
        if (held <= 0) return;
        const paid = Number((BigInt(held) * payouts.numerators[outcome]!) / payouts.denominator);
        this.options.standin.redeem(wallet, tokenId, held, paid);
        tokenIds.push(tokenId);
      });
    }
    this.nonces.set(wallet.toLowerCase(), onChain + 1n);
    const id = crypto.randomUUID();
    this.executed.push({ id, hash: keccak256(toHex(id)), block: ++this.height, wallet: wallet.toLowerCase(), tokenIds });
    return Response.json({ transactionID: id, state: 'STATE_NEW' });
  }
}
