/**
 * VENUE=polymarket: the venue interface over Polymarket's CLOB V2 (docs/decisions.md §8). Orders are signed
 * (EIP-712, viem) by the user's session key on behalf of their deposit wallet (signature type
 * POLY_1271: the wallet is maker and signer); requests carry the user's L2 API credentials; token
 * balances come from Polygon (ERC-1155 `balanceOfBatch`), the source of truth for positions/sync.
 */
import { and, eq } from 'drizzle-orm';
import { getAddress, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Db } from '../../../db/client.ts';
import { polymarketOrders } from '../../../db/schema.ts';
import type { PositionReader } from '../../chain/position-reader.ts';
import { ApiError } from '../../errors.ts';
import { MICROS_PER_USD_BIGINT } from '../../lib/money.ts';
import type { VenueRules } from '../../valuation/index.ts';
import type { MarketableOrder, OrderBook, Redemption, Venue, VenueCredentials, VenueOrder } from '../venue.ts';
import type { Redeemer } from './redeemer.ts';
import { ClobError, clobMessage, type ClobAuth, type ClobHttp } from './clob-http.ts';
import { orderHash, signOrder, tickForPrice } from './order-signing.ts';
import type { TokenMap } from './token-map.ts';
import { decimalToMicros, fixed6ToMicros, mapStatus, refusalReason, toOrderBook, type WireBook } from './wire.ts';

/** Deposit wallet signatures (ERC-1271 via the session key). */
const SIGNATURE_TYPE = 3;
const BOOKS_PER_CALL = 500;

export interface PolymarketVenueOptions {
  db: Db;
  http: ClobHttp;
  tokens: TokenMap;
  /** Reads ERC-1155 balances on Polygon; without it positions/sync cannot run. */
  positions?: PositionReader;
  now?: () => number;
  /** Order salts: random by default (tests fix them). */
  salt?: () => bigint;
  /** Redeems settled positions on chain; without it (no POLYGON_RPC_URL or relayer credentials) settlements stay unpaid. */
  redeemer?: Redeemer;
}

type OrderRow = typeof polymarketOrders.$inferSelect;

interface PostOrderResponse {
  success?: boolean;
  errorMsg?: string;
  orderID?: string;
  status?: string;
  makingAmount?: string;
  takingAmount?: string;
  transactionsHashes?: string[];
}

interface WireOrder {
  id: string;
  status: string;
  side?: string;
  original_size?: string;
  size_matched?: string;
  price?: string;
  associate_trades?: string[];
}

export class PolymarketVenue implements Venue {
  readonly name = 'polymarket' as const;
  readonly rules: VenueRules = { shareStepMicros: 10_000, minOrderMicros: 5_000_000 };
  readonly usesSessionKeys = true;
  private now: () => number;
  private salt: () => bigint;

  constructor(private options: PolymarketVenueOptions) {
    this.now = options.now ?? Date.now;
    this.salt = options.salt ?? (() => BigInt(Math.floor(Math.random() * 2 ** 48)));
  }

  private auth(credentials: VenueCredentials): ClobAuth {
    if (!credentials.walletAddress) {
      throw new ApiError('BAD_REQUEST', 'walletAddress: Polymarket needs your deposit wallet; set it with PUT /api/trading/settings');
    }
    return { apiKey: credentials.apiKey, secret: credentials.secret, passphrase: credentials.passphrase, address: getAddress(credentials.walletAddress) };
  }

  /** CLOB answers that mean "these credentials are not accepted". */
  private refusedCredentials(error: unknown): never {
    if (error instanceof ClobError && (error.status === 401 || error.status === 403)) {
      throw new ApiError('INVALID_CREDENTIALS', `The venue refused these credentials (${clobMessage(error.body)})`);
    }
    throw error instanceof ApiError ? error : new ApiError('VENUE_UNAVAILABLE', `The venue answered unexpectedly; retry shortly`, { cause: error });
  }

  async getOrderBooks(bandIds: string[]): Promise<Map<string, OrderBook>> {
    const tokens = await this.options.tokens.byBand();
    const result = new Map<string, OrderBook>(bandIds.map((id) => [id, toOrderBook(id, { asset_id: '' })]));
    const mapped = bandIds.filter((id) => tokens.has(id));
    const bandOf = new Map(mapped.map((id) => [tokens.get(id)!.tokenId, id]));
    const chunks = [];
    for (let i = 0; i < mapped.length; i += BOOKS_PER_CALL) chunks.push(mapped.slice(i, i + BOOKS_PER_CALL));
    const answers = await Promise.all(
      chunks.map((chunk) => this.options.http.call<WireBook[]>('POST', '/books', { body: chunk.map((id) => ({ token_id: tokens.get(id)!.tokenId })) })),
    );
    for (const book of answers.flat()) {
      const bandId = bandOf.get(String(book?.asset_id));
      if (bandId) result.set(bandId, toOrderBook(bandId, book));
    }
    return result;
  }

