/**
 * A local stand-in for the CLOB's `GET /prices-history` (docs.polymarket.com "Get price history for a
 * traded token"): `market` (the token id), `startTs`/`endTs` (Unix seconds) and `fidelity` (minutes
 * between points, default 1), answering the recorded shape `{"history":[{"t":1763812800,"p":0.545}]}`
 * — t in seconds on the fidelity grid, p a number with at most 4 decimals. Strict where the real one
 * is known to be: a resolved market answers an empty history below 12-hour fidelity (720 minutes);
 * a range too long for its fidelity is 400 "invalid filters" (here: more than 1,440 points or 15 days,
 * the limits the backfill windows its requests by). Every request is kept for assertions.
 */
export interface PricesHistoryStandinOptions {
  /** The token's price at `tSeconds`, or undefined where it has no history (before its market opened). */
  price: (tokenId: string, tSeconds: number) => number | undefined;
  /** Tokens whose market has resolved (history only at fidelity ≥ 720). */
  resolved?: (tokenId: string) => boolean;
}

export class PricesHistoryStandin {
  readonly requests: { market: string; startTs: number; endTs: number; fidelity: number }[] = [];
  /** Answer the next requests with this status instead (then back to normal). */
  failNext: number[] = [];
  private server?: ReturnType<typeof Bun.serve>;

  constructor(private options: PricesHistoryStandinOptions) {}

  get url() {
    return `http://127.0.0.1:${this.server!.port}`;
  }

  start() {
    this.server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => this.handle(request) });
    return this;
  }

  stop() {
    this.server?.stop(true);
  }

  private handle(request: Request): Response {
    const url = new URL(request.url);
    if (request.method !== 'GET' || url.pathname !== '/prices-history') return Response.json({ error: 'not found' }, { status: 404 });
    const q = url.searchParams;
    const market = q.get('market');
    const startTs = Number(q.get('startTs'));
    const endTs = Number(q.get('endTs'));
    const fidelity = Number(q.get('fidelity') ?? '1');
    if (!market || !q.has('startTs') || !q.has('endTs') || !Number.isInteger(startTs) || !Number.isInteger(endTs) || !(fidelity >= 1)) {
      return Response.json({ error: 'invalid filters: market, startTs and endTs are required' }, { status: 400 });
    }
    this.requests.push({ market, startTs, endTs, fidelity });
    const status = this.failNext.shift();
    if (status) return Response.json({ error: 'injected' }, { status });
    const step = fidelity * 60;
    if (endTs - startTs > Math.min(15 * 86_400, step * 1_440)) {
      return Response.json({ error: "invalid filters: 'startTs' and 'endTs' interval is too long" }, { status: 400 });
    }
    if (this.options.resolved?.(market) && fidelity < 720) return Response.json({ history: [] });
    const history: { t: number; p: number }[] = [];
    for (let t = Math.ceil(startTs / step) * step; t <= endTs; t += step) {
      const p = this.options.price(market, t);
      if (p !== undefined) history.push({ t, p: Math.round(p * 10_000) / 10_000 });
    }
    return Response.json({ history });
  }
}
