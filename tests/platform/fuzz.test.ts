/**
 * Fuzzing every route from /openapi.json: requests built from each operation's documented
 * parameters and body, then bent — boundary and random values, wrong types, huge and odd unicode
 * strings, missing, unknown and duplicated parameters and headers, malformed bodies. Whatever comes
 * in, the answer is never a 5xx and every error is exactly our error shape.
 *
 * A second generator sends hostile STRUCTURES to every route on both transports (/api and /trpc):
 * deeply nested JSON, repeated and too many query parameters, tRPC batches larger than allowed,
 * out-of-range and impossible dates, and bodies over MAX_BODY_BYTES with and without Content-Length.
 * Each must be refused with a 4xx in our shape (the limits are in server/lib/input-limits.ts).
 *
 * Bounded in `npm test` (FUZZ_RUNS per route, default 12); `npm run fuzz` runs the long version.
 * Deterministic under FUZZ_SEED (printed with any failure); FUZZ_VERBOSE=1 prints statuses per route.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createTestApp, DASHBOARD_KEY, type TestApp } from '../harness/app.ts';
import { signIn } from '../harness/sign-in.ts';
import { dashboardHeaders, fundedAccount, newUserId } from '../harness/factories.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 12);
const BASE_URL = 'http://localhost';
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);

/** mulberry32: small, seedable. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

type Schema = Record<string, any>;
interface Operation {
  method: string;
  path: string;
  parameters: { in: string; name: string; required?: boolean; schema?: Schema }[];
  body?: Schema;
}

const HOSTILE_STRINGS = [
  '',
  ' ',
  'x'.repeat(100_000),
  '🚀🔥💸'.repeat(50),
  '\u202E\u200B\uFEFF',
  '\uD800',
  '../../etc/passwd',
  "' OR 1=1 --",
  '%00',
  '{"$ne":null}',
  '0x10',
  '1e308',
  '-0',
  'NaN',
  'null',
  '2026-02-30',
  '9999-99-99T99:99:99Z',
  'a\u0000b',
];
const HOSTILE_NUMBERS = [0, -1, 1, 0.5, -0.000001, 1e-7, 2 ** 31, 2 ** 53 + 2, 1e308, -1e308, Number.MAX_SAFE_INTEGER];

class Fuzzer {
  /** Ids the service handed out (positions, orders), reused as inputs to reach deeper paths. */
  readonly seen: string[] = [];
  constructor(
    readonly random: () => number,
    private components: Record<string, Schema>,
  ) {}

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  chance(p: number) {
    return this.random() < p;
  }

  resolve(schema: Schema | undefined): Schema {
    if (!schema) return {};
    if (schema.$ref) return this.resolve(this.components[String(schema.$ref).split('/').pop()!]);
    return schema;
  }

  /** A value for a schema: usually plausible, sometimes hostile, sometimes of the wrong type. */
  value(raw: Schema | undefined, depth = 0, valid = false): unknown {
    const schema = this.resolve(raw);
    if (!valid && this.chance(0.15)) return this.hostile(depth);
    const options = schema.anyOf ?? schema.oneOf;
    if (options) return this.value(this.pick(options), depth, valid);
    if (schema.enum) return valid || this.chance(0.85) ? this.pick(schema.enum) : `${this.pick(schema.enum)}x`;
    switch (schema.type) {
      case 'integer':
      case 'number': {
        if (valid) {
          const low = schema.minimum ?? 1;
          const high = Math.min(schema.maximum ?? 250, 250);
          return Math.max(low, Math.min(high, this.pick([low, 25, 60, 60, 100, 100, high])));
        }
        const bounds = [schema.minimum, schema.maximum, schema.exclusiveMinimum, schema.exclusiveMaximum].filter((v) => typeof v === 'number');
        if (bounds.length && this.chance(0.5)) return this.pick(bounds) + this.pick([-1, 0, 1, 0.5]);
        return this.pick(HOSTILE_NUMBERS.concat([1, 10, 50, 60, 100, 250]));
      }
      case 'boolean':
        return this.chance(0.8) ? this.chance(0.5) : 'true';
      case 'array':
        return Array.from({ length: Math.floor(this.random() * 4) }, () => this.value(schema.items, depth + 1, valid));
      case 'object':
        return this.object(schema, depth + 1, valid);
      case 'string':
      default:
        if (schema.format === 'date-time' || /date/i.test(schema.description ?? '')) return this.pick(['2026-11-22', '2026-11-22T06:00:00Z', '2026-13-01', 'yesterday']);
        if (valid) return this.pick(['openai-ipo', 'kraken-ipo', 'ledger-ipo', ...this.seen, ...this.seen]);
        return this.chance(0.6) ? this.pick(['openai-ipo', 'kraken-ipo', 'stripe-ipo', 'pos_missing', 'ord_missing', 'fintech', 'US', 'a', '0x52908400098527886E0F7030069857D2E4169EE7', ...this.seen]) : this.pick(HOSTILE_STRINGS);
    }
  }

  hostile(depth: number): unknown {
    return this.pick<unknown>([null, true, [], {}, this.pick(HOSTILE_STRINGS), this.pick(HOSTILE_NUMBERS), depth < 3 ? { nested: { deeper: [1, 'x', null] } } : 0]);
  }

  /** Realistic values for fields whose meaning the name tells. */
  named(name: string): unknown {
    const of = (prefix: string) => this.seen.filter((id) => id.startsWith(prefix));
    if (name === 'eventId') return this.pick(['openai-ipo', 'kraken-ipo', 'ledger-ipo', 'consensys-ipo', 'stripe-ipo']);
    if (name === 'positionId' && of('pos_').length) return this.pick(of('pos_'));
    if (name === 'amount') return this.pick([40, 60, 100]);
    if (name === 'percentage') return this.pick([10, 50, 100]);
    return undefined;
  }

  /** An object for a schema; `valid` keeps to the documented shape (to reach the deeper paths). */
  object(schema: Schema, depth: number, valid = false): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, inner] of Object.entries<Schema>(schema.properties ?? {})) {
      const required = (schema.required ?? []).includes(name);
      if (required ? valid || this.chance(0.9) : this.chance(valid ? 0.3 : 0.6)) out[name] = (valid && this.named(name)) || this.value(inner, depth, valid);
    }
    if (!valid && this.chance(0.1)) out[this.pick(['unknownField', '__proto__', 'constructor', ''])] = 1;
    return out;
  }
}

