/**
 * A local stand-in for Stripe's `POST /v1/billing/meter_events` (Bun.serve on 127.0.0.1, a free port),
 * for the metered-usage exporter's tests. It answers the way the official `stripe` client expects:
 *
 *   - `Authorization: Bearer <secretKey>` or 401; the message never echoes the key presented.
 *   - a form-encoded body with exactly `event_name`, `payload[stripe_customer_id]`, `payload[value]`,
 *     `identifier`, `timestamp` (and the client's own `expand[]`, unused) — else 400 in Stripe's shape
 *     `{error: {type: 'invalid_request_error', message, param}}`. Stricter than Stripe on purpose: the
 *     exporter always sends an identifier, and a whole positive number of micro-USD as the value, so
 *     anything else here is a bug of ours. `timestamp` must lie within 35 days past / 5 minutes ahead of
 *     the stand-in's clock (`now`), as Stripe checks it.
 *   - `knownCustomers` (optional): other customers get 400 resource_missing (a permanent 4xx).
 *   - a repeated identifier is answered 200 with the first event and not recorded again (Stripe
 *     dedups identifiers for at least 24 h): `events` holds each identifier once, `accepted` counts
 *     every 200 per identifier so tests can see redeliveries.
 *
 * Fault injection: `failNext(n, status)` (500 api_error, 429 rate_limit, 503), `loseNextAnswers(n)`
 * (the event IS recorded, then the answer is a 500: a reply lost after Stripe took the event),
 * `delayMs` (every answer waits, e.g. to kill the exporter mid-delivery), `down('refuse' | '503')` and
 * `up()` (a refused connection stops the listener; it listens again on the same port).
 */

export interface RecordedMeterEvent {
  eventName: string;
  identifier: string;
  customer: string;
  /** payload[value] as a number (a whole number of micro-USD). */
  value: number;
  /** Seconds since the epoch, as sent. */
  timestamp: number;
}

export interface StripeStandinOptions {
  secretKey: string;
  /** The stand-in's clock for the timestamp window (default: the real clock). */
  now?: () => Date;
  knownCustomers?: Set<string>;
}

const PATH = '/v1/billing/meter_events';
const FIELDS = new Set(['event_name', 'payload[stripe_customer_id]', 'payload[value]', 'identifier', 'timestamp', 'expand[]']);
const DAY_S = 86_400;

export class StripeStandin {
  /** Each accepted identifier once, in arrival order. */
  events: RecordedMeterEvent[] = [];
  /** 200 answers per identifier (a redelivery deduplicated by identifier counts here, not in `events`). */
  accepted = new Map<string, number>();
  /** Every request that reached the handler, whatever its answer. */
  requests = 0;
  delayMs = 0;
  private byIdentifier = new Map<string, RecordedMeterEvent>();
  private failures: number[] = [];
  private losses = 0;
  private mode: 'up' | 'refuse' | '503' = 'up';
  private server?: ReturnType<typeof Bun.serve>;
  private port = 0;

  constructor(private options: StripeStandinOptions) {}

  static start(options: StripeStandinOptions): StripeStandin {
    const standin = new StripeStandin(options);
    standin.listen();
    return standin;
  }

  /** Base URL for STRIPE_API_BASE. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The next `n` requests are answered `status` (nothing recorded). */
  failNext(n: number, status: 500 | 429 | 503 = 500) {
    for (let i = 0; i < n; i++) this.failures.push(status);
  }

  /** The next `n` valid events are recorded, then answered 500: Stripe took them, the reply was lost. */
  loseNextAnswers(n: number) {
    this.losses += n;
  }

  down(how: 'refuse' | '503') {
    this.mode = how;
    if (how === 'refuse') this.server?.stop(true);
  }

  up() {
    if (this.mode === 'refuse') this.listen();
    this.mode = 'up';
  }

  stop() {
    this.server?.stop(true);
  }

  /** Σ recorded values per customer. */
  totalsByCustomer(): Map<string, number> {
    const totals = new Map<string, number>();
    for (const e of this.events) totals.set(e.customer, (totals.get(e.customer) ?? 0) + e.value);
    return totals;
  }

