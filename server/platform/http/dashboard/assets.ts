/**
 * /dashboard: the customer web app (dashboard/, built by scripts/build-dashboard.ts into
 * dashboard/dist — `npm start` builds it first). Served from here only — no CDN — under a strict
 * Content-Security-Policy: scripts, styles and connections to this origin alone, no inline script.
 * The page is read per request (a rebuild shows without a restart); hashed assets are cached for a
 * year. Not built: 404 in our error shape, saying how to build it.
 */
import { extname, join, normalize } from 'node:path';
import { ApiError } from '../../../errors.ts';

const DIST = normalize(join(import.meta.dir, '../../../../dashboard/dist'));

export const DASHBOARD_HEADERS = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

const notBuilt = () => new ApiError('NOT_FOUND', 'The dashboard is not built: run `bun scripts/build-dashboard.ts` (npm start does it)');

export const dashboardAssets = {
  async page(): Promise<Response> {
    const file = Bun.file(join(DIST, 'index.html'));
    if (!(await file.exists())) throw notBuilt();
    return new Response(file, { headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', ...DASHBOARD_HEADERS } });
  },
  /** An asset by name; its gzipped twin (written by the build) when the browser accepts gzip. */
  async asset(name: string, acceptEncoding: string | null = null): Promise<Response> {
    // Only plain file names inside dist/assets: no traversal, no hidden files, no .gz twin by its own name.
    if (!/^[A-Za-z0-9._-]+$/.test(name) || name.startsWith('.') || name.endsWith('.gz')) throw new ApiError('NOT_FOUND', `No dashboard asset ${name}`);
    const file = Bun.file(join(DIST, 'assets', name));
    if (!(await file.exists())) throw new ApiError('NOT_FOUND', `No dashboard asset ${name}`);
    const headers: Record<string, string> = {
      'content-type': TYPES[extname(name)] ?? 'application/octet-stream',
      'cache-control': 'public, max-age=31536000, immutable',
      vary: 'accept-encoding',
      ...DASHBOARD_HEADERS,
    };
    const gzipped = Bun.file(join(DIST, 'assets', `${name}.gz`));
    if (acceptsGzip(acceptEncoding) && (await gzipped.exists())) return new Response(gzipped, { headers: { ...headers, 'content-encoding': 'gzip' } });
    return new Response(file, { headers });
  },
};

/**
 * Whether an Accept-Encoding header takes gzip: gzip named with q > 0, or (gzip not named) `*` with
 * q > 0. A gzip named with q=0 is refused whatever `*` says (RFC 9110 §12.5.3).
 */
export function acceptsGzip(header: string | null): boolean {
  if (!header) return false;
  let gzip: number | undefined;
  let any: number | undefined;
  for (const part of header.split(',')) {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    if (coding === 'gzip') gzip = weight;
    else if (coding === '*') any = weight;
  }
  return (gzip ?? any ?? 0) > 0;
}