/** Percent-encodes any string, lone surrogates included (as U+FFFD, like a browser would). */
const percent = (text: string) => Array.from(new TextEncoder().encode(text), (b) => `%${b.toString(16).padStart(2, '0')}`).join('');

let t: TestApp;
let operations: Operation[];
let userKey: string;
/** A trading user with stored (paper) credentials, so buy/sell/sync get past the credential check. */
let traderId: string;

beforeAll(async () => {
  t = await createTestApp();
  const account = await fundedAccount(t, { usd: 100_000 });
  // Dashboard routes manage this account (only creating a key creates one; other routes answer 404).
  await fundedAccount(t, { accountId: 'fuzz-dashboard-account', usd: 0 });
  userKey = account.apiKey;
  traderId = newUserId();
  const stored = await t.request('/api/trading/credentials', {
    method: 'POST',
    headers: { 'x-api-key': userKey, 'x-user-id': traderId, 'content-type': 'application/json' },
    body: JSON.stringify({ apiKey: 'fuzz-venue', secret: 's', passphrase: 'p' }),
  });
  expect(stored.status).toBe(200);
  const doc = await (await t.request('/openapi.json')).json();
  operations = [];
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      operations.push({ method: method.toUpperCase(), path, parameters: op.parameters ?? [], body: op.requestBody?.content?.['application/json']?.schema });
    }
  }
  (globalThis as any).__fuzzComponents = doc.components?.schemas ?? {};
});
afterAll(() => t.close());

function expectOurShape(status: number, body: any, context: string) {
  if (status >= 500) throw new Error(`${context} → ${status} ${JSON.stringify(body).slice(0, 300)}`);
  if (status >= 400) {
    expect(Object.keys(body).sort(), context).toEqual(['code', 'message', 'requestId', 'status']);
    expect(body.status, context).toBe(status);
    expect(typeof body.message === 'string' && body.message.length > 0, context).toBe(true);
  }
}

