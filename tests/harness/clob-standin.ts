/**
 * A local stand-in for Polymarket's CLOB V2, for tests: the documented endpoints and response shapes
 * (/time, /books, /balance-allowance, /order, /data/order/:id, /data/trades, DELETE /order), strict
 * about what the real one checks — L2 HMAC headers, the API key's owner, the EIP-712 order signature
 * by the wallet's authorised session key, tick grid and minimum size — with books around reference
 * prices (the paper venue's book shape), fills that walk them, collateral and token holdings per
 * wallet, and injectable faults (HTTP errors, delays, refusals).
 */
import type { Address } from 'viem';
import type { BookLevel } from '../../server/valuation/index.ts';
import { verifyL2Signature } from '../../server/venues/polymarket/l2-auth.ts';
import { recoverOrderSigner, wireOrderHash } from '../../server/venues/polymarket/order-signing.ts';
import { microsToDecimal } from '../../server/venues/polymarket/wire.ts';
import { PaperVenue } from '../../server/venues/paper.ts';
import { mirrorBook } from '../../server/venues/paper-book.ts';

export interface StandinAccount {
  apiKey: string;
  secret: string;
  passphrase: string;
  wallet: Address;
}

interface StoredOrder {
  id: string;
  owner: string;
  maker: Address;
  tokenId: string;
  side: 'BUY' | 'SELL';
  sizeMicros: number;
  priceMicros: number;
  matchedMicros: number;
  notionalMicros: number;
  status: 'ORDER_STATUS_MATCHED' | 'ORDER_STATUS_CANCELED' | 'ORDER_STATUS_LIVE';
  tradeIds: string[];
  createdAt: number;
}

interface Fault {
  path: string;
  status?: number;
  delayMs?: number;
  body?: unknown;
}

const MIN_ORDER = 5_000_000;

export class ClobStandin {
  readonly accounts = new Map<string, StandinAccount>();
  /** Session keys each wallet has authorised to sign for it. */
  readonly authorised = new Map<string, Set<string>>();
  readonly collateral = new Map<string, number>();
  readonly holdings = new Map<string, Map<string, number>>();
  readonly orders = new Map<string, StoredOrder>();
  readonly trades = new Map<string, { id: string; size: string; price: string; taker_order_id: string; status: string }>();
  /** Every request received (method and path), for assertions. */
  readonly requests: string[] = [];
  private faults: Fault[] = [];
  private books: PaperVenue;
  private server?: ReturnType<typeof Bun.serve>;

  /**
   * `complementOf`: a No token's Yes token. Its book is the Yes book mirrored (the CLOB matches a buy of
   * one outcome against a sale of the other), so a No token needs no reference price of its own.
   */
  constructor(private options: { referencePrice: (tokenId: string) => number | undefined; complementOf?: (tokenId: string) => string | undefined; startingCollateralMicros: number; drift?: number; now?: () => number }) {
    // The paper venue's book shape (five levels a side around the reference price, depth in dollars),
    // drift included, on Polymarket's tick rule: 0.001 under 0.04 and over 0.96, 0.01 between.
    this.books = new PaperVenue({ seed: 7, drift: options.drift ?? 0, now: options.now, referencePrices: async () => new Map() });
  }

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

  register(account: StandinAccount) {
    this.accounts.set(account.apiKey, account);
    if (!this.collateral.has(account.wallet)) this.collateral.set(account.wallet, this.options.startingCollateralMicros);
  }

  authorise(wallet: string, sessionSigner: string) {
    const set = this.authorised.get(wallet.toLowerCase()) ?? new Set();
    set.add(sessionSigner.toLowerCase());
    this.authorised.set(wallet.toLowerCase(), set);
  }

  /** The next `count` requests to `path` get `status` (or wait `delayMs`, or answer `body`). */
  inject(fault: Fault, count = 1) {
    for (let i = 0; i < count; i++) this.faults.push(fault);
  }

