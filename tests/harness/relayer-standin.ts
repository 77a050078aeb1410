/**
 * A local stand-in for Polymarket's relayer (relayer-v2.polymarket.com), for tests of the redemption
 * path: it serves the documented endpoints for WALLET batches and executes them on an in-process EVM the
 * way the real relayer does — DepositWallet.execute(batch, signature) sent from the DepositWalletFactory
 * address — so a batch succeeds or fails exactly as the wallet contract decides.
 *
 *   GET  /v1/account/transactions/params?address=<addr>&type=WALLET → {address: <relayer>, nonce: "<n>"}
 *        (a wallet address answers its on-chain nonce(); a signer that has submitted for exactly one wallet
 *        answers that wallet's nonce; anything else "0")
 *   POST /submit {type:"WALLET", from, to: <factory>, nonce, signature, metadata?, depositWalletParams:
 *        {depositWallet, deadline, calls:[{target, value, data}]}} → {transactionID, state:"STATE_NEW"}
 *        400 {error} on a bad shape, wrong type, `to` not the factory, or a nonce other than the wallet's
 *        on-chain nonce ("batch nonce X does not match on-chain nonce Y"); then, asynchronously, the
 *        transaction ends STATE_CONFIRMED (transaction_hash set) or STATE_FAILED (error_msg = revert reason).
 *   GET  /v1/account/transactions/<id> → {transaction_id, transaction_hash, state, error_msg} (404 if unknown)
 *
 * With `builder` credentials, POST /submit needs valid Builder HMAC headers (POLY_BUILDER_API_KEY,
 * _TIMESTAMP, _PASSPHRASE, _SIGNATURE = base64url(HMAC-SHA256(base64(secret), ts+method+path+body))),
 * else 401 {error}; GETs are accepted without them (as the public client reads them) but are checked when
 * they carry them. Fault injection: hold()/release(), forgetHeld(), loseNextResponse().
 */
import { createHmac, randomUUID } from 'node:crypto';
import { decodeErrorResult, encodeFunctionData, isAddress, isHex, isAddressEqual, parseAbi, type Address, type Hex } from 'viem';
import { contractAbi, type InProcessEvm } from './in-process-evm.ts';

export type RelayerState = 'STATE_NEW' | 'STATE_EXECUTED' | 'STATE_MINED' | 'STATE_CONFIRMED' | 'STATE_FAILED' | 'STATE_INVALID';

export interface RelayerTransaction {
  id: string;
  state: RelayerState;
  /** Set once mined ('' before, and for a batch that reverted). */
  hash: Hex | '';
  /** `from` of the submission (the owner or session key that signed). */
  signer: Address;
  wallet: Address;
  nonce: bigint;
  deadline: bigint;
  calls: { target: Address; value: bigint; data: Hex }[];
  signature: Hex;
  metadata: string;
  /** The revert reason when STATE_FAILED. */
  error: string;
}

export interface RelayerStandinOptions {
  evm: InProcessEvm;
  factory: Address;
  builder?: { key: string; secret: string; passphrase: string };
}

/** The address the params endpoint names as the relayer (the real one answers its own hot wallet). */
export const RELAYER_ADDRESS: Address = '0x7e1A7e1A7e1a7E1a7e1a7e1a7E1A7e1a7E1a7E1a';

const NONCE_ABI = parseAbi(['function nonce() view returns (uint256)']);
const DECIMAL = /^\d+$/;

export class RelayerStandin {
  /** Accepted /submit calls (400s and 401s not counted). */
  submissions = 0;
  private records: RelayerTransaction[] = [];
  private held: RelayerTransaction[] | undefined;
  private loseNext = false;
  private queue: Promise<void> = Promise.resolve();
  private server?: ReturnType<typeof Bun.serve>;

  constructor(private options: RelayerStandinOptions) {}

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

  /** Every accepted transaction, oldest first (copies). */
  get transactions(): readonly Readonly<RelayerTransaction>[] {
    return this.records.map((t) => ({ ...t, calls: [...t.calls] }));
  }

  /** New transactions stay STATE_NEW, unexecuted, until release(). */
  hold() {
    this.held ??= [];
  }

  /** Executes the held transactions in order; resolves when they have all finished. */
  release(): Promise<void> {
    const held = this.held ?? [];
    this.held = undefined;
    for (const t of held) this.enqueue(t);
    return this.settled();
  }

  /**
   * The relayer loses track of every transaction it holds (GET answers 404): they never execute.
   * What a relayer restart without persistence would look like to a client.
   */
  forgetHeld() {
    const held = new Set(this.held ?? []);
    this.held = [];
    this.records = this.records.filter((r) => !held.has(r));
  }