  async checkCredentials(credentials: VenueCredentials): Promise<void> {
    await this.getCollateral(credentials);
  }

  async getCollateral(credentials: VenueCredentials): Promise<number> {
    const answer = await this.options.http
      .call<{ balance?: string }>('GET', '/balance-allowance', { query: { asset_type: 'COLLATERAL', signature_type: String(SIGNATURE_TYPE) }, auth: this.auth(credentials) })
      .catch((error) => this.refusedCredentials(error));
    return fixed6ToMicros(answer?.balance) ?? 0;
  }

  async placeOrder(credentials: VenueCredentials, order: MarketableOrder): Promise<VenueOrder> {
    const auth = this.auth(credentials);
    let row = await this.findRow(credentials, order.clientOrderId);
    if (row && !row.orderHash) return this.tombstone(order.clientOrderId, order);
    if (!row) {
      const token = (await this.options.tokens.byBand()).get(order.tokenId);
      if (!token) throw new ApiError('ORDER_REJECTED', `Band ${order.tokenId} has no tradable venue token (run npm run events:sync)`);
      if (!credentials.sessionKey) throw new ApiError('INVALID_CREDENTIALS', 'No session key stored: POST /api/trading/credentials again');
      row = await this.signAndRecord(credentials, order, token.tokenId, token.negRisk, getAddress(auth.address));
      if (!row.orderHash) return this.tombstone(order.clientOrderId, order);
    }

    let answer: PostOrderResponse;
    try {
      answer = await this.options.http.call<PostOrderResponse>('POST', '/order', {
        body: { order: row.signedOrder, owner: credentials.apiKey, orderType: row.orderType },
        auth,
      });
    } catch (error) {
      if (error instanceof ClobError && error.status === 400) return this.refused(row, clobMessage(error.body));
      return this.refusedCredentials(error);
    }
    if (answer?.success === false) return this.refused(row, answer.errorMsg ?? 'rejected');
    return this.fromPost(row, answer);
  }

  /** Signs the order and records it before anything is sent (a retry re-posts the same bytes). */
  private async signAndRecord(credentials: VenueCredentials, order: MarketableOrder, tokenId: string, negRisk: boolean, wallet: Address): Promise<OrderRow> {
    const session = privateKeyToAccount(credentials.sessionKey!);
    const spec = {
      tokenId,
      side: order.side,
      sharesMicros: order.sharesMicros,
      limitPriceMicros: order.limitPriceMicros,
      tickMicros: tickForPrice(order.limitPriceMicros),
      negRisk,
      maker: wallet,
      signer: wallet,
      signatureType: SIGNATURE_TYPE,
      salt: this.salt(),
      timestampMs: this.now(),
    } as const;
    const signed = await signOrder(session, spec);
    const values = {
      clientOrderId: order.clientOrderId,
      apiKey: credentials.apiKey,
      orderHash: orderHash(spec),
      tokenId,
      side: order.side,
      requestedMicros: order.sharesMicros,
      orderType: order.timeInForce,
      signedOrder: signed,
    };
    await this.options.db.insert(polymarketOrders).values(values).onConflictDoNothing();
    return (await this.findRow(credentials, order.clientOrderId))!;
  }

  private async findRow(credentials: VenueCredentials, clientOrderId: string): Promise<OrderRow | undefined> {
    const [row] = await this.options.db
      .select()
      .from(polymarketOrders)
      .where(and(eq(polymarketOrders.clientOrderId, clientOrderId), eq(polymarketOrders.apiKey, credentials.apiKey)));
    return row;
  }

  private base(row: Pick<OrderRow, 'clientOrderId' | 'tokenId' | 'side' | 'requestedMicros' | 'orderHash'>) {
    return { venueOrderId: row.orderHash ?? '', clientOrderId: row.clientOrderId, tokenId: row.tokenId, side: row.side, requestedMicros: row.requestedMicros, feesMicros: 0 };
  }

  private refused(row: OrderRow, message: string): VenueOrder {
    return { ...this.base(row), status: 'REJECTED', filledMicros: 0, notionalMicros: 0, reason: refusalReason(message) };
  }

  /** POST /order's answer: for a match, makingAmount is what we gave and takingAmount what we got. */
  private fromPost(row: OrderRow, answer: PostOrderResponse): VenueOrder {
    const making = decimalToMicros(answer.makingAmount) ?? 0;
    const taking = decimalToMicros(answer.takingAmount) ?? 0;
    const [filled, notional] = row.side === 'BUY' ? [taking, making] : [making, taking];
    const status = mapStatus(answer.status, filled);
    return {
      ...this.base(row),
      status,
      filledMicros: status === 'PENDING' ? 0 : filled,
      notionalMicros: status === 'PENDING' ? 0 : notional,
      reason: status === 'CANCELLED' ? 'no-liquidity' : null,
      txHash: answer.transactionsHashes?.[0] ?? null,
    };
  }