  private listen() {
    this.server = Bun.serve({ port: this.port, hostname: '127.0.0.1', fetch: (request) => this.handle(request) });
    this.port = this.server.port!;
  }

  private async handle(request: Request): Promise<Response> {
    this.requests++;
    if (this.delayMs > 0) await Bun.sleep(this.delayMs);
    if (this.mode === '503') return error(503, 'api_error', 'Service unavailable');
    const injected = this.failures.shift();
    if (injected === 429) return error(429, 'invalid_request_error', 'Request rate limit exceeded', { code: 'rate_limit' });
    if (injected !== undefined) return error(injected, 'api_error', 'An unknown error occurred (injected)');

    const url = new URL(request.url);
    if (request.method !== 'POST' || url.pathname !== PATH) return error(404, 'invalid_request_error', `Unrecognized request URL (${request.method}: ${url.pathname})`);
    if (request.headers.get('authorization') !== `Bearer ${this.options.secretKey}`) {
      return error(401, 'invalid_request_error', 'Invalid API Key provided');
    }
    if (!(request.headers.get('content-type') ?? '').startsWith('application/x-www-form-urlencoded')) {
      return error(400, 'invalid_request_error', 'Expected a form-encoded body');
    }
    const form = new URLSearchParams(await request.text());
    const checked = this.check(form);
    if (typeof checked === 'string') return error(400, 'invalid_request_error', checked, { param: checked.split(':')[0]! });
    if (this.options.knownCustomers && !this.options.knownCustomers.has(checked.customer)) {
      return error(400, 'invalid_request_error', `No such customer: '${checked.customer}'`, { code: 'resource_missing', param: 'payload[stripe_customer_id]' });
    }

    const first = this.byIdentifier.get(checked.identifier);
    if (!first) {
      this.byIdentifier.set(checked.identifier, checked);
      this.events.push(checked);
    }
    if (this.losses > 0) {
      this.losses--;
      return error(500, 'api_error', 'An unknown error occurred (answer lost)');
    }
    this.accepted.set(checked.identifier, (this.accepted.get(checked.identifier) ?? 0) + 1);
    const event = first ?? checked;
    return Response.json({
      object: 'billing.meter_event',
      created: Math.floor(Date.now() / 1000),
      event_name: event.eventName,
      identifier: event.identifier,
      livemode: false,
      payload: { stripe_customer_id: event.customer, value: String(event.value) },
      timestamp: event.timestamp,
    });
  }

  /** The event, or the message of a 400 ("param: reason"). */
  private check(form: URLSearchParams): RecordedMeterEvent | string {
    for (const key of form.keys()) if (!FIELDS.has(key)) return `${key}: Received unknown parameter`;
    const eventName = form.get('event_name') ?? '';
    const customer = form.get('payload[stripe_customer_id]') ?? '';
    const value = form.get('payload[value]') ?? '';
    const identifier = form.get('identifier') ?? '';
    const timestamp = form.get('timestamp') ?? '';
    if (!eventName || eventName.length > 100) return 'event_name: required, at most 100 characters';
    if (!customer) return 'payload[stripe_customer_id]: required';
    if (!/^[1-9]\d{0,15}$/.test(value)) return 'payload[value]: must be a positive whole number';
    if (!identifier || identifier.length > 100) return 'identifier: required, at most 100 characters';
    if (!/^\d{1,12}$/.test(timestamp)) return 'timestamp: must be a Unix timestamp in seconds';
    const now = Math.floor((this.options.now?.() ?? new Date()).getTime() / 1000);
    const at = Number(timestamp);
    if (at < now - 35 * DAY_S) return 'timestamp: must be within the past 35 calendar days';
    if (at > now + 300) return 'timestamp: must be at most 5 minutes in the future';
    return { eventName, identifier, customer, value: Number(value), timestamp: at };
  }
}

function error(status: number, type: string, message: string, extra: Record<string, string> = {}): Response {
  return Response.json({ error: { type, message, ...extra } }, { status, headers: { 'request-id': `req_standin_${crypto.randomUUID().slice(0, 8)}` } });
}
