/**
 * Polymarket CLOB V2 orders (EIP-712, viem), our own instead of @polymarket/clob-client-v2: amounts
 * are exact integers (the SDK uses floats) and signing needs no client object. Byte parity with the
 * SDK (amounts, wire JSON, signatures, order hash) is proven in tests/venues/polymarket-signing.test.ts.
 */
import {
  concatHex,
  domainSeparator,
  getAddress,
  hashStruct,
  hashTypedData,
  hexToNumber,
  isAddressEqual,
  isHex,
  numberToHex,
  recoverTypedDataAddress,
  size,
  sliceHex,
  stringToHex,
  zeroHash,
  type Address,
  type Hex,
  type LocalAccount,
} from 'viem';
import { MICROS_PER_USD, MICROS_PER_USD_BIGINT, microsToUsd } from '../../lib/money.ts';

export const POLYGON_CHAIN_ID = 137;
export const CTF_EXCHANGE_V2: Address = '0xE111180000d2663C0091e4f400237545B87B996B';
export const NEG_RISK_CTF_EXCHANGE_V2: Address = '0xe2222d279d744050d28e00520010520000310F59';
export const EXCHANGE_DOMAIN_NAME = 'Polymarket CTF Exchange';
export const EXCHANGE_DOMAIN_VERSION = '2';

export const ORDER_FIELDS = [
  { name: 'salt', type: 'uint256' },
  { name: 'maker', type: 'address' },
  { name: 'signer', type: 'address' },
  { name: 'tokenId', type: 'uint256' },
  { name: 'makerAmount', type: 'uint256' },
  { name: 'takerAmount', type: 'uint256' },
  { name: 'side', type: 'uint8' },
  { name: 'signatureType', type: 'uint8' },
  { name: 'timestamp', type: 'uint256' },
  { name: 'metadata', type: 'bytes32' },
  { name: 'builder', type: 'bytes32' },
] as const;
export const ORDER_TYPES = { Order: ORDER_FIELDS } as const;
/** Spelled out because the POLY_1271 wrapper carries it verbatim (ERC-7739 `contentsType`). */
export const ORDER_TYPE_STRING =
  'Order(uint256 salt,address maker,address signer,uint256 tokenId,uint256 makerAmount,uint256 takerAmount,uint8 side,uint8 signatureType,uint256 timestamp,bytes32 metadata,bytes32 builder)';

/** 0 EOA, 1 POLY_PROXY, 2 POLY_GNOSIS_SAFE, 3 POLY_1271 (deposit wallet, signed by a session key). */
export type SignatureType = 0 | 1 | 2 | 3;
export type OrderSide = 'BUY' | 'SELL';

export interface OrderSpec {
  /** Decimal uint256 (the CLOB's token id). */
  tokenId: string;
  side: OrderSide;
  sharesMicros: number;
  limitPriceMicros: number;
  tickMicros: number;
  negRisk: boolean;
  /** The funder: holds collateral and receives shares (the deposit wallet for type 3). */
  maker: Address;
  /** The address the exchange checks the signature against (the deposit wallet itself for type 3). */
  signer: Address;
  signatureType: SignatureType;
  salt: bigint;
  timestampMs: number;
  metadata?: Hex;
  builder?: Hex;
}

/** The `order` of `POST /order`, keys in the SDK's order so the JSON is byte-identical. */
export interface WireOrder {
  /** A JSON number, as the SDK sends it; hence salts are kept within 2^53. */
  salt: number;
  maker: Address;
  signer: Address;
  tokenId: string;
  makerAmount: string;
  takerAmount: string;
  side: OrderSide;
  signatureType: SignatureType;
  timestamp: string;
  /** Sent but not signed; "0" = no expiry (we only send FOK/FAK). */
  expiration: string;
  metadata: Hex;
  builder: Hex;
  signature: Hex;
}
export type UnsignedWireOrder = Omit<WireOrder, 'signature'>;

/** The SDK rounds shares down to 2 decimals. */
const SHARE_STEP = 10_000;
/** The tick sizes the SDK knows (its ROUNDING_CONFIG); with them shares × price is always whole micros. */
const TICKS = new Set([100_000, 10_000, 5_000, 2_500, 1_000, 100]);

/**
 * The tick to sign a limit price at: the coarsest of Polymarket's ticks (0.01, 0.001, 0.0001) the price
 * lies on. Prices come from the book's own levels, which sit on the market's tick at that moment
 * (0.001 under 0.04 and over 0.96, 0.01 between), so a whole-cent price is signed at 0.01 and 0.034 at
 * 0.001; a price on no tick is refused by orderAmounts.
 */
export function tickForPrice(priceMicros: number): number {
  return [10_000, 1_000, 100].find((tick) => priceMicros % tick === 0) ?? 10_000;
}
const POLY_1271 = 3;

export function exchangeAddress(negRisk: boolean): Address {
  return negRisk ? NEG_RISK_CTF_EXCHANGE_V2 : CTF_EXCHANGE_V2;
}

export function exchangeDomain(negRisk: boolean) {
  return { name: EXCHANGE_DOMAIN_NAME, version: EXCHANGE_DOMAIN_VERSION, chainId: POLYGON_CHAIN_ID, verifyingContract: exchangeAddress(negRisk) } as const;
}

