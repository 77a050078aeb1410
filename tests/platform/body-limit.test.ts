/**
 * The body size limit on a real server process: Bun.serve answers a body over its own
 * maxRequestBodySize by itself, with an empty 413, before the app runs. Every 413 must be ours:
 * {code, message, status, requestId}, Content-Type application/json, with or without Content-Length,
 * on /api, /trpc and paths that never read a body.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { loadConfig } from '../../server/config.ts';
import { serveOptions } from '../../server/platform/http/serve-options.ts';
import { startServer, type RunningServer } from '../harness/server-process.ts';

const DASHBOARD = 'dash_body_limit_0123456789abcdef0123456789';
const MAX_BODY_BYTES = 65_536;
const TWO_MB = 2 * 1_048_576;

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ DATA_DIR: ':memory:', DASHBOARD_KEYS: DASHBOARD, MAX_BODY_BYTES: String(MAX_BODY_BYTES) });
}, 30_000);
afterAll(() => server?.stop());

const headers = { 'x-api-key': DASHBOARD, 'x-account-id': 'body-limit', 'content-type': 'application/json' };

/** A JSON-looking body of `bytes` bytes, as one buffer (sent with Content-Length) or streamed (chunked). */
function body(bytes: number, chunked: boolean): BodyInit {
  const text = new TextEncoder().encode(`{"name":"${'x'.repeat(bytes - 11)}"}`);
  if (!chunked) return text;
  return new ReadableStream({
    start(controller) {
      for (let at = 0; at < text.length; at += 65_536) controller.enqueue(text.subarray(at, at + 65_536));
      controller.close();
    },
  });
}

async function expect413(path: string, chunked: boolean) {
  const response = await fetch(server.url + path, { method: 'POST', headers, body: body(TWO_MB, chunked), duplex: 'half' } as RequestInit);
  const text = await response.text();
  expect(`${path} ${chunked ? 'chunked' : 'with Content-Length'} → ${response.status} ${text.slice(0, 200)}`).toContain('→ 413 {');
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const parsed = JSON.parse(text);
  const error = parsed.error ? parsed.error.data.api : parsed;
  expect(Object.keys(error).sort()).toEqual(['code', 'message', 'requestId', 'status']);
  expect(error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413, requestId: response.headers.get('x-request-id') });
  expect(error.message).toContain(String(MAX_BODY_BYTES));
}

describe('a 2 MB body on a real server', () => {
  for (const chunked of [false, true]) {
    test(`${chunked ? 'chunked' : 'with Content-Length'}: 413 in our shape on /api and /trpc`, async () => {
      await expect413('/api/keys', chunked);
      await expect413('/trpc/keys.create', chunked);
    }, 30_000);
  }

  test('with Content-Length: 413 in our shape on paths that never read a body', async () => {
    await expect413('/healthz', false);
    await expect413('/nowhere', false);
  }, 30_000);

  test('a body at the limit is still read, and the server keeps serving', async () => {
    const ok = await fetch(`${server.url}/api/keys`, { method: 'POST', headers, body: body(MAX_BODY_BYTES, false) });
    expect(ok.status).toBe(400); // read and validated: the name is too long
    expect((await ok.json()).message).toMatch(/^name: /);
    expect((await fetch(`${server.url}/api/pricing`)).status).toBe(200);
  }, 30_000);
});

describe("Bun.serve's own answers", () => {
  test('its limit is out of reach, so every oversized body meets ours', () => {
    const options = serveOptions(loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', MAX_BODY_BYTES: String(MAX_BODY_BYTES) }));
    expect(options.maxRequestBodySize).toBeGreaterThanOrEqual(Number.MAX_SAFE_INTEGER);
  });

  test('an error outside the app is our 500: JSON, our shape, no message or stack of the cause', async () => {
    const options = serveOptions(loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent' }));
    const response = options.error(new Error('secret detail at /srv/app/file.ts:1'));
    expect(response.status).toBe(500);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await response.text();
    expect(text).not.toContain('secret');
    const body = JSON.parse(text);
    expect(body).toMatchObject({ code: 'INTERNAL_ERROR', status: 500, requestId: response.headers.get('x-request-id') });
    expect(Object.keys(body).sort()).toEqual(['code', 'message', 'requestId', 'status']);
  });
});