  /** The next accepted /submit executes its transaction (awaited) but answers 503: a response lost in a crash. */
  loseNextResponse() {
    this.loseNext = true;
  }

  /** Resolves once every transaction queued so far has finished executing. */
  settled(): Promise<void> {
    return this.queue;
  }

  private async handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const body = request.method === 'POST' ? await request.text() : '';
    try {
      const authError = this.checkAuth(request, url, body, request.method === 'POST');
      if (authError) return json({ error: authError }, 401);
      if (request.method === 'GET' && url.pathname === '/v1/account/transactions/params') return await this.params(url);
      if (request.method === 'GET' && url.pathname.startsWith('/v1/account/transactions/')) return this.status(decodeURIComponent(url.pathname.slice('/v1/account/transactions/'.length)));
      if (request.method === 'POST' && url.pathname === '/submit') return await this.submit(body);
      return json({ error: 'not found' }, 404);
    } catch (error) {
      return json({ error: String((error as Error)?.message ?? error) }, 500);
    }
  }

  private checkAuth(request: Request, url: URL, body: string, required: boolean): string | undefined {
    const builder = this.options.builder;
    if (!builder) return undefined;
    const h = (name: string) => request.headers.get(name);
    const [key, timestamp, passphrase, signature] = [h('POLY_BUILDER_API_KEY'), h('POLY_BUILDER_TIMESTAMP'), h('POLY_BUILDER_PASSPHRASE'), h('POLY_BUILDER_SIGNATURE')];
    if (!key && !timestamp && !passphrase && !signature && !required) return undefined;
    if (!key || !timestamp || !passphrase || !signature) return 'invalid authorization: missing builder headers';
    if (key !== builder.key || passphrase !== builder.passphrase) return 'invalid authorization: unknown builder api key';
    if (!DECIMAL.test(timestamp) || Math.abs(Number(timestamp) - Date.now() / 1000) > 300) return 'invalid authorization: timestamp out of range';
    const expected = createHmac('sha256', Buffer.from(builder.secret, 'base64'))
      .update(timestamp + request.method + url.pathname + url.search + body)
      .digest('base64url');
    if (signature.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_') !== expected) return 'invalid authorization: bad signature';
    return undefined;
  }

  private async params(url: URL): Promise<Response> {
    const address = url.searchParams.get('address') ?? '';
    if (!isAddress(address, { strict: false })) return json({ error: 'invalid address' }, 400);
    if (url.searchParams.get('type') !== 'WALLET') return json({ error: 'unsupported type' }, 400);
    let wallet: Address | undefined = (await this.isContract(address)) ? address : undefined;
    if (!wallet) {
      const wallets = new Set(this.records.filter((t) => isAddressEqual(t.signer, address)).map((t) => t.wallet.toLowerCase()));
      if (wallets.size === 1) wallet = [...wallets][0] as Address;
    }
    const nonce = wallet ? await this.walletNonce(wallet) : 0n;
    return json({ address: RELAYER_ADDRESS, nonce: String(nonce ?? 0n) });
  }

  private status(id: string): Response {
    const t = this.records.find((r) => r.id === id);
    if (!t) return json({ error: 'transaction not found' }, 404);
    return json({ transaction_id: t.id, transaction_hash: t.hash, state: t.state, error_msg: t.error });
  }

  private async submit(text: string): Promise<Response> {
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      return json({ error: 'invalid json body' }, 400);
    }
    const shapeError = checkShape(body);
    if (shapeError) return json({ error: shapeError }, 400);
    if (!isAddressEqual(body.to, this.options.factory)) return json({ error: `to must be the deposit wallet factory ${this.options.factory}` }, 400);
    const params = body.depositWalletParams;
    const onChain = await this.walletNonce(params.depositWallet);
    if (onChain === undefined) return json({ error: `deposit wallet ${params.depositWallet} is not deployed` }, 400);
    if (BigInt(body.nonce) !== onChain) return json({ error: `batch nonce ${body.nonce} does not match on-chain nonce ${onChain}` }, 400);

    const t: RelayerTransaction = {
      id: randomUUID(),
      state: 'STATE_NEW',
      hash: '',
      signer: body.from,
      wallet: params.depositWallet,
      nonce: BigInt(body.nonce),
      deadline: BigInt(params.deadline),
      calls: params.calls.map((c: any) => ({ target: c.target, value: BigInt(c.value), data: c.data })),
      signature: body.signature,
      metadata: body.metadata ?? '',
      error: '',
    };
    this.records.push(t);
    this.submissions++;
    if (this.held) this.held.push(t);
    else this.enqueue(t);
    if (this.loseNext) {
      this.loseNext = false;
      await this.settled();
      return json({ error: 'service unavailable' }, 503);
    }
    return json({ transactionID: t.id, state: t.state });
  }

  /** Executions run one at a time, in submission order, after the HTTP answer has gone. */
  private enqueue(t: RelayerTransaction) {
    this.queue = this.queue.then(() => new Promise<void>((resolve) => setTimeout(() => this.execute(t).finally(resolve), 0)));
  }

  private async execute(t: RelayerTransaction) {
    const { evm, factory } = this.options;
    const abi = contractAbi('DepositWallet');
    const args = [{ wallet: t.wallet, nonce: t.nonce, deadline: t.deadline, calls: t.calls }, t.signature];
    // Simulate first, for a readable revert reason (evm.write only says "reverted"). The EVM answers a
    // reverted eth_call with the revert data as its result; execute itself returns nothing.
    let simulated: unknown;
    try {
      simulated = await evm.request('eth_call', [{ from: factory, to: t.wallet, data: encodeFunctionData({ abi, functionName: 'execute', args }) }, 'latest']);
    } catch (error) {
      simulated = error;
    }
    if (simulated !== '0x') {
      t.state = 'STATE_FAILED';
      t.error = revertReason(simulated, abi);
      return;
    }
    try {
      const receipt = await evm.write({ address: t.wallet, abi, functionName: 'execute', args, from: factory });
      t.hash = receipt.transactionHash;
      t.state = 'STATE_CONFIRMED';
    } catch (error) {
      t.state = 'STATE_FAILED';
      t.error = String((error as Error)?.message ?? error);
    }
  }

  private async isContract(address: Address) {
    const code = await this.options.evm.request('eth_getCode', [address, 'latest']);
    return typeof code === 'string' && code !== '0x' && code !== '0x0';
  }

  private async walletNonce(wallet: Address): Promise<bigint | undefined> {
    if (!(await this.isContract(wallet))) return undefined;
    try {
      return await this.options.evm.client.readContract({ address: wallet, abi: NONCE_ABI, functionName: 'nonce' });
    } catch {
      return undefined;
    }
  }
}

