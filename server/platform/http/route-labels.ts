/**
 * The `route` and `transport` labels of a request's metrics. A label is always a template from a
 * fixed set, never a raw path, so the number of series stays bounded whatever clients send.
 *
 * The transports name the route they matched in `ctx.logFields.route` (/api: `GET /api/trading/
 * positions/{positionId}`; /trpc: the procedure path, `(batch)` for a multi-call batch; nothing
 * matched: `(unmatched)`). When they have not (a request refused before routing, e.g. a forbidden
 * origin or a body too large, or a transport that does not set it), `fallbackRoute` names it from the
 * REST route table and the fixed paths of app.ts, with the same labels.
 */
import type { TransportIndex } from '../metrics/http.ts';

export const UNMATCHED = '(unmatched)';
export const BATCH = '(batch)';
export const PREFLIGHT = '(preflight)';

/** The app's fixed (non-API) routes; a path under a `/*` entry is one of its assets. */
const STATIC_ROUTES: ReadonlyArray<[prefix: string, label: string, exact: boolean]> = [
  ['/healthz', '/healthz', true],
  ['/readyz', '/readyz', true],
  ['/metrics', '/metrics', true],
  ['/openapi.json', '/openapi.json', true],
  ['/docs', '/docs', true],
  ['/docs/', '/docs/{asset}', false],
  ['/dashboard', '/dashboard', true],
  ['/dashboard/', '/dashboard/', true],
  ['/dashboard/assets/', '/dashboard/assets/{asset}', false],
];

/** 0 rest, 1 trpc, 2 other: by the path's prefix, as app.ts dispatches. */
export function transportOf(path: string): TransportIndex {
  if (path.startsWith('/api/')) return 0;
  if (path.startsWith('/trpc/') || path === '/trpc') return 1;
  return 2;
}

export interface RouteEntry {
  method: string;
  /** Relative to /api, e.g. `/keys/{id}`. */
  template: string;
  /** The dotted tRPC path, e.g. `keys.revoke`. */
  procedurePath: string;
}

export function createFallbackRoutes(routes: readonly RouteEntry[]) {
  // Keyed by the whole path as requested, so a lookup builds no string.
  /** Method → `/api/pricing` → its label, for templates without parameters. */
  const exact = new Map<string, Map<string, string>>();
  /** Templates with parameters, by method: their segments (null for a parameter). */
  const patterns = new Map<string, Array<{ segments: Array<string | null>; label: string }>>();
  /** `/trpc/pricing.get` → `pricing.get`. */
  const procedures = new Map<string, string>();
  for (const route of routes) {
    const label = `${route.method} /api${route.template}`;
    procedures.set(`/trpc/${route.procedurePath}`, route.procedurePath);
    if (!route.template.includes('{')) {
      const byPath = exact.get(route.method) ?? new Map<string, string>();
      byPath.set(`/api${route.template}`, label);
      exact.set(route.method, byPath);
      continue;
    }
    const segments = route.template.split('/').slice(1).map((s) => (/^\{.+\}$/.test(s) ? null : s));
    const list = patterns.get(route.method) ?? [];
    list.push({ segments, label });
    // Literal segments before parameters: `/private-companies/search` is never taken by `/{id}`.
    list.sort((a, b) => specificity(b.segments) - specificity(a.segments));
    patterns.set(route.method, list);
  }

  function restRoute(method: string, path: string): string {
    const hit = exact.get(method)?.get(path);
    if (hit !== undefined) return hit;
    const list = patterns.get(method);
    if (!list) return UNMATCHED;
    const parts = path.split('/').slice(2);
    for (const { segments, label } of list) {
      if (segments.length === parts.length && segments.every((s, i) => s === null ? parts[i] !== '' : s === parts[i])) return label;
    }
    return UNMATCHED;
  }

  function trpcRoute(path: string): string {
    const procedure = procedures.get(path);
    if (procedure !== undefined) return procedure;
    return path.includes(',') ? BATCH : UNMATCHED;
  }

  /** The route label of a request its transport did not name. */
  return function fallbackRoute(method: string, path: string, transport: TransportIndex): string {
    if (method === 'OPTIONS') return PREFLIGHT;
    if (transport === 0) return restRoute(method, path);
    if (transport === 1) return trpcRoute(path);
    if (method !== 'GET' && method !== 'HEAD') return UNMATCHED;
    for (const [prefix, label, whole] of STATIC_ROUTES) {
      if (whole ? path === prefix : path.startsWith(prefix) && path.length > prefix.length) return `${method} ${label}`;
    }
    return UNMATCHED;
  };
}

/** Higher for templates whose literal segments come first. */
function specificity(segments: Array<string | null>): number {
  return segments.reduce((score, s, i) => score + (s === null ? 0 : 2 ** (segments.length - i)), 0);
}
