/**
 * A server-sent events client for runtimes without EventSource (Bun has none), used by the tests and
 * the stream benchmark: an incremental parser of the `text/event-stream` format (WHATWG HTML
 * §9.2.6), and `FetchEventSource`, an EventSource work-alike over fetch that can also send headers
 * (x-api-key, x-user-id) — what tRPC's httpSubscriptionLink takes as its `EventSource` option.
 * Like a browser's, it reconnects after a dropped connection with the `Last-Event-ID` of the last
 * message, and gives up (CLOSED) when an answer is not a 200 event stream.
 */

export interface SseEvent {
  /** The event type: `message` unless the stream named one. */
  type: string;
  data: string;
  /** The stream's last event id at dispatch (the `id:` of this message, or an earlier one). */
  lastEventId: string;
  /** Whether this block set an id itself. */
  hasId: boolean;
}

export type SseItem = { kind: 'event'; event: SseEvent } | { kind: 'comment'; text: string } | { kind: 'id'; lastEventId: string } | { kind: 'retry'; ms: number };

/** Feeds text, calls `emit` for each complete event, comment, id-only block and retry field. */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private type = '';
  private sawData = false;
  private sawId = false;
  lastEventId = '';

  constructor(private readonly emit: (item: SseItem) => void) {}

  push(text: string) {
    this.buffer += text;
    let start = 0;
    for (;;) {
      const newline = this.buffer.slice(start).search(/\r\n|\r|\n/);
      if (newline < 0) break;
      const end = start + newline;
      const line = this.buffer.slice(start, end);
      start = end + (this.buffer.startsWith('\r\n', end) ? 2 : 1);
      this.line(line);
    }
    this.buffer = this.buffer.slice(start);
  }

  private line(line: string) {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return this.emit({ kind: 'comment', text: line.slice(1).trimStart() });
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      this.data.push(value);
      this.sawData = true;
    } else if (field === 'event') this.type = value;
    else if (field === 'id') {
      if (!value.includes('\0')) {
        this.lastEventId = value;
        this.sawId = true;
      }
    } else if (field === 'retry' && /^\d+$/.test(value)) this.emit({ kind: 'retry', ms: Number(value) });
  }

  private dispatch() {
    const { sawData, sawId } = this;
    const event: SseEvent = { type: this.type || 'message', data: this.data.join('\n'), lastEventId: this.lastEventId, hasId: sawId };
    this.data = [];
    this.type = '';
    this.sawData = false;
    this.sawId = false;
    if (sawData) this.emit({ kind: 'event', event });
    else if (sawId) this.emit({ kind: 'id', lastEventId: this.lastEventId });
  }
}

type Listener = (event: { type: string; data?: string; lastEventId?: string }) => void;

export interface FetchEventSourceInit {
  headers?: Record<string, string>;
  /** fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Reconnection delay (default 1 s, or what the stream's `retry:` says). */
  retryMs?: number;
  withCredentials?: boolean;
}

/** EventSource over fetch, with headers. */
export class FetchEventSource {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSED = 2;
  readonly CONNECTING = 0;
  readonly OPEN = 1;
  readonly CLOSED = 2;
  readyState = 0;
  readonly url: string;
  readonly withCredentials: boolean;
  lastEventId = '';
  /** Connections made so far (tests count reconnects). */
  connections = 0;
  private listeners = new Map<string, Set<Listener>>();
  private abort?: AbortController;
  private retryMs: number;

  constructor(
    url: string | URL,
    private readonly init: FetchEventSourceInit = {},
  ) {
    this.url = String(url);
    this.withCredentials = !!init.withCredentials;
    this.retryMs = init.retryMs ?? 1000;
    queueMicrotask(() => void this.connect());
  }

  addEventListener(type: string, listener: Listener) {
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    set.add(listener);
  }

  removeEventListener(type: string, listener: Listener) {
    this.listeners.get(type)?.delete(listener);
  }

  close() {
    this.readyState = 2;
    this.abort?.abort();
  }

  /** Test hook: the connection drops as a network failure would (the source reconnects). */
  dropConnection() {
    this.abort?.abort();
  }

  private fire(type: string, event: { type: string; data?: string; lastEventId?: string }) {
    for (const listener of this.listeners.get(type) ?? []) listener(event);
  }

  private async connect() {
    if (this.readyState === 2) return;
    const abort = (this.abort = new AbortController());
    this.connections++;
    const headers: Record<string, string> = { accept: 'text/event-stream', 'cache-control': 'no-cache', ...this.init.headers };
    if (this.lastEventId) headers['last-event-id'] = this.lastEventId;
    let response: Response;
    try {
      response = await (this.init.fetch ?? fetch)(this.url, { headers, signal: abort.signal });
    } catch {
      return this.reconnect();
    }
    if (response.status !== 200 || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
      await response.body?.cancel().catch(() => undefined);
      this.readyState = 2;
      this.fire('error', { type: 'error', data: undefined });
      return;
    }
    this.readyState = 1;
    this.fire('open', { type: 'open' });
    const parser = new SseParser((item) => {
      if (item.kind === 'event') {
        this.lastEventId = item.event.lastEventId;
        this.fire(item.event.type, { type: item.event.type, data: item.event.data, lastEventId: item.event.lastEventId });
      } else if (item.kind === 'id') this.lastEventId = item.lastEventId;
      else if (item.kind === 'retry') this.retryMs = item.ms;
    });
    parser.lastEventId = this.lastEventId;
    const decoder = new TextDecoder();
    try {
      const reader = response.body!.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.push(decoder.decode(value, { stream: true }));
      }
    } catch {
      // Dropped: reconnect below.
    }
    this.reconnect();
  }

  private reconnect() {
    if (this.readyState === 2) return;
    this.readyState = 0;
    this.fire('error', { type: 'error' });
    setTimeout(() => void this.connect(), this.retryMs);
  }
}
