/**
 * Where stream messages go: an SSE response body (REST) or a queue that a tRPC subscription drains.
 *
 * A message is built once for all its subscribers: its SSE frame (`id: …\ndata: …\n\n`) is encoded
 * on first use and the same bytes are written to every SSE subscriber; tRPC subscribers get the same
 * data object (tRPC serializes it for each of them: its SSE writer is its own). Its numbers are
 * rounded by the API's rule once, when the message is built.
 *
 * Slow subscribers never block the others or grow memory without bound. An SSE body is a Bun
 * "direct" stream: a write Bun cannot pass to the socket at once answers a promise (measured: the
 * plain ReadableStream's desiredSize never shows a stalled socket, Bun drains it into its own buffer),
 * and until that promise settles further frames wait in this sink's queue, up to `maxQueuedBytes`.
 * Past that the subscriber is dropped with a final comment; the frames it misses are what a resume
 * with Last-Event-ID sends again. A tRPC queue is bounded the same way, in messages.
 */
import { ApiError, toPublicError, type PublicError } from '../errors.ts';
import { roundAnswerNumbers } from '../lib/answer-numbers.ts';

const encoder = new TextEncoder();

export class StreamMessage<T = unknown> {
  private encoded?: Uint8Array;
  /** The message's data, its numbers rounded by the API's rule (lib/answer-numbers.ts) once, here, for every subscriber. */
  readonly data: T;
  constructor(
    readonly id: string,
    data: T,
    /** An SSE event name (`event:`), for messages that are not plain data (e.g. `ready`). */
    readonly event?: string,
  ) {
    this.data = roundAnswerNumbers(data);
  }

  /** The SSE frame, encoded once however many subscribers get it. */
  frame(): Uint8Array {
    this.encoded ??= encoder.encode(`${this.event ? `event: ${this.event}\n` : ''}id: ${this.id}\ndata: ${JSON.stringify(this.data)}\n\n`);
    return this.encoded;
  }
}

export const PING_FRAME = encoder.encode(': ping\n\n');
/**
 * The first bytes of every SSE response, queued before anything else: Bun sends the headers with the
 * first write, so a client resuming at the latest id (nothing to catch up) would otherwise see nothing
 * until the first heartbeat, seconds later, and take the stream for dead. `retry:` also tells an
 * EventSource how long to wait before it reconnects.
 */
export const OPEN_FRAME = encoder.encode(': connected\nretry: 3000\n\n');

export interface Sink {
  readonly closed: boolean;
  send(message: StreamMessage): void;
  /** The end of a batch of sends (SSE: flush the socket once, not per message). */
  flush(): void;
  /** A comment heartbeat (SSE only; tRPC has its own). */
  ping(): void;
  /** Ends the stream; with an error, the client is told why first (an SSE `error` event, a tRPC error). */
  close(error?: ApiError): void;
  /** Runs once when the stream ends, whoever ended it (client gone, server, error). */
  onClose(listener: () => void): void;
  /** Resolves when everything sent so far has been handed to the socket (or the sink closed). */
  drained(): Promise<void>;
  /** Whether senders that can wait (a catch-up) should wait for drained() before sending more. */
  readonly backedUp: boolean;
}

/** The part of Bun's direct-stream controller used here. */
interface DirectController {
  write(chunk: Uint8Array): number | Promise<number>;
  flush(): number | Promise<number> | void;
  close(): void;
}

abstract class BaseSink {
  closed = false;
  private listeners: Array<() => void> = [];

  onClose(listener: () => void) {
    if (this.closed) listener();
    else this.listeners.push(listener);
  }

  /** Marks the sink closed and tells the listeners (once). */
  protected ended() {
    if (this.closed) return;
    this.closed = true;
    for (const listener of this.listeners.splice(0)) {
      try {
        listener();
      } catch {
        // A listener's failure must not keep the others from running.
      }
    }
  }
}

export class SseSink extends BaseSink implements Sink {
  readonly body: ReadableStream<Uint8Array>;
  private controller?: DirectController;
  /** Frames waiting for the socket (shared arrays: the queue costs pointers, its bound is in bytes). */
  private queue: Uint8Array[] = [];
  private queuedBytes = 0;
  /** A write answered a promise: the socket is full until it settles. */
  private blocked = false;
  private unflushed = false;
  /** Bytes handed to Bun so far. */
  bytesWritten = 0;
  private finish?: () => void;
  /** Set when the stream ended before Bun read its body: what it still delivers. */
  private finalFrames?: Uint8Array[];
  private drainWaiters: Array<() => void> = [];

  constructor(
    private readonly maxQueuedBytes: number,
    private readonly requestId: string,
  ) {
    super();
    this.queue.push(OPEN_FRAME);
    this.queuedBytes = OPEN_FRAME.length;
    this.body = new ReadableStream({
      type: 'direct',
      pull: (controller: DirectController) => {
        if (this.finalFrames) {
          // Closed before Bun started reading: deliver the last frames (e.g. the error event), then end.
          for (const frame of this.finalFrames) controller.write(frame);
          controller.flush();
          controller.close();
          return;
        }
        if (this.closed) return;
        this.controller = controller;
        this.pump();
        this.flush();
        // The body stays open until the stream ends (a direct stream ends when pull settles).
        return new Promise<void>((resolve) => (this.finish = resolve));
      },
      cancel: () => this.ended(),
    } as unknown as UnderlyingDefaultSource<Uint8Array>);
  }

