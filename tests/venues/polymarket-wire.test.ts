/**
 * The Polymarket adapter's reading of CLOB wire formats and its HTTP discipline: exact decimals,
 * books re-sorted best first, every status vocabulary, refusal texts, L2 headers on the wire,
 * server time, and retries of 429 / 5xx / network failures inside one deadline.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { ApiError } from '../../server/errors.ts';
import { ClobError, ClobHttp } from '../../server/venues/polymarket/clob-http.ts';
import { verifyL2Signature } from '../../server/venues/polymarket/l2-auth.ts';
import { decimalToMicros, fixed6ToMicros, mapStatus, microsToDecimal, refusalReason, toOrderBook } from '../../server/venues/polymarket/wire.ts';

describe('wire formats', () => {
  test.each([
    ['0.45', 450_000],
    ['100.0000', 100_000_000],
    ['12.5', 12_500_000],
    [12.5, 12_500_000],
    ['0.0000019', 1],
    ['7', 7_000_000],
    ['', null],
    ['-1', null],
    ['1e3', null],
    [null, null],
  ])('decimalToMicros(%p) = %p', (input, expected) => expect(decimalToMicros(input)).toBe(expected));

  test('fixed-point balances and the way back', () => {
    expect(fixed6ToMicros('1000000')).toBe(1_000_000);
    expect(fixed6ToMicros('1.5')).toBeNull();
    expect(microsToDecimal(12_340_000)).toBe('12.34');
    expect(microsToDecimal(5_000_000)).toBe('5');
  });

  test('books arrive worst first (bids ascending, asks descending) and are re-sorted best first', () => {
    const book = toOrderBook('band-1', {
      asset_id: '123',
      bids: [
        { price: '0.40', size: '100' },
        { price: '0.44', size: '20' },
        { price: '0.42', size: '0' },
      ],
      asks: [
        { price: '0.50', size: '30' },
        { price: '0.46', size: '10' },
      ],
      tick_size: '0.01',
      last_trade_price: '0.45',
    });
    expect(book).toEqual({
      tokenId: 'band-1',
      bids: [
        { priceMicros: 440_000, sizeMicros: 20_000_000 },
        { priceMicros: 400_000, sizeMicros: 100_000_000 },
      ],
      asks: [
        { priceMicros: 460_000, sizeMicros: 10_000_000 },
        { priceMicros: 500_000, sizeMicros: 30_000_000 },
      ],
      lastTradeMicros: 450_000,
      tickMicros: 10_000,
    });
  });

  test.each([
    ['live', 0, 'PENDING'],
    ['delayed', 0, 'PENDING'],
    ['matched', 5, 'MATCHED'],
    ['ORDER_STATUS_MATCHED', 5, 'MATCHED'],
    ['ORDER_STATUS_LIVE', 0, 'PENDING'],
    ['ORDER_STATUS_CANCELED', 0, 'CANCELLED'],
    ['ORDER_STATUS_CANCELED', 3, 'MATCHED'],
    ['ORDER_STATUS_CANCELED_MARKET_RESOLVED', 0, 'CANCELLED'],
    ['ORDER_STATUS_INVALID', 0, 'REJECTED'],
    ['unmatched', 0, 'CANCELLED'],
    ['CANCELED', 0, 'CANCELLED'],
    ['something-new', 0, 'PENDING'],
  ])('status %s with %i filled → %s', (raw, filled, expected) => expect(mapStatus(raw, filled)).toBe(expected as never));

  test.each([
    ['not enough balance / allowance', 'insufficient-balance'],
    ["order couldn't be fully filled. FOK orders are fully filled or killed.", 'no-liquidity'],
    ['no orders found to match with FAK order. FAK orders are partially filled or killed if no match is found.', 'no-liquidity'],
    ['order 0x1 is invalid. Size (1.08) lower than the minimum: 5', 'below-minimum'],
    ['the market is not yet ready to process new orders', 'market-closed'],
    ['invalid signature', 'rejected'],
  ])('refusal %j → %s', (message, reason) => expect(refusalReason(message)).toBe(reason));
});

describe('HTTP to the CLOB', () => {
  const seen: Request[] = [];
  let script: (request: Request, n: number) => Response | Promise<Response> = () => Response.json({});
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (request) => {
      if (new URL(request.url).pathname === '/time') return Response.json(1_900_000_000);
      seen.push(request.clone());
      return script(request, seen.length);
    },
  });
  afterAll(() => server.stop(true));
  const credentials = { apiKey: 'key-1', secret: Buffer.from('s'.repeat(32)).toString('base64url'), passphrase: 'pp', address: '0x52908400098527886E0F7030069857D2E4169EE7' };
  const http = (timeoutMs = 2000) => new ClobHttp({ baseUrl: `http://127.0.0.1:${server.port}`, timeoutMs, backoffMs: () => 10 });

  test('authenticated calls carry L2 headers signed with the CLOB clock over path (no query) and body', async () => {
    seen.length = 0;
    script = () => Response.json({ ok: true });
    await http().call('POST', '/order', { body: { a: 1 }, query: { x: 'y' }, auth: credentials });
    const request = seen[0]!;
    expect(request.headers.get('POLY_TIMESTAMP')).toBe('1900000000');
    expect(request.headers.get('POLY_API_KEY')).toBe('key-1');
    expect(request.headers.get('POLY_PASSPHRASE')).toBe('pp');
    expect(request.headers.get('POLY_ADDRESS')).toBe(credentials.address);
    expect(new URL(request.url).search).toBe('?x=y');
    expect(verifyL2Signature(credentials.secret, 1_900_000_000, 'POST', '/order', '{"a":1}', request.headers.get('POLY_SIGNATURE')!)).toBe(true);
  });

  test('429 (honouring Retry-After) and 5xx are retried; a 4xx is not', async () => {
    seen.length = 0;
    script = (_, n) => (n === 1 ? new Response('slow down', { status: 429, headers: { 'retry-after': '0' } }) : n === 2 ? new Response('oops', { status: 502 }) : Response.json({ done: n }));
    expect(await http().call('GET', '/books', {})).toEqual({ done: 3 });
    seen.length = 0;
    script = () => Response.json({ error: 'bad' }, { status: 400 });
    const error: any = await http().call('GET', '/x', {}).catch((e) => e);
    expect(error).toBeInstanceOf(ClobError);
    expect(error.status).toBe(400);
    expect(seen).toHaveLength(1);
  });

  test('a venue that keeps failing, or hangs, ends as VENUE_UNAVAILABLE within the deadline', async () => {
    script = () => new Response('down', { status: 503 });
    const started = Date.now();
    const error: any = await http(300).call('GET', '/books', {}).catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.apiCode).toBe('VENUE_UNAVAILABLE');
    script = () => new Promise(() => {});
    const hung: any = await http(300).call('GET', '/books', {}).catch((e) => e);
    expect(hung.apiCode).toBe('VENUE_UNAVAILABLE');
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
