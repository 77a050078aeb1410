/**
 * /docs: a small reference page that renders /openapi.json in the browser. Everything it loads is
 * served from here (no CDN, no fonts, no analytics), so it works offline. Read once at start.
 */
import { ApiError } from '../../errors.ts';

const dir = new URL('./', import.meta.url);
const read = (name: string) => Bun.file(new URL(name, dir)).text();
const [html, js, css] = await Promise.all([read('index.html'), read('docs.js'), read('docs.css')]);

const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'",
  'x-content-type-options': 'nosniff',
};

// A Map, not an object literal: a name like `constructor` or `__proto__` must not find Object.prototype's members.
const ASSETS = new Map<string, { body: string; type: string }>([
  ['docs.js', { body: js, type: 'text/javascript; charset=utf-8' }],
  ['docs.css', { body: css, type: 'text/css; charset=utf-8' }],
]);

export const docsAssets = {
  page: () => new Response(html, { headers: { 'content-type': 'text/html; charset=utf-8', ...SECURITY_HEADERS } }),
  asset(name: string) {
    const asset = ASSETS.get(name);
    if (!asset) throw new ApiError('NOT_FOUND', `No docs asset ${name}`);
    return new Response(asset.body, { headers: { 'content-type': asset.type, 'cache-control': 'public, max-age=300', ...SECURITY_HEADERS } });
  },
};