function integer(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer (got ${value})`);
  return value;
}

/**
 * Limit-order amounts in 6-decimal units. Exact: shares are whole 0.01s and prices on the tick
 * grid, so USDC = shares × price needs no rounding. The SDK's float rounding lands on the same value
 * up to ~450k USDC per order; beyond that it can come out one micro lower (see the parity test).
 */
export function orderAmounts(order: { side: OrderSide; sharesMicros: number; limitPriceMicros: number; tickMicros: number }): {
  makerAmount: bigint;
  takerAmount: bigint;
} {
  if (order.side !== 'BUY' && order.side !== 'SELL') throw new TypeError(`Unknown side ${String(order.side)}`);
  const tick = integer('tickMicros', order.tickMicros);
  if (!TICKS.has(tick)) throw new RangeError(`Unsupported tick size ${microsToUsd(tick)}`);
  const price = integer('limitPriceMicros', order.limitPriceMicros);
  if (price % tick !== 0 || price < tick || price > MICROS_PER_USD - tick) {
    throw new RangeError(`Price ${microsToUsd(price)} is not on the ${microsToUsd(tick)} grid within [${microsToUsd(tick)}, ${1 - microsToUsd(tick)}]`);
  }
  const shares = BigInt(integer('sharesMicros', order.sharesMicros) - (order.sharesMicros % SHARE_STEP));
  if (shares === 0n) throw new RangeError(`Size ${microsToUsd(order.sharesMicros)} is below the 0.01 share step`);
  const usd = (shares * BigInt(price)) / MICROS_PER_USD_BIGINT;
  return order.side === 'BUY' ? { makerAmount: usd, takerAmount: shares } : { makerAmount: shares, takerAmount: usd };
}

function bytes32(name: string, value: Hex | undefined): Hex {
  if (value === undefined) return zeroHash;
  if (!isHex(value, { strict: true }) || size(value) !== 32) throw new TypeError(`${name} must be 32 bytes of hex`);
  return value.toLowerCase() as Hex;
}

/** The wire order without its signature (validated, addresses checksummed). */
export function buildOrder(spec: OrderSpec): UnsignedWireOrder {
  if (!/^\d{1,78}$/.test(spec.tokenId) || BigInt(spec.tokenId) >= 2n ** 256n) throw new TypeError(`tokenId must be a decimal uint256 (got ${spec.tokenId})`);
  if (spec.salt < 0n || spec.salt > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError('salt must fit a JSON number exactly (0 ≤ salt < 2^53)');
  if (![0, 1, 2, 3].includes(spec.signatureType)) throw new RangeError(`Unknown signature type ${spec.signatureType}`);
  const maker = getAddress(spec.maker);
  const signer = getAddress(spec.signer);
  // The exchange checks the signature against `signer` and moves funds of `maker`; for these two types
  // they are one and the same account (the EOA itself, or the deposit wallet validating via ERC-1271).
  if ((spec.signatureType === 0 || spec.signatureType === POLY_1271) && maker !== signer) {
    throw new TypeError(`Signature type ${spec.signatureType} needs maker = signer`);
  }
  const { makerAmount, takerAmount } = orderAmounts(spec);
  return {
    salt: Number(spec.salt),
    maker,
    signer,
    tokenId: BigInt(spec.tokenId).toString(),
    makerAmount: makerAmount.toString(),
    takerAmount: takerAmount.toString(),
    side: spec.side,
    signatureType: spec.signatureType,
    timestamp: String(integer('timestampMs', spec.timestampMs)),
    expiration: '0',
    metadata: bytes32('metadata', spec.metadata),
    builder: bytes32('builder', spec.builder),
  };
}

/** The signed struct: `side` is 0/1 there, a word on the wire; `expiration` is not signed at all. */
function orderMessage(order: UnsignedWireOrder) {
  return {
    salt: BigInt(order.salt),
    maker: order.maker,
    signer: order.signer,
    tokenId: BigInt(order.tokenId),
    makerAmount: BigInt(order.makerAmount),
    takerAmount: BigInt(order.takerAmount),
    side: order.side === 'BUY' ? 0 : 1,
    signatureType: order.signatureType,
    timestamp: BigInt(order.timestamp),
    metadata: order.metadata,
    builder: order.builder,
  };
}

function hashOrder(order: UnsignedWireOrder, negRisk: boolean): Hex {
  return hashTypedData({ domain: exchangeDomain(negRisk), types: ORDER_TYPES, primaryType: 'Order', message: orderMessage(order) });
}

/** The EIP-712 hash, which the CLOB uses as the order id. */
export function orderHash(spec: OrderSpec): Hex {
  return hashOrder(buildOrder(spec), spec.negRisk);
}

// ERC-7739 nested typed data: the session key signs the order *as seen by* the deposit wallet
// (its own EIP-712 domain inside), so a signature for one wallet cannot be replayed on another.
const TYPED_DATA_SIGN_TYPES = {
  TypedDataSign: [
    { name: 'contents', type: 'Order' },
    { name: 'name', type: 'string' },
    { name: 'version', type: 'string' },
    { name: 'chainId', type: 'uint256' },
    { name: 'verifyingContract', type: 'address' },
    { name: 'salt', type: 'bytes32' },
  ],
  Order: ORDER_FIELDS,
} as const;

function typedDataSign(order: UnsignedWireOrder, negRisk: boolean) {
  return {
    domain: exchangeDomain(negRisk),
    types: TYPED_DATA_SIGN_TYPES,
    primaryType: 'TypedDataSign',
    message: { contents: orderMessage(order), name: 'DepositWallet', version: '1', chainId: BigInt(POLYGON_CHAIN_ID), verifyingContract: order.signer, salt: zeroHash },
  } as const;
}

const contentsHash = (order: UnsignedWireOrder) => hashStruct({ data: orderMessage(order), primaryType: 'Order', types: ORDER_TYPES });
const CONTENTS_TYPE = stringToHex(ORDER_TYPE_STRING);
const DOMAIN_SEPARATORS = new Map([false, true].map((negRisk) => [domainSeparator({ domain: exchangeDomain(negRisk) }), negRisk]));

/**
 * Signs with `account`: the EOA / proxy or safe owner for types 0–2 (must be `spec.signer`), the
 * session key authorised on the deposit wallet for type 3.
 */
export async function signOrder(account: LocalAccount, spec: OrderSpec): Promise<WireOrder> {
  const order = buildOrder(spec);
  if (order.signatureType !== POLY_1271) {
    if (!isAddressEqual(account.address, order.signer)) throw new TypeError('The signing account is not the order signer');
    const signature = await account.signTypedData({ domain: exchangeDomain(spec.negRisk), types: ORDER_TYPES, primaryType: 'Order', message: orderMessage(order) });
    return { ...order, signature };
  }
  const inner = await account.signTypedData(typedDataSign(order, spec.negRisk));
  // The wallet's isValidSignature needs the app domain, the struct hash and its type string to rebuild
  // what the key signed; the trailing uint16 is the type string's length (ERC-7739 layout).
  const signature = concatHex([
    inner,
    domainSeparator({ domain: exchangeDomain(spec.negRisk) }),
    contentsHash(order),
    CONTENTS_TYPE,
    numberToHex(size(CONTENTS_TYPE), { size: 2 }),
  ]);
  return { ...order, signature };
}

interface Wrapper {
  inner: Hex;
  negRisk: boolean;
}

/** Takes a POLY_1271 signature apart and checks it is about this very order. */
function unwrap(order: WireOrder): Wrapper {
  const signature = String(order.signature).toLowerCase() as Hex;
  if (!isHex(signature, { strict: true })) throw new Error('Malformed POLY_1271 signature');
  const total = size(signature);
  const typeLength = total >= 131 ? hexToNumber(sliceHex(signature, total - 2)) : -1;
  if (typeLength < 0 || total !== 131 + typeLength) throw new Error('Malformed POLY_1271 signature');
  if (sliceHex(signature, 129, 129 + typeLength) !== CONTENTS_TYPE) throw new Error('POLY_1271 signature is not over an Order');
  const negRisk = DOMAIN_SEPARATORS.get(sliceHex(signature, 65, 97));
  if (negRisk === undefined) throw new Error('POLY_1271 signature is for another exchange');
  if (sliceHex(signature, 97, 129) !== contentsHash(order)) throw new Error('POLY_1271 signature does not match the order');
  return { inner: sliceHex(signature, 0, 65), negRisk };
}

/** The exchange a type-3 order names in its signature, else the caller must say (types 0–2 don't). */
function exchangeOf(order: WireOrder, negRisk: boolean | undefined): { negRisk: boolean; wrapper?: Wrapper } {
  if (order.signatureType === POLY_1271) {
    const wrapper = unwrap(order);
    if (negRisk !== undefined && negRisk !== wrapper.negRisk) throw new Error('Order signed for the other exchange');
    return { negRisk: wrapper.negRisk, wrapper };
  }
  if (negRisk === undefined) throw new TypeError(`negRisk is required for signature type ${order.signatureType}`);
  return { negRisk };
}

/** The order id of an order as received (test stand-in of the CLOB). */
export function wireOrderHash(order: WireOrder, negRisk?: boolean): Hex {
  return hashOrder(order, exchangeOf(order, negRisk).negRisk);
}

/**
 * The address whose key produced the signature (for type 3 the session key inside the wrapper); the
 * stand-in then checks it is the signer, or a key authorised on the wallet. Throws when the wrapper
 * does not belong to this order.
 */
export async function recoverOrderSigner(order: WireOrder, negRisk?: boolean): Promise<Address> {
  const exchange = exchangeOf(order, negRisk);
  if (exchange.wrapper) return recoverTypedDataAddress({ ...typedDataSign(order, exchange.negRisk), signature: exchange.wrapper.inner });
  return recoverTypedDataAddress({
    domain: exchangeDomain(exchange.negRisk),
    types: ORDER_TYPES,
    primaryType: 'Order',
    message: orderMessage(order),
    signature: order.signature,
  });
}

