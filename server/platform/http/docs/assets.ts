/**
 * /docs: Scalar's API reference (@scalar/api-reference's standalone browser bundle, vendored in
 * vendor/scalar-api-reference/: the npm package pulls 26 packages that need Node 22; its README) rendering
 * /openapi.json. Everything the page loads is served from here (no CDN, fonts or analytics), so it
 * works offline; files are read once at start, and the 4 MB bundle is gzipped once, off the event
 * loop, for browsers that accept it (about 1.3 MB on the wire).
 *
 * The Content-Security-Policy: scripts from this origin only (no inline script, no eval: Scalar is
 * configured by docs.js, a file), connections to this origin only ("Try it" calls this server, no
 * proxy). Styles need 'unsafe-inline': the bundle injects its stylesheet (Tailwind and its themes)
 * as a <style> element at run time, and its components set style attributes with values computed
 * in the browser, so no hash or nonce can name them in advance. Inline styles cannot run code;
 * scripts stay locked down. docs/api-reference.md says more.
 */
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { ApiError } from '../../../errors.ts';
import { acceptsGzip } from '../dashboard/assets.ts';

const dir = new URL('./', import.meta.url);
const read = (name: string) => Bun.file(new URL(name, dir)).text();
const SCALAR_BUNDLE = new URL('../../../../vendor/scalar-api-reference/standalone.js', import.meta.url);

// Its source map is not served: drop the comment that would make a browser's devtools ask for it.
const [html, js, css, scalar] = await Promise.all([
  read('index.html'),
  read('docs.js'),
  read('docs.css'),
  Bun.file(SCALAR_BUNDLE).text().then((text) => text.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n')),
]);
// Started now, awaited by the first request that takes gzip; a failure only means serving it uncompressed.
const scalarGzipped = promisify(gzip)(scalar).then(
  (buffer) => new Uint8Array(buffer),
  () => null,
);

export const DOCS_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

interface Asset {
  body: string;
  type: string;
  gzipped?: Promise<Uint8Array<ArrayBuffer> | null>;
}

// A Map, not an object literal: a name like `constructor` or `__proto__` must not find Object.prototype's members.
const ASSETS = new Map<string, Asset>([
  ['docs.js', { body: js, type: 'text/javascript; charset=utf-8' }],
  ['docs.css', { body: css, type: 'text/css; charset=utf-8' }],
  ['scalar.js', { body: scalar, type: 'text/javascript; charset=utf-8', gzipped: scalarGzipped }],
]);

export const docsAssets = {
  page: () => new Response(html, { headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', ...DOCS_HEADERS } }),
  async asset(name: string, acceptEncoding: string | null = null): Promise<Response> {
    const asset = ASSETS.get(name);
    if (!asset) throw new ApiError('NOT_FOUND', `No docs asset ${name}`);
    const headers: Record<string, string> = { 'content-type': asset.type, 'cache-control': 'public, max-age=300', vary: 'accept-encoding', ...DOCS_HEADERS };
    const gzipped = asset.gzipped && acceptsGzip(acceptEncoding) ? await asset.gzipped : null;
    if (gzipped) return new Response(gzipped, { headers: { ...headers, 'content-encoding': 'gzip' } });
    return new Response(asset.body, { headers });
  },
};