  clearFaults() {
    this.faults = [];
  }

  held(wallet: string, tokenId: string) {
    return this.holdings.get(wallet)?.get(tokenId) ?? 0;
  }

  /** Redemption (tests/harness/ledger-relayer.ts): takes `tokenId` out of the wallet and credits `payoutMicros` of collateral. */
  redeem(wallet: string, tokenId: string, sharesMicros: number, payoutMicros: number) {
    this.move(wallet, tokenId, -sharesMicros);
    this.collateral.set(wallet, (this.collateral.get(wallet) ?? 0) + payoutMicros);
  }

  private move(wallet: string, tokenId: string, delta: number) {
    const byToken = this.holdings.get(wallet) ?? new Map<string, number>();
    byToken.set(tokenId, (byToken.get(tokenId) ?? 0) + delta);
    this.holdings.set(wallet, byToken);
  }

  /** Markets listed on the venue after start (a test's discovered event): each Yes token's price, and its No. */
  private listed = new Map<string, number>();
  private listedComplements = new Map<string, string>();
  list(market: { yes: string; no: string; price: number }) {
    this.listed.set(market.yes, market.price);
    this.listedComplements.set(market.no, market.yes);
  }

  private book(tokenId: string) {
    const reference = (id: string) => this.listed.get(id) ?? this.options.referencePrice(id);
    const yes = this.listedComplements.get(tokenId) ?? this.options.complementOf?.(tokenId);
    if (yes) return mirrorBook(this.books.book(yes, reference(yes)), tokenId);
    return this.books.book(tokenId, reference(tokenId));
  }

  private async handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const body = request.method === 'GET' ? '' : await request.text();
    this.requests.push(`${request.method} ${url.pathname}`);
    const fault = this.faults.findIndex((f) => url.pathname.startsWith(f.path));
    if (fault >= 0) {
      const [f] = this.faults.splice(fault, 1);
      if (f!.delayMs) await Bun.sleep(f!.delayMs);
      if (f!.status) return Response.json(f!.body ?? { error: 'injected' }, { status: f!.status });
      if (f!.body !== undefined) return Response.json(f!.body);
    }
    const json = body ? JSON.parse(body) : undefined;
    if (request.method === 'GET' && url.pathname === '/time') return Response.json(Math.floor((this.options.now?.() ?? Date.now()) / 1000));
    if (request.method === 'POST' && url.pathname === '/books') return Response.json((json as { token_id: string }[]).map((q) => this.wireBook(q.token_id)));