  async getOrder(credentials: VenueCredentials, clientOrderId: string): Promise<VenueOrder | null> {
    const row = await this.findRow(credentials, clientOrderId);
    if (!row) return null;
    if (!row.orderHash) return this.tombstone(clientOrderId, row);
    let wire: WireOrder | null;
    try {
      wire = await this.options.http.call<WireOrder | null>('GET', `/data/order/${row.orderHash}`, { auth: this.auth(credentials) });
    } catch (error) {
      // The CLOB never received it (the process stopped between recording and posting).
      if (error instanceof ClobError && error.status === 404) return null;
      return this.refusedCredentials(error);
    }
    if (!wire || !wire.id) return null;
    const filled = decimalToMicros(wire.size_matched) ?? 0;
    const status = mapStatus(wire.status, filled);
    return { ...this.base(row), status, filledMicros: filled, notionalMicros: await this.notionalOf(credentials, wire, filled), reason: status === 'REJECTED' ? 'invalid' : null };
  }

  /** USD that changed hands: the sum over the order's trades (fills may beat the limit price). */
  private async notionalOf(credentials: VenueCredentials, wire: WireOrder, filled: number): Promise<number> {
    const tradeIds = wire.associate_trades ?? [];
    if (!tradeIds.length) return Number((BigInt(filled) * BigInt(decimalToMicros(wire.price) ?? 0)) / MICROS_PER_USD_BIGINT);
    let total = 0n;
    for (const id of tradeIds) {
      const page = await this.options.http.call<{ data?: { size?: string; price?: string }[] }>('GET', '/data/trades', { query: { id }, auth: this.auth(credentials) });
      for (const trade of page?.data ?? []) total += BigInt(decimalToMicros(trade.size) ?? 0) * BigInt(decimalToMicros(trade.price) ?? 0);
    }
    return Number(total / MICROS_PER_USD_BIGINT);
  }

  async cancelOrder(credentials: VenueCredentials, clientOrderId: string): Promise<VenueOrder | null> {
    const row = await this.findRow(credentials, clientOrderId);
    if (!row) {
      // Never signed here: leave a tombstone so that this id can never be placed later.
      await this.options.db
        .insert(polymarketOrders)
        .values({ clientOrderId, apiKey: credentials.apiKey, orderHash: null, tokenId: '', side: 'BUY', requestedMicros: 0, orderType: 'FOK', signedOrder: null })
        .onConflictDoNothing();
      return this.getOrder(credentials, clientOrderId);
    }
    if (row.orderHash) {
      await this.options.http.call('DELETE', '/order', { body: { orderID: row.orderHash }, auth: this.auth(credentials) }).catch((error) => {
        if (!(error instanceof ClobError && error.status < 500)) throw error;
      });
    }
    return (await this.getOrder(credentials, clientOrderId)) ?? { ...this.base(row), status: 'CANCELLED', filledMicros: 0, notionalMicros: 0, reason: 'never-sent' };
  }

  private tombstone(clientOrderId: string, row: { tokenId: string; side: 'BUY' | 'SELL' } & Partial<Pick<OrderRow, 'requestedMicros'>>): VenueOrder {
    return {
      venueOrderId: '',
      clientOrderId,
      tokenId: row.tokenId,
      side: row.side,
      requestedMicros: row.requestedMicros ?? 0,
      feesMicros: 0,
      status: 'CANCELLED',
      filledMicros: 0,
      notionalMicros: 0,
      reason: 'cancelled-before-placement',
    };
  }

  async getTokenBalances(credentials: VenueCredentials, bandIds: string[], walletAddress?: string): Promise<Map<string, number>> {
    const reader = this.options.positions;
    if (!reader) throw new ApiError('VENUE_UNAVAILABLE', 'No Polygon RPC is configured (POLYGON_RPC_URL)');
    const wallet = walletAddress ?? credentials.walletAddress;
    if (!wallet) throw new ApiError('BAD_REQUEST', 'walletAddress: required');
    const tokens = await this.options.tokens.byBand();
    const mapped = bandIds.map((id) => tokens.get(id)).filter((t) => t !== undefined);
    const balances = await reader.balancesOf(getAddress(wallet), mapped.map((t) => ({ tokenId: t.tokenId, version: t.version })));
    return new Map(bandIds.map((id) => [id, Number(balances.get(tokens.get(id)?.tokenId ?? '') ?? 0n)]));
  }

  async redeem(redemption: Redemption, credentials: () => Promise<VenueCredentials>): Promise<{ txHash: string | null }> {
    if (!this.options.redeemer) throw new Error('live redemption needs POLYGON_RPC_URL and the relayer credentials POLYMARKET_BUILDER_API_KEY/SECRET/PASSPHRASE');
    return this.options.redeemer.redeem(redemption, await credentials());
  }
}