  send(message: StreamMessage) {
    this.put(message.frame());
  }

  get backedUp(): boolean {
    return this.queuedBytes > this.maxQueuedBytes / 4;
  }

  ping() {
    this.put(PING_FRAME);
    this.flush();
  }

  flush() {
    if (!this.unflushed || !this.controller || this.closed) return;
    this.unflushed = false;
    try {
      this.controller.flush();
    } catch {
      this.ended();
    }
  }

  drained(): Promise<void> {
    if (this.closed || (!this.blocked && this.queue.length === 0 && this.controller)) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  close(error?: ApiError) {
    if (this.closed) return;
    if (error) this.finalFrame(`event: error\ndata: ${JSON.stringify(publicBody(error, this.requestId))}\n\n`);
    this.shut();
  }

  /** Ends the stream with a comment saying why (the client reconnects with Last-Event-ID). */
  closeWithComment(text: string) {
    if (this.closed) return;
    this.finalFrame(`: ${text.replace(/[\r\n]+/g, ' ')}\n\n`);
    this.shut();
  }

  protected override ended() {
    if (this.closed) return;
    this.queue = [];
    this.queuedBytes = 0;
    super.ended();
    this.finish?.();
    for (const wake of this.drainWaiters.splice(0)) wake();
  }

  private put(frame: Uint8Array) {
    if (this.closed) return;
    if (this.controller && !this.blocked && this.queue.length === 0) {
      this.write(frame);
      return;
    }
    if (this.queuedBytes + frame.length > this.maxQueuedBytes) {
      this.closeWithComment(`closed: this client read too slowly (more than ${this.maxQueuedBytes} bytes waiting); reconnect with Last-Event-ID`);
      return;
    }
    this.queue.push(frame);
    this.queuedBytes += frame.length;
  }

  private write(frame: Uint8Array) {
    let written: number | Promise<number>;
    try {
      written = this.controller!.write(frame);
    } catch {
      this.ended();
      return;
    }
    this.unflushed = true;
    this.bytesWritten += frame.length;
    if (written instanceof Promise) {
      this.blocked = true;
      written.then(
        () => {
          this.blocked = false;
          this.pump();
          this.flush();
        },
        () => this.ended(),
      );
    }
  }

  private pump() {
    while (!this.closed && this.controller && !this.blocked && this.queue.length > 0) {
      const frame = this.queue.shift()!;
      this.queuedBytes -= frame.length;
      this.write(frame);
    }
    if (!this.blocked && this.queue.length === 0) for (const wake of this.drainWaiters.splice(0)) wake();
  }

  /** The last frame, written past the queue (the queue is dropped: this sink ends now). */
  private finalFrame(text: string) {
    this.queue = [];
    this.queuedBytes = 0;
    if (!this.controller) {
      // Bun has not started reading the body: the frame is all it will read.
      this.queue.push(encoder.encode(text));
      return;
    }
    try {
      this.controller.write(encoder.encode(text));
      this.controller.flush();
    } catch {
      // The client is gone already.
    }
  }

  private shut() {
    const controller = this.controller;
    if (!controller) {
      this.finalFrames = this.queue;
      this.queue = [];
      this.ended();
      return;
    }
    this.ended();
    try {
      controller.close();
    } catch {
      // Already closed by the client.
    }
  }
}

function publicBody(error: ApiError, requestId: string): PublicError {
  return toPublicError(error, requestId);
}

/**
 * A subscription's messages: bounded (`maxMessages`), drained by an async generator (the tRPC
 * subscription sends each as `tracked(id, data)`, procedures/open-stream.ts, so tRPC's SSE writer
 * sends each `id` and a reconnecting httpSubscriptionLink sends the last one back as `lastEventId`).
 */
export class QueueSink extends BaseSink implements Sink {
  private items: StreamMessage[] = [];
  private wake?: () => void;
  private drainWaiters: Array<() => void> = [];
  private error?: ApiError;

  constructor(private readonly maxMessages: number) {
    super();
  }

  send(message: StreamMessage) {
    if (this.closed) return;
    if (this.items.length >= this.maxMessages) {
      this.close(new ApiError('SERVICE_UNAVAILABLE', `This subscriber read too slowly (more than ${this.maxMessages} messages waiting); resubscribe with lastEventId`));
      return;
    }
    this.items.push(message);
    this.notify();
  }

  flush() {}
  ping() {}

  get backedUp(): boolean {
    return this.items.length > this.maxMessages / 4;
  }

  drained(): Promise<void> {
    if (this.closed || this.items.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  close(error?: ApiError) {
    if (this.closed) return;
    this.error = error;
    // The generator ends after the queued messages (or at once when the consumer is gone).
    this.ended();
    this.notify();
  }

  /** The subscription's messages until the sink closes (or `signal` aborts: the client left). */
  async *messages(signal: AbortSignal | undefined): AsyncGenerator<StreamMessage> {
    const onAbort = () => this.close();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        const next = this.items.shift();
        if (next) {
          yield next;
          continue;
        }
        for (const wake of this.drainWaiters.splice(0)) wake();
        if (this.closed || signal?.aborted) {
          if (this.error && !signal?.aborted) throw this.error;
          return;
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.items = [];
      this.ended();
      for (const wake of this.drainWaiters.splice(0)) wake();
    }
  }

  private notify() {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
