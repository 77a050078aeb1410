/**
 * The headers every response gets besides its body's own: the request id, what middleware and
 * procedures added (RateLimit-*, Retry-After, Allow, …), the cost of a billed request, Retry-After
 * on 409/503, and CORS.
 */
import { formatUsd } from '../../lib/money.ts';
import type { RequestContext } from '../procedures/context.ts';
import { answeredFile } from '../procedures/streamed-file.ts';

export interface HeaderSource {
  requestId: string;
  ctx?: Pick<RequestContext, 'resHeaders' | 'billing'>;
  /** CORS headers of an allowed cross-origin request. */
  cors?: Record<string, string>;
}

type SetHeader = (name: string, value: string) => void;

export function writeResponseHeaders(source: HeaderSource, status: number, alreadyHasRetryAfter: boolean, set: SetHeader) {
  set('X-Request-Id', source.requestId);
  const added = source.ctx?.resHeaders;
  for (const name in added) {
    // Several cookies share the one Set-Cookie entry, a line each (a header value never holds a
    // newline): each becomes a Set-Cookie header of its own (e.g. sign-in: the session, the nonce's cleared).
    if (name === 'Set-Cookie') for (const cookie of added[name]!.split('\n')) set(name, cookie);
    else set(name, added[name]!);
  }
  if (source.ctx?.billing.billable) set('X-Request-Cost-USD', formatUsd(source.ctx.billing.chargedMicros));
  // Conflicts and unavailable dependencies are worth retrying: say when, unless a middleware already did.
  if ((status === 409 || status === 503) && !alreadyHasRetryAfter && added?.['Retry-After'] === undefined) set('Retry-After', '1');
  for (const name in source.cors) set(name, source.cors[name]!);
}

/** Vary lists every header a response depends on: CORS's Origin joins what the route said (e.g. Accept-Encoding). */
function joinVary(existing: string | null, added: string): string {
  if (!existing) return added;
  const names = existing.split(',').map((n) => n.trim().toLowerCase());
  return names.includes(added.toLowerCase()) ? existing : `${existing}, ${added}`;
}

/** Adds the headers to a response built elsewhere (Elysia's routes, /trpc, errors). */
export function withResponseHeaders(response: Response, source: HeaderSource): Response {
  let headers = response.headers;
  try {
    headers.set('X-Request-Id', source.requestId);
  } catch {
    // A response with immutable headers (e.g. one passed through from fetch): copy it once.
    headers = new Headers(response.headers);
    response = new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }
  writeResponseHeaders(source, response.status, headers.has('Retry-After'), (name, value) =>
    name === 'Set-Cookie' ? headers.append(name, value) : headers.set(name, name === 'Vary' ? joinVary(headers.get('vary'), value) : value),
  );
  return response;
}

/**
 * Builds JSON responses from one reused Headers object. `new Response` copies the headers it is
 * given, and a Headers object it can copy as is costs it half of reading the same five headers from
 * a fresh object literal (~0.5 µs of a ~6 µs request). The names the previous response set and this
 * one does not are deleted before this one's are set; no response ever sees another's headers
 * (tests/platform/http.test.ts checks a sequence of different responses). A procedure's streamed
 * file (procedures/streamed-file.ts) is built the same way, its stream the body, under its own type.
 */
export class JsonResponses {
  private readonly headers = new Headers();
  private previous: string[] = [];
  private names: string[] = [];
  private values: string[] = [];
  private readonly add: SetHeader = (name, value) => {
    const seen = name === 'Vary' ? this.names.indexOf(name) : -1;
    if (seen >= 0) {
      this.values[seen] = joinVary(this.values[seen]!, value);
      return;
    }
    this.names.push(name);
    this.values.push(value);
  };

  build(body: string, status: number, source: HeaderSource): Response {
    const { headers, names, values } = this;
    // A procedure that answered a file (procedures/streamed-file.ts): its stream is the body, as it is written.
    const file = answeredFile(source.ctx);
    try {
      writeResponseHeaders(source, status, false, this.add);
      if (file) this.add('Content-Disposition', `attachment; filename=${file.filename}`);
      for (const name of this.previous) if (!names.includes(name)) headers.delete(name);
      this.previous = names.slice();
      headers.set('content-type', file ? file.contentType : 'application/json');
      for (let i = 0; i < names.length; i++) {
        // A second Set-Cookie is a header of its own; the first replaces the previous response's.
        if (names[i] === 'Set-Cookie' && names.indexOf('Set-Cookie') < i) headers.append('Set-Cookie', values[i]!);
        else headers.set(names[i]!, values[i]!);
      }
      return new Response(file ? file.body : body, { status, headers });
    } catch (error) {
      // A header value Headers refused: start the next response from nothing.
      for (const [name] of [...headers]) headers.delete(name);
      this.previous = [];
      throw error;
    } finally {
      names.length = 0;
      values.length = 0;
    }
  }
}
