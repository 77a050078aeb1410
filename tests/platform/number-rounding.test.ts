/**
 * The API's numbers follow one rule (docs/api.md, "Numbers"): no number in an answer has more than 6
 * decimal places — no float noise such as 927.7777777777777 or 0.3251333333333334.
 *
 * A real app with drifting paper books (PAPER_DRIFT) and a paper trade behind it, a few recorded
 * market snapshots (so the valuation history has candles): every GET route is asked over /api and
 * /trpc (the table comes from the router, so a new route is covered without touching this file), as
 * are the trade answers (quote, buy, sell quote, sell), the batched and tRPC adapter answers, the live
 * streams (server-sent events and the tRPC subscription's first message) and the webhook payloads;
 * every number in every answer is checked.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { companies } from '../../db/schema.ts';
import { resultRows } from '../../db/prepared.ts';
import type { Route } from '../../server/platform/http/route-table.ts';
import { startCandleRecording, type CandleRecording } from '../../server/history/recording.ts';
import { createWebhook } from '../../server/webhooks/service.ts';
import { BASE, DASHBOARD_KEY, type TestApp } from '../harness/app.ts';
import { concretePath } from '../harness/routes.ts';
import { signIn } from '../harness/sign-in.ts';
import { api, buy, sell, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp } from '../harness/trading-venue.ts';
import { MAX_ANSWER_DECIMALS, roundAnswerNumber, roundAnswerNumbers } from '../../server/lib/answer-numbers.ts';
import { deepFreeze } from '../../server/lib/reusable-json.ts';

const EVENT = 'openai-ipo';

/** Decimal places of a number as JSON writes it (`1.5e-7` has 8). */
function decimalsOf(x: number): number {
  const text = String(x);
  const [mantissa, exponent] = text.split('e');
  const fraction = mantissa!.split('.')[1]?.length ?? 0;
  return Math.max(0, fraction - Number(exponent ?? 0));
}

/** The rule written again on decimal text: JSON's digits for x, rounded half away from zero to 6 decimals. */
function decimalRounding(x: number): number {
  const [mantissa, exponent] = String(Math.abs(x)).split('e');
  const [whole, fraction = ''] = mantissa!.split('.');
  let digits = whole! + fraction;
  let point = whole!.length + Number(exponent ?? 0);
  if (point <= 0) {
    digits = '0'.repeat(1 - point) + digits;
    point = 1;
  }
  digits = digits.padEnd(point, '0');
  const decimals = digits.slice(point);
  if (decimals.length <= MAX_ANSWER_DECIMALS) return x;
  const units = (BigInt(digits.slice(0, point) + decimals.slice(0, MAX_ANSWER_DECIMALS)) + (decimals[MAX_ANSWER_DECIMALS]! >= '5' ? 1n : 0n)).toString().padStart(MAX_ANSWER_DECIMALS + 1, '0');
  const rounded = Number(`${units.slice(0, -MAX_ANSWER_DECIMALS)}.${units.slice(-MAX_ANSWER_DECIMALS)}`);
  return rounded === 0 ? 0 : x < 0 ? -rounded : rounded;
}

/** Every number of a JSON answer with more than MAX_ANSWER_DECIMALS decimals, as `path=value`. */
function noisyNumbers(value: unknown, at = '$', found: string[] = []): string[] {
  if (typeof value === 'number') {
    if (decimalsOf(value) > MAX_ANSWER_DECIMALS) found.push(`${at}=${value}`);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => noisyNumbers(item, `${at}[${i}]`, found));
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, inner] of Object.entries(value)) noisyNumbers(inner, `${at}.${key}`, found);
  }
  return found;
}

let t: TestApp;
let who: Trader;
let recording: CandleRecording;
let positionId: string;
let webhookId: string;
/** Answers with float noise, by route and transport: the one list every test adds to. */
const noisy = new Map<string, string[]>();
const scanned = new Set<string>();

function scan(label: string, body: unknown) {
  scanned.add(label);
  const found = noisyNumbers(body);
  if (found.length) noisy.set(label, found.slice(0, 5));
}