    const account = this.authenticate(request, url.pathname, body);
    if (account instanceof Response) return account;
    if (request.method === 'GET' && url.pathname === '/balance-allowance') {
      return Response.json({ balance: String(this.collateral.get(account.wallet) ?? 0), allowances: {} });
    }
    if (request.method === 'POST' && url.pathname === '/order') return this.postOrder(account, json);
    const orderPath = /^\/data\/order\/(0x[0-9a-f]+)$/i.exec(url.pathname);
    if (request.method === 'GET' && orderPath) {
      const order = this.orders.get(orderPath[1]!.toLowerCase());
      if (!order || order.owner !== account.apiKey) return Response.json({ error: 'order not found' }, { status: 404 });
      return Response.json(this.wireOrder(order));
    }
    if (request.method === 'GET' && url.pathname === '/data/trades') {
      const trade = this.trades.get(url.searchParams.get('id') ?? '');
      return Response.json({ limit: 100, count: trade ? 1 : 0, next_cursor: 'LTE=', data: trade ? [trade] : [] });
    }
    if (request.method === 'DELETE' && url.pathname === '/order') {
      const id = String(json?.orderID ?? '').toLowerCase();
      const order = this.orders.get(id);
      if (!order) return Response.json({ canceled: [], not_canceled: { [id]: 'order not found' } });
      if (order.status === 'ORDER_STATUS_LIVE') {
        order.status = 'ORDER_STATUS_CANCELED';
        return Response.json({ canceled: [id], not_canceled: {} });
      }
      return Response.json({ canceled: [], not_canceled: { [id]: 'order already matched or cancelled' } });
    }
    return Response.json({ error: 'not found' }, { status: 404 });
  }

  private authenticate(request: Request, path: string, body: string): StandinAccount | Response {
    const h = (name: string) => request.headers.get(name) ?? '';
    const account = this.accounts.get(h('POLY_API_KEY'));
    const timestamp = Number(h('POLY_TIMESTAMP'));
    const nowSeconds = Math.floor((this.options.now?.() ?? Date.now()) / 1000);
    if (!account || h('POLY_PASSPHRASE') !== account.passphrase) return Response.json({ error: 'Unauthorized/Invalid api key' }, { status: 401 });
    if (h('POLY_ADDRESS').toLowerCase() !== account.wallet.toLowerCase()) return Response.json({ error: 'Unauthorized/Invalid api key' }, { status: 401 });
    if (!(Math.abs(nowSeconds - timestamp) <= 30)) return Response.json({ error: 'timestamp out of range' }, { status: 401 });
    if (!verifyL2Signature(account.secret, timestamp, request.method, path, body || undefined, h('POLY_SIGNATURE'))) {
      return Response.json({ error: 'Unauthorized/Invalid signature' }, { status: 401 });
    }
    return account;
  }

  private wireBook(tokenId: string) {
    const book = this.book(tokenId);
    const level = (l: BookLevel) => ({ price: microsToDecimal(l.priceMicros), size: microsToDecimal(l.sizeMicros) });
    // As the CLOB sends them: bids ascending, asks descending (best last).
    return {
      market: `0x${'0'.repeat(64)}`,
      asset_id: tokenId,
      timestamp: String(Date.now()),
      hash: 'standin',
      bids: [...book.bids].reverse().map(level),
      asks: [...book.asks].reverse().map(level),
      min_order_size: '5',
      tick_size: microsToDecimal(book.tickMicros),
      neg_risk: true,
      last_trade_price: book.lastTradeMicros === null ? '' : microsToDecimal(book.lastTradeMicros),
    };
  }

  private wireOrder(o: StoredOrder) {
    return {
      id: o.id,
      status: o.status,
      owner: o.owner,
      maker_address: o.maker,
      market: `0x${'0'.repeat(64)}`,
      asset_id: o.tokenId,
      side: o.side,
      original_size: microsToDecimal(o.sizeMicros),
      size_matched: microsToDecimal(o.matchedMicros),
      price: microsToDecimal(o.priceMicros),
      outcome: 'Yes',
      expiration: '0',
      order_type: 'FOK',
      associate_trades: o.tradeIds,
      created_at: Math.floor(o.createdAt / 1000),
    };
  }

  private refuse(message: string) {
    return Response.json({ success: false, errorMsg: message, orderID: '', status: '' }, { status: 400 });
  }

  private async postOrder(account: StandinAccount, request: { order: Record<string, unknown>; owner: string; orderType: 'FOK' | 'FAK' }): Promise<Response> {
    const order = request.order;
    if (request.owner !== account.apiKey) return this.refuse('the order owner has to be the owner of the API KEY');
    if (String(order.maker).toLowerCase() !== account.wallet.toLowerCase()) return this.refuse('maker address not allowed');
    let signer: string;
    try {
      signer = (await recoverOrderSigner(order as never)).toLowerCase();
    } catch {
      return this.refuse('invalid signature');
    }
    if (!this.authorised.get(account.wallet.toLowerCase())?.has(signer)) return this.refuse('invalid signature');
    const id = wireOrderHash(order as never).toLowerCase();
    const existing = this.orders.get(id);
    if (existing) return Response.json(this.postAnswer(existing));

    const side = order.side === 'BUY' || order.side === 0 ? 'BUY' : 'SELL';
    const maker = BigInt(String(order.makerAmount));
    const taker = BigInt(String(order.takerAmount));
    const shares = Number(side === 'BUY' ? taker : maker);
    const usd = Number(side === 'BUY' ? maker : taker);
    const price = Math.round((usd * 1_000_000) / shares);
    const tokenId = String(order.tokenId);
    const book = this.book(tokenId);
    // The market's tick at this moment: the price must lie on it, within [tick, 1 − tick].
    const tick = book.tickMicros;
    if (price % tick !== 0 || price < tick || price > 1_000_000 - tick) return this.refuse(`invalid price (${price / 1e6}), min: ${tick / 1e6} - max: ${1 - tick / 1e6}`);
    if (shares < MIN_ORDER) return this.refuse(`order is invalid. Size (${shares / 1e6}) lower than the minimum: 5`);

    const levels = side === 'BUY' ? book.asks.filter((l) => l.priceMicros <= price) : book.bids.filter((l) => l.priceMicros >= price);
    let remaining = shares;
    let notional = 0n;
    const fills: { size: number; price: number }[] = [];
    for (const level of levels) {
      if (remaining === 0) break;
      const take = Math.min(remaining, level.sizeMicros);
      fills.push({ size: take, price: level.priceMicros });
      notional += BigInt(take) * BigInt(level.priceMicros);
      remaining -= take;
    }
    const filled = shares - remaining;
    if (filled === 0) {
      return this.refuse(
        request.orderType === 'FOK'
          ? "order couldn't be fully filled. FOK orders are fully filled or killed."
          : 'no orders found to match with FAK order. FAK orders are partially filled or killed if no match is found.',
      );
    }
    if (request.orderType === 'FOK' && remaining > 0) return this.refuse("order couldn't be fully filled. FOK orders are fully filled or killed.");
    const amount = side === 'BUY' ? Number((notional + 999_999n) / 1_000_000n) : Number(notional / 1_000_000n);
    if (side === 'BUY' && (this.collateral.get(account.wallet) ?? 0) < amount) return this.refuse('not enough balance / allowance');
    if (side === 'SELL' && this.held(account.wallet, tokenId) < filled) return this.refuse('not enough balance / allowance');

    this.collateral.set(account.wallet, (this.collateral.get(account.wallet) ?? 0) + (side === 'BUY' ? -amount : amount));
    this.move(account.wallet, tokenId, side === 'BUY' ? filled : -filled);
    const stored: StoredOrder = {
      id,
      owner: account.apiKey,
      maker: account.wallet,
      tokenId,
      side,
      sizeMicros: shares,
      priceMicros: price,
      matchedMicros: filled,
      notionalMicros: amount,
      status: remaining > 0 ? 'ORDER_STATUS_CANCELED' : 'ORDER_STATUS_MATCHED',
      tradeIds: [],
      createdAt: Date.now(),
    };
    // One trade per book level taken, as the CLOB reports matches against resting orders.
    for (const fill of fills) {
      const tradeId = `trade-${this.trades.size + 1}`;
      this.trades.set(tradeId, { id: tradeId, size: microsToDecimal(fill.size), price: microsToDecimal(fill.price), taker_order_id: id, status: 'CONFIRMED' });
      stored.tradeIds.push(tradeId);
    }
    this.orders.set(id, stored);
    return Response.json(this.postAnswer(stored));
  }

  private postAnswer(o: StoredOrder) {
    const [making, taking] = o.side === 'BUY' ? [o.notionalMicros, o.matchedMicros] : [o.matchedMicros, o.notionalMicros];
    return {
      success: true,
      errorMsg: '',
      orderID: o.id,
      status: 'matched',
      makingAmount: microsToDecimal(making),
      takingAmount: microsToDecimal(taking),
      transactionsHashes: [`0x${o.id.slice(2, 66).padEnd(64, '0')}`],
    };
  }
}
