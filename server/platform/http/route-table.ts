/**
 * The REST route table, built once from the procedures' `openapi` meta (the same meta that
 * trpc-to-openapi turns into the OpenAPI document, so paths have one source), read from the
 * project's procedure catalog (procedures/catalog.ts).
 *
 * Matching is by specificity, not declaration order: at the first segment where two templates differ,
 * a literal beats a `{param}`. So `/private-companies/search` can never be captured by `/{id}`.
 */
import { normalizePath } from 'trpc-to-openapi';
import { catalogOf } from '../procedures/catalog.ts';
import { compileDefinition, type CompiledProcedure } from '../procedures/runner.ts';
import type { RouteMeta } from '../procedures/meta.ts';
import { restInputConversion, type RestInputConversion } from './rest-input.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Route {
  method: HttpMethod;
  /** The documented template, e.g. `/keys/{id}` (relative to /api). */
  template: string;
  /** `GET /api/keys/{id}`: the route's name in logs and metrics (built once, not per request). */
  label: string;
  /** Dotted tRPC path, e.g. `keys.revoke`. */
  procedurePath: string;
  type: 'query' | 'mutation';
  meta: RouteMeta;
  /** The procedure, compiled once: the bridge runs it directly. */
  run: CompiledProcedure;
  /** Query and path parameters' text → the input schema's numbers and lists (http/rest-input.ts). */
  convert: RestInputConversion;
  segments: Array<{ literal: string } | { param: string }>;
}

export interface RouteMatch {
  route: Route;
  params: Record<string, string>;
}

function parseTemplate(template: string): Route['segments'] {
  return template
    .split('/')
    .filter(Boolean)
    .map((s) => {
      const param = /^\{(.+)\}$/.exec(s)?.[1];
      return param ? { param } : { literal: s };
    });
}

/** Negative when `a` is more specific than `b` (only same-length templates can overlap). */
function bySpecificity(a: Route, b: Route): number {
  if (a.segments.length !== b.segments.length) return a.segments.length - b.segments.length;
  for (let i = 0; i < a.segments.length; i++) {
    const aLiteral = 'literal' in a.segments[i]!;
    const bLiteral = 'literal' in b.segments[i]!;
    if (aLiteral !== bLiteral) return aLiteral ? -1 : 1;
  }
  return 0;
}

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

export class RouteTable {
  readonly routes: Route[] = [];
  /** GET → `/pricing` → its route, for templates without parameters (most requests). */
  private readonly staticRoutes = new Map<string, Map<string, Route>>();
  /** `GET 2` → the routes of that method and segment count, most specific first. */
  private readonly candidates = new Map<string, Route[]>();

  constructor(router: object) {
    for (const { path, definition } of catalogOf(router)) {
      const { kind: type, meta } = definition;
      if (type === 'subscription' || !meta.openapi || meta.openapi.enabled === false) continue;
      const template = normalizePath(meta.openapi.path);
      this.routes.push({
        method: meta.openapi.method,
        template,
        label: `${meta.openapi.method} /api${template}`,
        procedurePath: path,
        type,
        meta,
        run: compileDefinition(definition),
        convert: restInputConversion(definition.input),
        segments: parseTemplate(template),
      });
    }
    this.routes.sort(bySpecificity);
    this.assertNoAmbiguity();
    for (const route of this.routes) {
      if (route.segments.every((s) => 'literal' in s)) {
        if (!this.staticRoutes.has(route.method)) this.staticRoutes.set(route.method, new Map());
        this.staticRoutes.get(route.method)!.set(route.template, route);
      }
      const bucket = `${route.method} ${route.segments.length}`;
      this.candidates.set(bucket, [...(this.candidates.get(bucket) ?? []), route]);
    }
  }

  /** Matches a path (relative to /api, not yet decoded) for one method. */
  match(method: string, path: string): RouteMatch | undefined {
    // A literal always beats a parameter, so an exact static match is the most specific one.
    const exact = this.staticRoutes.get(method)?.get(path);
    if (exact) return { route: exact, params: NO_PARAMS };
    const parts = path.split('/').filter(Boolean);
    for (const route of this.candidates.get(`${method} ${parts.length}`) ?? []) {
      const params = matchSegments(route, parts);
      if (params) return { route, params };
    }
    return undefined;
  }

  /** Methods that some route accepts at this path (for 405 and the Allow header). */
  allowedMethods(path: string): HttpMethod[] {
    const parts = path.split('/').filter(Boolean);
    const methods = this.routes.filter((r) => r.segments.length === parts.length && matchSegments(r, parts)).map((r) => r.method);
    return [...new Set(methods)];
  }

  private assertNoAmbiguity() {
    const seen = new Map<string, string>();
    for (const r of this.routes) {
      const shape = `${r.method} ${r.segments.map((s) => ('literal' in s ? s.literal : '{}')).join('/')}`;
      const other = seen.get(shape);
      if (other) throw new Error(`Routes ${other} and ${r.procedurePath} both answer ${r.method} ${r.template}`);
      seen.set(shape, r.procedurePath);
    }
  }
}

function matchSegments(route: Route, parts: string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const segment = route.segments[i]!;
    if ('literal' in segment) {
      if (segment.literal !== parts[i]) return undefined;
    } else {
      params[segment.param] = parts[i]!;
    }
  }
  return params;
}
