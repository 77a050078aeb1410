/**
 * /dashboard's files over HTTP (the browser journeys are in dashboard-*-browser.test.ts): the page
 * under its CSP, hashed assets cached for a year, gzipped to browsers that accept it (the same bytes
 * once inflated), plain otherwise, and nothing outside dist/assets.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { acceptsGzip } from '../../server/platform/http/dashboard/assets.ts';
import { createTestApp, type TestApp } from '../harness/app.ts';
import { ROOT } from '../harness/dashboard.ts';

let t: TestApp;
let script: string;

beforeAll(async () => {
  const build = Bun.spawnSync([process.execPath, 'scripts/build-dashboard.ts'], { cwd: ROOT, stderr: 'pipe', stdout: 'pipe' });
  if (build.exitCode !== 0) throw new Error(`dashboard build failed: ${build.stderr.toString()}`);
  t = await createTestApp();
  const page = await (await t.request('/dashboard')).text();
  script = /src="(\/dashboard\/assets\/main-[^"]+\.js)"/.exec(page)![1]!;
}, 60_000);
afterAll(() => t.close());

describe('dashboard assets', () => {
  test('the page is served under a strict CSP and never cached; assets are cached for a year', async () => {
    const page = await t.request('/dashboard');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const asset = await t.request(script);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).toContain('text/javascript');
  });

  test('gzip to a browser that accepts it, the same bytes once inflated; plain to one that does not', async () => {
    const plain = await t.request(script, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(plain.headers.get('vary')).toBe('accept-encoding');
    const original = new Uint8Array(await plain.arrayBuffer());
    const zipped = await t.request(script, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    const body = new Uint8Array(await zipped.arrayBuffer());
    expect(body.byteLength).toBeLessThan(original.byteLength / 2);
    expect(Bun.gunzipSync(body)).toEqual(original);
    const refused = await t.request(script, { headers: { 'accept-encoding': 'gzip;q=0' } });
    expect(refused.headers.get('content-encoding')).toBeNull();
  });

  test('a same-origin module script (the browser sends Origin) varies on both Origin and Accept-Encoding', async () => {
    const origin = t.services.config.auth.publicUrl;
    const res = await t.request(script, { headers: { 'accept-encoding': 'gzip', origin } });
    expect(res.headers.get('content-encoding')).toBe('gzip');
    const vary = (res.headers.get('vary') ?? '').toLowerCase().split(',').map((v) => v.trim());
    expect(vary).toContain('accept-encoding');
    expect(res.headers.get('access-control-allow-origin')).toBe(origin);
    expect(vary).toContain('origin');
  });

  test('nothing but the built assets: traversal, hidden files, .gz names and unknown files are 404 in our error shape', async () => {
    for (const path of ['/dashboard/assets/..%2Findex.html', '/dashboard/assets/.hidden', `${script}.gz`, '/dashboard/assets/nope.js']) {
      const res = await t.request(path);
      expect(`${path} → ${res.status}`).toBe(`${path} → 404`);
      expect(await res.json()).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    }
  });

  test('Accept-Encoding is read as RFC 9110 says', () => {
    expect(acceptsGzip('gzip')).toBe(true);
    expect(acceptsGzip('br, GZIP;q=0.5')).toBe(true);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('gzip;q=0, *')).toBe(false); // named gzip wins over *
    expect(acceptsGzip('identity, *;q=0.1')).toBe(true);
    expect(acceptsGzip('br, deflate')).toBe(false);
    expect(acceptsGzip(null)).toBe(false);
  });
});