describe(`fuzzing every route from /openapi.json (seed ${SEED}, ${RUNS} runs per route)`, () => {
  test('no 5xx, and every error is {code, message, status, requestId}', async () => {
    const fuzz = new Fuzzer(prng(SEED), (globalThis as any).__fuzzComponents);
    let requests = 0;
    const tally = new Map<string, number>();
    const storeCredentials = () =>
      t.request('/api/trading/credentials', {
        method: 'POST',
        headers: { 'x-api-key': userKey, 'x-user-id': traderId, 'content-type': 'application/json' },
        body: JSON.stringify({ apiKey: 'fuzz-venue', secret: 's', passphrase: 'p' }),
      });
    // Routes interleaved at random (so a DELETE of the credentials does not starve the trades after it).
    for (let run = 0; run < RUNS; run++) {
      for (const op of [...operations].sort(() => fuzz.random() - 0.5)) {
        if (requests % 25 === 0) await storeCredentials();
        const url = new URL(`http://localhost/api${op.path}`);
        const headers = new Headers();
        // Credentials: mostly right for the route, sometimes missing, wrong, or duplicated.
        const credentials = fuzz.pick(['right', 'right', 'right', 'right', 'right', 'right', 'right', 'missing', 'wrong', 'duplicated'] as const);
        const dashboard = op.parameters.some((p) => p.name === 'x-account-id');
        const key = dashboard ? DASHBOARD_KEY : userKey;
        if (credentials === 'right' || credentials === 'duplicated') headers.set('x-api-key', key);
        if (credentials === 'duplicated') headers.append('x-api-key', key);
        if (credentials === 'wrong') headers.set('x-api-key', fuzz.pick(HOSTILE_STRINGS.filter((s) => !s.includes('\u0000') && !/[^\x20-\x7e]/.test(s))));
        let path = op.path;
        for (const p of op.parameters) {
          const present = p.required ? fuzz.chance(0.92) : fuzz.chance(0.5);
          const value = fuzz.value(p.schema);
          const text = typeof value === 'string' ? value : JSON.stringify(value) ?? '';
          if (p.in === 'path') path = path.replace(`{${p.name}}`, percent(present ? text || 'x' : 'x'));
          else if (p.in === 'query' && present) {
            url.searchParams.append(p.name, text);
            if (fuzz.chance(0.1)) url.searchParams.append(p.name, text);
          } else if (p.in === 'header' && present) {
            const plausible: Record<string, () => string> = {
              // Dashboard routes manage another account (they may change its rate or balance).
              'x-account-id': () => 'fuzz-dashboard-account',
              'x-user-id': () => (fuzz.chance(0.8) ? traderId : newUserId()),
              'Idempotency-Key': () => `key-${Math.floor(fuzz.random() * 50)}`,
              'x-request-id': () => `req-${run}`,
            };
            const headerValue = plausible[p.name] && fuzz.chance(0.8) ? plausible[p.name]!() : text;
            // Header values must be ByteStrings; odd unicode is sent percent-encoded.
            headers.set(p.name, /^[\x20-\x7e]*$/.test(headerValue) ? headerValue.slice(0, 4000) : percent(headerValue).slice(0, 4000));
          }
        }
        if (fuzz.chance(0.05)) url.searchParams.append('unexpected', 'yes');
        url.pathname = `/api${path}`;
        const init: RequestInit = { method: op.method, headers };
        if (op.method !== 'GET' && op.method !== 'DELETE') {
          const shape = fuzz.pick(['json', 'json', 'json', 'json', 'json', 'json', 'malformed', 'wrong-type', 'empty'] as const);
          if (shape !== 'wrong-type') headers.set('content-type', 'application/json');
          const document = fuzz.chance(0.6) ? fuzz.object(fuzz.resolve(op.body), 0, true) : fuzz.chance(0.9) ? fuzz.object(fuzz.resolve(op.body), 0) : fuzz.hostile(0);
          init.body = shape === 'malformed' ? '{"a":' : shape === 'empty' ? '' : JSON.stringify(document);
          if (shape === 'wrong-type') headers.set('content-type', 'text/plain');
        }
        const response = await t.app.handle(new Request(url, init));
        const text = await response.text();
        // A file (the bulk export) is checked against the document by the response validator, not here.
        if (response.ok && !(response.headers.get('content-type') ?? '').startsWith('application/json')) { // NDJSON is not one JSON text
          requests++;
          continue;
        }
        let body: any;
        try {
          body = JSON.parse(text);
        } catch {
          throw new Error(`${op.method} ${url.pathname}${url.search} → ${response.status}: not JSON: ${text.slice(0, 200)} (seed ${SEED})`);
        }
        expectOurShape(response.status, body, `${op.method} ${url.pathname}${url.search.slice(0, 200)} (seed ${SEED})`);
        for (const id of text.match(/\b(pos|ord)_[1-9A-HJ-NP-Za-km-z]{10,}/g) ?? []) if (fuzz.seen.length < 200) fuzz.seen.push(id);
        requests++;
        const bucket = `${op.method} ${op.path} ${response.status}`;
        tally.set(bucket, (tally.get(bucket) ?? 0) + 1);
      }
    }
    if (process.env.FUZZ_VERBOSE) console.log([...tally].sort().map(([k, n]) => `${k}: ${n}`).join('\n'));
    expect(requests).toBe(operations.length * RUNS);
  }, 600_000);
});

