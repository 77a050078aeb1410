/** Turns route-table entries into concrete requests on both transports, for table-driven tests. */
import type { Route } from '../../server/platform/http/route-table.ts';
import { BASE } from './app.ts';

/** A concrete REST path for a template: every `{param}` filled with a harmless value. */
export function concretePath(route: Route): string {
  return '/api' + route.template.replace(/\{[^}]+\}/g, '1');
}

export function restRequest(route: Route, headers: Record<string, string>): Request {
  const hasBody = !['GET', 'DELETE'].includes(route.method);
  return new Request(BASE + concretePath(route), {
    method: route.method,
    headers: hasBody ? { ...headers, 'content-type': 'application/json' } : headers,
    body: hasBody ? '{}' : undefined,
  });
}

/** The same procedure over /trpc: queries by GET, mutations by POST, with an empty input. */
export function trpcRequest(route: Route, headers: Record<string, string>): Request {
  const input = Object.fromEntries(route.segments.flatMap((s) => ('param' in s ? [[s.param, '1']] : [])));
  if (route.type === 'query') {
    return new Request(`${BASE}/trpc/${route.procedurePath}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers });
  }
  return new Request(`${BASE}/trpc/${route.procedurePath}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(input),
  });
}

/** The public error fields, from a REST body or a tRPC error envelope. */
export async function publicError(response: Response, transport: 'rest' | 'trpc') {
  const body = (await response.json()) as any;
  return transport === 'rest' ? body : body.error?.data?.api;
}