beforeAll(async () => {
  // Drifting books: prices move between snapshots, as they do in production (tests default to 0).
  t = await createTradingApp({ PAPER_DRIFT: '0.05' });
  recording = startCandleRecording(t.services);
  for (let i = 0; i < 3; i++) {
    await Bun.sleep(5);
    await t.services.recorder.record();
  }
  who = await trader(t);
  webhookId = (await createWebhook(t.services, who.account.accountId, { url: 'https://hooks.example.com/pre-ipo', events: ['order.filled', 'position.opened', 'position.closed'] }, { lookup: async () => ['93.184.216.34'] })).id;
  const quote = await api(t, who, 'POST', '/api/trading/quote', { eventId: EVENT, side: 'LONG', amount: 137.13 });
  expect(quote.res.status).toBe(200);
  scan('POST /api/trading/quote', quote.body);
  const bought = await buy(t, who, { eventId: EVENT, side: 'LONG', amount: 137.13 });
  expect(bought.res.status).toBe(200);
  scan('POST /api/trading/buy', bought.body);
  positionId = bought.body.positionId;
  await Bun.sleep(5);
  await t.services.recorder.record();
  const sellQuote = await api(t, who, 'POST', '/api/trading/sell/quote', { positionId, percentage: 33 });
  expect(sellQuote.res.status).toBe(200);
  scan('POST /api/trading/sell/quote', sellQuote.body);
  const sold = await sell(t, who, { positionId, percentage: 33 });
  expect(sold.res.status).toBe(200);
  scan('POST /api/trading/sell', sold.body);
  // A second position, left open (its P&L moves with the books).
  const second = await buy(t, who, { eventId: 'anthropic-ipo', side: 'SHORT', amount: 77.77 });
  expect(second.res.status).toBe(200);
  for (let i = 0; i < 2; i++) {
    await Bun.sleep(5);
    await t.services.recorder.record();
  }
});
afterAll(async () => {
  await recording?.stop();
  await t?.close();
});

/** The first item of a list answer (ids for the routes that take one). */
async function firstOf(path: string, headers: Record<string, string>, list: string) {
  const { body } = await api(t, { headers }, 'GET', path);
  return body[list][0];
}

/** Inputs for the routes that take required ones (or whose interesting answer needs them). */
async function inputsFor(): Promise<Record<string, Record<string, string>>> {
  const key = who.account.headers;
  const company = await firstOf('/api/private-companies?limit=5&sort=-valuationUsd', key, 'companies');
  const investor = await firstOf('/api/investors?limit=5', key, 'investors');
  const order = await firstOf('/api/trading/orders', who.headers, 'orders');
  return {
    'tradingMarket.valuation': { eventSlug: EVENT },
    'marketHistory.valuationHistory': { eventSlug: EVENT, interval: '1m' },
    'streams.valuationCatchUp': { eventSlug: EVENT },
    'privateCompanies.list': { limit: '20', sort: '-valuationUsd' },
    'privateCompanies.search': { q: 'an', limit: '20' },
    'privateCompanies.byId': { id: String(company.id) },
    'privateCompanies.rounds': { id: String(company.id) },
    'privateCompanies.valuations': { id: String(company.id) },
    'privateCompanies.bySourceId': { sourceId: (await t.database.db.select({ sourceId: companies.sourceId }).from(companies).where(eq(companies.id, company.id)))[0]!.sourceId },
    'investors.byId': { id: String(investor.id) },
    'investors.portfolio': { id: String(investor.id) },
    'orders.get': { orderId: order.orderId ?? order.id },
    'positions.get': { id: positionId },
    'positions.value': { id: positionId },
    'webhooks.deliveries': { id: webhookId },
  };
}

async function headersFor(route: Route): Promise<Record<string, string>> {
  switch (route.meta.access) {
    case 'public':
      return {};
    case 'key':
      return who.account.headers;
    case 'user':
      return who.headers;
    case 'dashboard':
      return { 'x-api-key': DASHBOARD_KEY, 'x-account-id': who.account.accountId };
    default:
      return (await signIn(t)).headers;
  }
}

/** The REST request and the tRPC input of a route with these (text) inputs. */
function requestsOf(route: Route, text: Record<string, string>, headers: Record<string, string>) {
  let path = '/api' + route.template;
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(text)) {
    if (route.template.includes(`{${name}}`)) path = path.replace(`{${name}}`, encodeURIComponent(value));
    else query.set(name, value);
  }
  if (path.includes('{')) path = concretePath(route);
  const rest = new Request(`${BASE}${path}${query.size ? `?${query}` : ''}`, { headers });
  const typed = route.convert({ ...text });
  const trpc = new Request(`${BASE}/trpc/${route.procedurePath}?input=${encodeURIComponent(JSON.stringify(typed))}`, { headers });
  return { rest, trpc, typed };
}