/** Every public error in an answer: a REST body, a tRPC error envelope, or each element of a tRPC batch. */
function publicErrorsOf(body: any): any[] {
  const items = Array.isArray(body) ? body : [body];
  return items.flatMap((item) => (item?.error ? [item.error.data?.api ?? item.error] : item && 'code' in item && 'requestId' in item ? [item] : []));
}

/** A JSON text nested exactly `depth` levels deep (the object is one), built without recursion: {"a":[[…]]}. */
const deepJson = (depth: number) => `{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;

const HOSTILE_DATES = ['0000-01-01', '9999-12-31T23:59-23:59', '2026-02-31', '2026-11-22T24:00:00Z', '-271821-04-20', '+275760-09-13T00:00:00Z', '10000-01-01', '1900-01-01', '2026-11-22T06:00:00+99:00'];

type Structure = 'deep-body' | 'deep-trpc-input' | 'repeated-params' | 'many-params' | 'huge-batch' | 'dates' | 'oversized' | 'oversized-chunked';

describe(`hostile structures on every route, both transports (seed ${SEED})`, () => {
  test('each is refused with a 4xx in our shape, never a 5xx', async () => {
    const fuzz = new Fuzzer(prng(SEED + 1), (globalThis as any).__fuzzComponents);
    const { INPUT_LIMITS } = await import('../../server/lib/input-limits.ts');
    const runs = Math.max(1, Math.ceil(RUNS / 4));
    const tally = new Map<string, number>();
    let requests = 0;
    for (let run = 0; run < runs; run++) {
      for (const route of t.app.routes) {
        const op = operations.find((o) => o.method === route.method && o.path === route.template)!;
        const dashboard = route.meta.access === 'dashboard';
        // Session routes take a signed-in customer's cookie (a fresh one: one of them is logout).
        const headers: Record<string, string> =
          route.meta.access === 'session' ? (await signIn(t)).headers : { 'x-api-key': dashboard ? DASHBOARD_KEY : userKey, 'x-user-id': traderId };
        if (dashboard) headers['x-account-id'] = 'fuzz-dashboard-account';
        const hasBody = route.method !== 'GET' && route.method !== 'DELETE';
        const restPath = '/api' + route.template.replace(/\{[^}]+\}/g, 'x');
        const trpcPath = `/trpc/${route.procedurePath}`;
        const dateParams = op.parameters.filter((p) => p.in === 'query' && (p.schema?.format === 'date-time' || /date|since|from|to$/i.test(p.name)));
        const structures: Structure[] = ['deep-trpc-input', 'repeated-params', 'many-params', 'huge-batch', 'oversized', 'oversized-chunked'];
        if (hasBody) structures.push('deep-body');
        if (dateParams.length) structures.push('dates', 'dates');
        const structure = fuzz.pick(structures);
        const depth = fuzz.pick([INPUT_LIMITS.maxJsonDepth + 1, 1_000, 20_000]);
        let request: Request;
        let expected: number[]; // acceptable statuses
        switch (structure) {
          case 'deep-body':
            request = new Request(BASE_URL + restPath, { method: route.method, headers: { ...headers, 'content-type': 'application/json' }, body: deepJson(depth) });
            expected = [400];
            break;
          case 'deep-trpc-input': {
            const input = deepJson(depth);
            request =
              route.type === 'query'
                ? new Request(`${BASE_URL}${trpcPath}?input=${encodeURIComponent(input)}`, { headers })
                : new Request(BASE_URL + trpcPath, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: input });
            expected = [400, 414];
            break;
          }
          case 'repeated-params': {
            const name = fuzz.pick([...op.parameters.filter((p) => p.in === 'query').map((p) => p.name), 'a', 'limit']);
            const count = fuzz.pick([INPUT_LIMITS.maxQueryParameters + 1, 5_200]);
            request = new Request(`${BASE_URL}${fuzz.chance(0.5) ? restPath : trpcPath}?${`${name}=&`.repeat(count)}`, { method: route.type === 'query' ? 'GET' : route.method, headers });
            expected = [400, 405, 414];
            break;
          }
          case 'many-params': {
            const count = fuzz.pick([INPUT_LIMITS.maxQueryParameters + 1, 3_300]);
            const query = Array.from({ length: count }, (_, i) => `p${i}=1`).join('&');
            request = new Request(`${BASE_URL}${fuzz.chance(0.5) ? restPath : trpcPath}?${query}`, { method: route.type === 'query' ? 'GET' : route.method, headers });
            expected = [400, 405, 414];
            break;
          }
          case 'huge-batch': {
            const calls = fuzz.pick([INPUT_LIMITS.maxBatchCalls + 1, 1_000]);
            const paths = Array.from({ length: calls }, () => route.procedurePath).join(',');
            const inputs = JSON.stringify(Object.fromEntries(Array.from({ length: calls }, (_, i) => [i, {}])));
            request =
              route.type === 'query'
                ? new Request(`${BASE_URL}/trpc/${paths}?batch=1&input=${encodeURIComponent(inputs)}`, { headers })
                : new Request(`${BASE_URL}/trpc/${paths}?batch=1`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: inputs });
            expected = [400, 414];
            break;
          }
          case 'dates': {
            const param = fuzz.pick(dateParams);
            const url = new URL(BASE_URL + restPath);
            url.searchParams.set(param.name, fuzz.pick(HOSTILE_DATES));
            request = new Request(url, { headers });
            expected = [400];
            break;
          }
          case 'oversized':
          case 'oversized-chunked': {
            const bytes = new Uint8Array(t.config.maxBodyBytes + 1 + Math.floor(fuzz.random() * 1000)).fill(0x20);
            const body = structure === 'oversized' ? bytes : new ReadableStream({ start: (c) => (c.enqueue(bytes), c.close()) });
            const target = hasBody ? restPath : trpcPath;
            request = new Request(BASE_URL + target, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body, duplex: 'half' } as RequestInit);
            expected = [413, 405];
            break;
          }
        }
        const response = await t.app.handle(request!);
        const text = await response.text();
        const context = `${structure} ${request!.method} ${route.procedurePath} (seed ${SEED})`;
        let body: any;
        try {
          body = JSON.parse(text);
        } catch {
          throw new Error(`${context} → ${response.status}: not JSON: ${text.slice(0, 200)}`);
        }
        expect(`${context} → ${response.status}`).toBe(`${context} → ${expected!.includes(response.status) ? response.status : `one of ${expected!}`}`);
        const errors = publicErrorsOf(body);
        expect(errors.length, context).toBeGreaterThan(0);
        for (const error of errors) expectOurShape(error.status, error, context);
        requests++;
        tally.set(`${structure} ${response.status}`, (tally.get(`${structure} ${response.status}`) ?? 0) + 1);
      }
    }
    if (process.env.FUZZ_VERBOSE) console.log([...tally].sort().map(([k, n]) => `${k}: ${n}`).join('\n'));
    expect(requests).toBe(t.app.routes.length * runs);
  }, 600_000);
});