function json(body: unknown, status = 200) {
  return Response.json(body, { status });
}

/** Why a /submit body is malformed, or undefined when it has the documented shape. */
function checkShape(body: any): string | undefined {
  if (!body || typeof body !== 'object') return 'body must be a JSON object';
  if (body.type !== 'WALLET') return `unsupported transaction type ${JSON.stringify(body.type)}`;
  if (typeof body.from !== 'string' || !isAddress(body.from, { strict: false })) return 'from must be an address';
  if (typeof body.to !== 'string' || !isAddress(body.to, { strict: false })) return 'to must be an address';
  if (typeof body.nonce !== 'string' || !DECIMAL.test(body.nonce)) return 'nonce must be a decimal string';
  if (typeof body.signature !== 'string' || !isHex(body.signature) || body.signature.length < 4) return 'signature must be hex';
  if (body.metadata !== undefined && (typeof body.metadata !== 'string' || body.metadata.length > 500)) return 'metadata must be a string of at most 500 characters';
  const p = body.depositWalletParams;
  if (!p || typeof p !== 'object') return 'depositWalletParams is required';
  if (typeof p.depositWallet !== 'string' || !isAddress(p.depositWallet, { strict: false })) return 'depositWalletParams.depositWallet must be an address';
  if (typeof p.deadline !== 'string' || !DECIMAL.test(p.deadline)) return 'depositWalletParams.deadline must be a decimal string';
  if (!Array.isArray(p.calls) || p.calls.length === 0) return 'depositWalletParams.calls must be a non-empty array';
  for (const c of p.calls) {
    if (!c || typeof c.target !== 'string' || !isAddress(c.target, { strict: false })) return 'call target must be an address';
    if (typeof c.value !== 'string' || !DECIMAL.test(c.value)) return 'call value must be a decimal string';
    if (typeof c.data !== 'string' || !isHex(c.data)) return 'call data must be hex';
  }
  return undefined;
}

/** The revert reason of a failed eth_call, given its revert data or error: Error(string), a custom error, or the node's message. */
function revertReason(error: unknown, abi: ReturnType<typeof contractAbi>): string {
  const e = error as { data?: unknown; message?: string };
  const data = typeof error === 'string' ? error : typeof e?.data === 'string' ? e.data : typeof (e?.data as any)?.data === 'string' ? (e.data as any).data : undefined;
  if (data && isHex(data) && data.length >= 10) {
    try {
      const decoded = decodeErrorResult({ abi, data: data as Hex });
      return decoded.errorName === 'Error' ? String(decoded.args?.[0]) : `${decoded.errorName}(${(decoded.args ?? []).join(',')})`;
    } catch {}
  }
  return e?.message ?? `execution reverted${data ? ` (${data})` : ''}`;
}
