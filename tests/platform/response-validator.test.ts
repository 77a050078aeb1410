/**
 * The harness's response validator (tests/harness/response-validator.ts): it catches a status the
 * document does not list, a missing or malformed required header and a body that breaks its schema,
 * on synthetic responses against a small document, and passes the app's real answers against the
 * app's real /openapi.json.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync, rmSync } from 'node:fs';
import { createTestApp, json, type TestApp } from '../harness/app.ts';
import { ResponseMismatchError, ResponseValidator, checkResponse, validatorForDocument, type ResponseToCheck } from '../harness/response-validator.ts';

const apiError = { $ref: '#/components/schemas/ApiError' };
const DOC = {
  openapi: '3.1.0',
  info: { title: 'test', version: '1' },
  servers: [{ url: '/api' }],
  paths: {
    '/things/{id}': {
      get: {
        operationId: 'things-get',
        responses: {
          '200': {
            description: 'A thing',
            headers: {
              'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
              'RateLimit-Remaining': { description: 'left', schema: { type: 'integer', minimum: 0 } },
            },
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
          },
          '404': { description: 'Not found', headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } }, content: { 'application/json': { schema: apiError } } },
        },
      },
      delete: {
        operationId: 'things-delete',
        responses: { '204': { description: 'Gone', headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } } } },
      },
    },
    '/things/search': {
      get: {
        operationId: 'things-search',
        responses: {
          '200': {
            description: 'Found',
            headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
            content: {
              'application/json': { schema: { type: 'object', required: ['things'], properties: { things: { type: 'array', items: { $ref: '#/components/schemas/Thing' } } } } },
              'text/event-stream': { schema: { type: 'string' } },
            },
          },
        },
      },
    },
  },
  components: {
    headers: { 'X-Request-Id': { description: 'id', required: true, schema: { type: 'string', minLength: 1 } } },
    schemas: {
      Thing: {
        type: 'object',
        required: ['id', 'price', 'createdAt'],
        additionalProperties: false,
        properties: { id: { type: 'string' }, price: { type: 'number' }, createdAt: { type: 'string', format: 'date-time' }, tags: { type: 'array', items: { type: 'string' } } },
      },
      ApiError: {
        type: 'object',
        required: ['code', 'message', 'status', 'requestId'],
        additionalProperties: false,
        properties: { code: { type: 'string' }, message: { type: 'string' }, status: { type: 'integer' }, requestId: { type: 'string' } },
      },
    },
  },
};

const validator = new ResponseValidator(DOC);
const THING = { id: 't1', price: 1.5, createdAt: '2026-11-24T16:00:00.000Z' };
const NOT_FOUND = { code: 'NOT_FOUND', message: 'No thing', status: 404, requestId: 'req_1' };

function response(over: Omit<Partial<ResponseToCheck>, 'headers'> & { headers?: Record<string, string> | Headers; json?: unknown } = {}): ResponseToCheck {
  const { json: body, headers, ...rest } = over;
  return {
    method: 'GET',
    url: 'http://localhost/api/things/t1',
    status: 200,
    headers: headers instanceof Headers ? headers : new Headers({ 'content-type': 'application/json', 'x-request-id': 'req_1', ...headers }),
    body: body === undefined ? JSON.stringify(THING) : JSON.stringify(body),
    ...rest,
  };
}

describe('synthetic responses against a small document', () => {
  test('a response that matches passes', () => {
    expect(validator.check(response({ headers: { 'RateLimit-Remaining': '7' } }))).toEqual([]);
    expect(validator.check(response({ status: 404, json: NOT_FOUND }))).toEqual([]);
    expect(validator.check(response({ method: 'DELETE', status: 204, body: '', headers: new Headers({ 'x-request-id': 'r' }) }))).toEqual([]);
  });

  test('a status the operation does not document fails, naming the operation and the status', () => {
    const [mismatch, ...rest] = validator.check(response({ status: 402, json: { ...NOT_FOUND, status: 402 } }));
    expect(rest).toEqual([]);
    expect(mismatch).toMatchObject({ kind: 'status', operation: 'GET /things/{id}', operationId: 'things-get', status: 402, pointer: '/status' });
    expect(mismatch!.message).toContain('documented: 200, 404');
  });

  test('a missing required header fails; a header breaking its schema fails', () => {
    const missing = validator.check(response({ headers: new Headers({ 'content-type': 'application/json' }) }));
    expect(missing).toEqual([expect.objectContaining({ kind: 'header', pointer: '/headers/X-Request-Id', message: 'required header X-Request-Id is missing' })]);
    const malformed = validator.check(response({ headers: { 'RateLimit-Remaining': 'lots' } }));
    expect(malformed).toEqual([expect.objectContaining({ kind: 'header', pointer: '/headers/RateLimit-Remaining' })]);
    expect(validator.check(response({ headers: { 'RateLimit-Remaining': '-1' } }))[0]!.message).toContain('>= 0');
  });

  test('a header the API documents elsewhere, sent on a status that does not declare it, is reported', () => {
    const [mismatch] = validator.check(response({ status: 404, json: NOT_FOUND, headers: { 'Retry-After': '1' } }));
    expect(mismatch).toMatchObject({ kind: 'undocumented-header', pointer: '/headers/Retry-After' });
  });

  test('a body that breaks its schema fails at the JSON pointer of the failure ($refs resolved)', () => {
    const wrongType = validator.check(response({ json: { ...THING, price: '1.5' } }));
    expect(wrongType).toEqual([expect.objectContaining({ kind: 'body', pointer: '/body/price', message: 'body/price must be number' })]);
    expect(validator.check(response({ json: { ...THING, extra: 1 } }))).toEqual([expect.objectContaining({ kind: 'body', pointer: '/body', message: expect.stringContaining('"extra"') })]);
    expect(validator.check(response({ json: { ...THING, createdAt: 'yesterday' } }))).toEqual([expect.objectContaining({ pointer: '/body/createdAt', message: expect.stringContaining('date-time') })]);
    const nested = validator.check(response({ url: '/api/things/search', json: { things: [THING, { ...THING, tags: [1] }] } }));
    expect(nested).toEqual([expect.objectContaining({ operation: 'GET /things/search', pointer: '/body/things/1/tags/0' })]);
    expect(validator.check(response({ body: 'not json' }))).toEqual([expect.objectContaining({ kind: 'body', message: expect.stringContaining('not JSON') })]);
  });

  test('a content type or body the status does not document fails', () => {
    expect(validator.check(response({ headers: { 'content-type': 'text/plain' } }))).toEqual([expect.objectContaining({ kind: 'content-type', pointer: '/headers/content-type' })]);
    expect(validator.check(response({ method: 'DELETE', status: 204, body: '{}', headers: new Headers({ 'x-request-id': 'r', 'content-type': 'application/json' }) }))).toEqual([
      expect.objectContaining({ kind: 'body', operation: 'DELETE /things/{id}' }),
    ]);
  });

  test('an unknown /api path must be our 404 error body; a known path with another method, our 405', () => {
    expect(validator.check(response({ url: '/api/nothing/here', status: 404, json: NOT_FOUND }))).toEqual([]);
    const wrong = validator.check(response({ url: '/api/nothing', status: 200, json: { ok: true } }));
    expect(wrong.map((m) => [m.kind, m.pointer])).toEqual([
      ['unknown-path', '/status'],
      ['unknown-path', '/body'],
      ['unknown-path', '/body'],
      ['unknown-path', '/body'],
      ['unknown-path', '/body'],
      ['unknown-path', '/body'],
    ]);
    const put = { method: 'PUT', status: 405, json: { ...NOT_FOUND, status: 405 } };
    expect(validator.check(response({ ...put, headers: { allow: 'GET, DELETE' } }))).toEqual([]);
    expect(validator.check(response(put))).toEqual([expect.objectContaining({ kind: 'unknown-method', pointer: '/headers/Allow' })]);
  });

  test('paths outside /api and preflights are not checked', () => {
    for (const url of ['/trpc/things.get', '/docs', '/dashboard/', '/metrics', '/openapi.json', '/healthz']) {
      expect(validator.check(response({ url, status: 500, body: 'anything' }))).toEqual([]);
    }
    expect(validator.check(response({ method: 'OPTIONS', status: 204, body: '' }))).toEqual([]);
  });

  test('a stream is checked on its status and headers, never read', async () => {
    const never = new ReadableStream({ pull: () => new Promise(() => {}) });
    const sse = new Response(never, { headers: { 'content-type': 'text/event-stream', 'x-request-id': 'r' } });
    expect(await checkResponse(validator, { method: 'GET', url: 'http://localhost/api/things/search' }, sse, 'strict')).toEqual([]);
    expect(sse.bodyUsed).toBe(false);
    const undocumented = new Response(never, { status: 500, headers: { 'content-type': 'text/event-stream', 'x-request-id': 'r' } });
    await expect(checkResponse(validator, { method: 'GET', url: 'http://localhost/api/things/search' }, undocumented, 'strict')).rejects.toThrow(ResponseMismatchError);
  });

  test('strict mode throws a message naming the operation, the status and the pointer; the body stays readable', async () => {
    const bad = Response.json({ ...THING, price: null }, { headers: { 'x-request-id': 'r' } });
    const error = await checkResponse(validator, { method: 'GET', url: 'http://localhost/api/things/t9' }, bad, 'strict').catch((e) => e);
    expect(error).toBeInstanceOf(ResponseMismatchError);
    expect(error.message).toContain('GET /api/things/t9 (GET /things/{id}) answered 200');
    expect(error.message).toContain('[body] at /body/price: body/price must be number');
    expect(await bad.json()).toMatchObject({ id: 't1' });
  });

  test('report mode appends one JSON line per mismatch instead of throwing', async () => {
    const file = `/tmp/response-validator-test-${process.pid}.ndjson`;
    const before = process.env.RESPONSE_MISMATCHES_FILE;
    process.env.RESPONSE_MISMATCHES_FILE = file;
    try {
      rmSync(file, { force: true });
      const bad = new Response(JSON.stringify(THING), { status: 418, headers: { 'content-type': 'application/json' } });
      expect(await checkResponse(validator, { method: 'GET', url: 'http://localhost/api/things/t1' }, bad, 'report')).toHaveLength(1);
      const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(lines).toEqual([expect.objectContaining({ kind: 'status', status: 418, operation: 'GET /things/{id}', testFile: 'tests/platform/response-validator.test.ts' })]);
    } finally {
      if (before === undefined) delete process.env.RESPONSE_MISMATCHES_FILE;
      else process.env.RESPONSE_MISMATCHES_FILE = before;
      rmSync(file, { force: true });
    }
  });
});

describe("the app's own document", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  test('/openapi.json compiles, and real answers (a success, an error, an unknown path) pass it', async () => {
    const document = await json(await t.request('/openapi.json'));
    const real = validatorForDocument(document);
    expect(real).toBe(validatorForDocument(t.app.openApiDocument)); // the harness checks against exactly what /openapi.json serves
    for (const path of ['/api/pricing', '/api/trading/events', '/api/no-such-route']) {
      const res = await t.request(path);
      expect(await checkResponse(real, { method: 'GET', url: `http://localhost${path}` }, res, 'strict')).toEqual([]);
      expect(res.bodyUsed).toBe(false); // the harness's own check read a copy
    }
    const billed = await t.request('/api/billing', { headers: { 'x-api-key': 'pipo_wrong' } });
    expect(billed.status).toBe(401);
    expect(real.check({ method: 'GET', url: '/api/billing', status: 401, headers: billed.headers, body: await billed.text() }).filter((m) => m.kind !== 'undocumented-header')).toEqual([]);
  });

  test('the harness checks what app.handle answers on /api (a drift fails in strict mode)', async () => {
    const before = process.env.RESPONSE_VALIDATION;
    process.env.RESPONSE_VALIDATION = 'strict';
    try {
      expect((await t.request('/api/pricing')).status).toBe(200);
      // The same app with a document that says something else: the harness's handle throws.
      const drifted = structuredClone(t.app.openApiDocument) as any;
      drifted.paths['/pricing'].get.responses = { '204': { description: 'nothing' } };
      const { withResponseValidation } = await import('../harness/app.ts');
      const checked = withResponseValidation({ ...t.app, openApiDocument: drifted });
      await expect(Promise.resolve(checked.handle(new Request('http://localhost/api/pricing')))).rejects.toThrow(/GET \/api\/pricing \(GET \/pricing\) answered 200:\n {2}- \[status\] at \/status/);
    } finally {
      if (before === undefined) delete process.env.RESPONSE_VALIDATION;
      else process.env.RESPONSE_VALIDATION = before;
    }
  });
});