describe('no number in an answer has more than 6 decimals', () => {
  test('the rule itself: 6 decimals, half away from zero, on the number as JSON writes it', () => {
    expect(roundAnswerNumber(927.7777777777777)).toBe(927.777778);
    expect(roundAnswerNumber(0.3251333333333334)).toBe(0.325133);
    expect(roundAnswerNumber(-0.3251333333333334)).toBe(-0.325133);
    expect(roundAnswerNumber(0.1 + 0.2)).toBe(0.3);
    expect(roundAnswerNumber(0.060000000000000005)).toBe(0.06);
    // Ties (in the decimal JSON shows) go away from zero, whatever the binary value underneath.
    expect(roundAnswerNumber(1.0000005)).toBe(1.000001);
    expect(roundAnswerNumber(-1.0000005)).toBe(-1.000001);
    expect(roundAnswerNumber(2.6750005)).toBe(2.675001);
    expect(roundAnswerNumber(5e-7)).toBe(0.000001);
    expect(roundAnswerNumber(4.9e-7)).toBe(0);
    expect(Object.is(roundAnswerNumber(-4.9e-7), 0)).toBe(true);
    // What already fits, integers and huge numbers are untouched (money in micro-units / 10^6 always fits).
    for (const x of [0, 1, -1, 0.5, 12.345678, -0.000001, 0.000123, 1e21, 123456789012.25, 2 ** 53, 4294967296.123457, 3_000_000_000.000001, 9_007_199_254.740991]) {
      expect(roundAnswerNumber(x)).toBe(x);
    }
    let seed = 7;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    for (let i = 0; i < 20_000; i++) {
      // Any magnitude from 10^-12 to 10^12, and exact ties at the 7th decimal.
      const x = (random() - 0.5) * 10 ** Math.floor(random() * 24 - 12);
      const tie = Number(`${random() < 0.5 ? '-' : ''}${Math.floor(random() * 10 ** Math.floor(random() * 9))}.${String(Math.floor(random() * 1e6)).padStart(6, '0')}5`);
      const micros = Math.round((random() - 0.5) * 2 * 10 ** Math.floor(random() * 16)) / 1e6;
      for (const value of [x, tie, micros]) expect(`${value} → ${roundAnswerNumber(value)}`).toBe(`${value} → ${decimalRounding(value)}`);
      expect(roundAnswerNumber(micros)).toBe(micros);
    }
  });

  test('answers: every number rounded, nothing else touched; no copy when nothing changes, never a change in place', () => {
    const clean = deepFreeze({ a: 1, b: [0.5, 'x', null, { c: 2.25 }], d: 'text', e: true, f: null });
    expect(roundAnswerNumbers(clean)).toBe(clean);
    const when = new Date(0);
    const noisy = deepFreeze({ kept: { n: 1 }, v: [1, 0.1 + 0.2, [2 / 3]], o: { x: -927.7777777777777, s: 's' }, when });
    const rounded = roundAnswerNumbers(noisy);
    expect(rounded).toEqual({ kept: { n: 1 }, v: [1, 0.3, [0.666667]], o: { x: -927.777778, s: 's' }, when });
    expect(rounded.kept).toBe(noisy.kept);
    expect(rounded.when).toBe(when);
    expect(noisy.v[1]).toBe(0.1 + 0.2);
    expect(roundAnswerNumbers(1 / 3)).toBe(0.333333);
    expect(roundAnswerNumbers('1.23456789')).toBe('1.23456789');
  });

  test('every GET route, over /api and /trpc', async () => {
    const inputs = await inputsFor();
    for (const route of t.app.routes) {
      if (route.method !== 'GET' || route.meta.files) continue;
      const text = inputs[route.procedurePath] ?? {};
      const { rest, trpc } = requestsOf(route, text, await headersFor(route));
      const restAnswer = await t.app.handle(rest);
      expect(`${route.label} ${restAnswer.status}`).toBe(`${route.label} 200`);
      scan(`REST ${route.label}`, await restAnswer.json());
      const trpcAnswer = await t.app.handle(new Request(trpc, { headers: await headersFor(route) }));
      expect(`trpc ${route.procedurePath} ${trpcAnswer.status}`).toBe(`trpc ${route.procedurePath} 200`);
      scan(`tRPC ${route.procedurePath}`, ((await trpcAnswer.json()) as any).result.data);
    }
    expect(scanned.size).toBeGreaterThan(60);
  });

  test('tRPC mutations, a batch, and tRPC\'s own adapter (a streamed batch)', async () => {
    const quote = await t.app.handle(
      new Request(`${BASE}/trpc/trading.quote`, { method: 'POST', headers: { ...who.headers, 'content-type': 'application/json' }, body: JSON.stringify({ eventId: EVENT, side: 'SHORT', amount: 99.99 }) }),
    );
    expect(quote.status).toBe(200);
    scan('tRPC trading.quote', ((await quote.json()) as any).result.data);
    const input = encodeURIComponent(JSON.stringify({ 0: { eventSlug: EVENT }, 1: {}, 2: { eventSlug: EVENT, interval: '1m' } }));
    const paths = 'tradingMarket.valuation,tradingMarket.valuationAll,marketHistory.valuationHistory';
    const batch = await t.app.handle(new Request(`${BASE}/trpc/${paths}?batch=1&input=${input}`));
    expect(batch.status).toBe(200);
    for (const [i, item] of ((await batch.json()) as any[]).entries()) scan(`tRPC batch ${i}`, item.result.data);
    const streamed = await t.app.handle(new Request(`${BASE}/trpc/${paths}?batch=1&input=${input}`, { headers: { 'trpc-accept': 'application/jsonl' } }));
    expect(streamed.status).toBe(200);
    const lines = (await streamed.text()).trim().split('\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const [i, line] of lines.entries()) scan(`tRPC jsonl line ${i}`, JSON.parse(line));
  });

  test('live streams: server-sent events and the tRPC subscription', async () => {
    /** The data of the frames a stream sends, until `enough` says so (or 10 s pass). */
    const frames = async (response: Response, enough: (data: unknown[]) => boolean) => {
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      const timer = setTimeout(() => reader.cancel().catch(() => undefined), 10_000);
      const decoder = new TextDecoder();
      let text = '';
      const data: unknown[] = [];
      while (!enough(data)) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true as const }));
        if (done) break;
        text += decoder.decode(value, { stream: true });
        const parts = text.split('\n\n');
        text = parts.pop()!;
        for (const part of parts) {
          const line = part.split('\n').find((l) => l.startsWith('data: '));
          if (line) data.push(JSON.parse(line.slice(6)));
        }
      }
      clearTimeout(timer);
      await reader.cancel().catch(() => undefined);
      return data;
    };
    const sse = await frames(await t.app.handle(new Request(`${BASE}/api/trading/stream?eventSlug=${EVENT}&eventSlug=anthropic-ipo`, { headers: { accept: 'text/event-stream' } })), (d) => d.length >= 2);
    expect(sse.length).toBe(2);
    sse.forEach((data, i) => scan(`SSE /api/trading/stream ${i}`, data));
    // From the start of the outbox: the trades' order, position and balance events, then `ready`.
    const account = await frames(
      await t.app.handle(new Request(`${BASE}/api/trading/stream/account`, { headers: { ...who.headers, accept: 'text/event-stream', 'last-event-id': '0' } })),
      (d) => d.some((x: any) => x?.type === 'ready'),
    );
    expect(account.length).toBeGreaterThan(3);
    account.forEach((data, i) => scan(`SSE /api/trading/stream/account ${i}`, data));
    const input = encodeURIComponent(JSON.stringify({ eventSlugs: [EVENT, 'anthropic-ipo'] }));
    // tRPC's `connected` frame, then the two events' valuations.
    const subscription = await frames(await t.app.handle(new Request(`${BASE}/trpc/streams.valuation?input=${input}`, { headers: { accept: 'text/event-stream' } })), (d) => d.length >= 3);
    expect(subscription.length).toBe(3);
    subscription.forEach((data, i) => scan(`tRPC subscription streams.valuation ${i}`, data));
  });

  test('webhook payloads', async () => {
    const rows = resultRows<{ type: string; payload: string }>(await t.database.db.execute(sql`select type, payload from webhook_deliveries where webhook_id = ${webhookId}`));
    expect(rows.length).toBeGreaterThan(2);
    for (const row of rows) scan(`webhook ${row.type}`, typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload);
  });

  test('none of them carried float noise', () => {
    expect(Object.fromEntries(noisy)).toEqual({});
  });
});
