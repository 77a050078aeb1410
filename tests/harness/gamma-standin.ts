/**
 * A local stand-in for the part of Polymarket's Gamma API that discovery and the event sync read:
 * `GET /events?tag_slug=ipo&closed=<bool>&limit=<n>&offset=<k>` (a JSON list, paged by offset, filtered
 * on each event's `closed`) and `GET /events/slug/<slug>` (one event, or 404). It serves the raw event
 * objects it is given, untouched — malformed ones included, as Gamma's own would reach us. Strict where
 * the client must be: `tag_slug`, `closed`, `limit` and `offset` are required (400 otherwise), so a
 * client that forgets one is caught. The list can be replaced between passes; every request is kept.
 */
export interface GammaRequest {
  path: string;
  query: Record<string, string>;
}

export class GammaStandin {
  readonly requests: GammaRequest[] = [];
  /** Answer the next requests with these statuses instead (then back to normal). */
  failNext: number[] = [];
  private server?: ReturnType<typeof Bun.serve>;

  constructor(private events: unknown[] = []) {}

  get url() {
    return `http://127.0.0.1:${this.server!.port}`;
  }

  /** The events served from now on (the next discovery pass sees these). */
  setEvents(events: unknown[]) {
    this.events = events;
  }

  /** The list requests (`/events?…`) made so far, in order. */
  get listRequests() {
    return this.requests.filter((r) => r.path === '/events');
  }

  start() {
    this.server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => this.handle(request) });
    return this;
  }

  stop() {
    this.server?.stop(true);
  }

  /** Lets the process exit while this stand-in still listens (a shared one nobody stops). */
  unref() {
    this.server?.unref();
    return this;
  }

  private handle(request: Request): Response {
    const url = new URL(request.url);
    this.requests.push({ path: url.pathname, query: Object.fromEntries(url.searchParams) });
    if (request.method !== 'GET') return Response.json({ error: 'method not allowed' }, { status: 405 });
    const status = this.failNext.shift();
    if (status) return Response.json({ error: 'injected' }, { status });
    const bySlug = /^\/events\/slug\/([^/]+)$/.exec(url.pathname);
    if (bySlug) {
      const slug = decodeURIComponent(bySlug[1]!);
      const event = this.events.find((e) => field(e, 'slug') === slug);
      return event === undefined ? Response.json({ type: 'not found error', error: 'not found' }, { status: 404 }) : Response.json(event);
    }
    if (url.pathname !== '/events') return Response.json({ error: 'not found' }, { status: 404 });
    const q = url.searchParams;
    const closed = q.get('closed');
    const limit = Number(q.get('limit'));
    const offset = Number(q.get('offset'));
    if (q.get('tag_slug') !== 'ipo' || (closed !== 'true' && closed !== 'false') || !q.has('limit') || !q.has('offset') || !Number.isInteger(limit) || limit < 1 || !Number.isInteger(offset) || offset < 0) {
      return Response.json({ error: 'this stand-in answers tag_slug=ipo with closed, limit and offset' }, { status: 400 });
    }
    const matching = this.events.filter((e) => (field(e, 'closed') === true) === (closed === 'true'));
    return Response.json(matching.slice(offset, offset + limit));
  }
}

function field(event: unknown, name: string): unknown {
  return event && typeof event === 'object' ? (event as Record<string, unknown>)[name] : undefined;
}
