/**
 * A webhook receiver for tests: Bun.serve on 127.0.0.1 that records every request (headers and the
 * exact body bytes) and answers what the test says — 200 by default, any status, or nothing until the
 * test releases it (a hung receiver) — and a bare TCP listener that only counts connections (to prove
 * that nothing at all reached an address). Deliveries are verified with the official library.
 */
import { Webhook } from 'standardwebhooks';

export interface ReceivedRequest {
  /** webhook-id */
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  headers: Record<string, string>;
  path: string;
  method: string;
  /** The Host header the request carried. */
  host: string;
}

type Answer = Response | number | 'hang';

export interface WebhookReceiver {
  url: string;
  port: number;
  received: ReceivedRequest[];
  /** How to answer the next request (called with it and how many came before); default 200. */
  answer: (request: ReceivedRequest, index: number) => Answer | Promise<Answer>;
  /** Answers every hung request (with this status) and resets the hang. */
  release(status?: number): void;
  /** Resolves once `n` requests have arrived in total (bounded by `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** The requests with this webhook-id. */
  withId(id: string): ReceivedRequest[];
  /** The body of each request, verified with `secret` by the official library (throws on any failure). */
  verifyAll(secret: string, requests?: ReceivedRequest[]): unknown[];
  stop(): void;
}

export function verifyWith(secret: string, request: Pick<ReceivedRequest, 'body' | 'headers'>): unknown {
  return new Webhook(secret).verify(request.body, request.headers);
}

export function startReceiver(): WebhookReceiver {
  const received: ReceivedRequest[] = [];
  const hung: Array<(status: number) => void> = [];
  const waiters: Array<() => void> = [];
  const receiver: WebhookReceiver = {
    url: '',
    port: 0,
    received,
    answer: () => 200,
    release(status = 200) {
      for (const wake of hung.splice(0)) wake(status);
    },
    async waitFor(n, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < n) {
        if (Date.now() > deadline) throw new Error(`the receiver got ${received.length} requests, expected ${n}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
      return received.slice(0, n);
    },
    withId: (id) => received.filter((r) => r.id === id),
    verifyAll(secret, requests = received) {
      return requests.map((r) => verifyWith(secret, r));
    },
    stop: () => {
      receiver.release(503);
      server.stop(true);
    },
  };
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const body = await request.text();
      const headers = Object.fromEntries(request.headers);
      const entry: ReceivedRequest = {
        id: headers['webhook-id'] ?? '',
        timestamp: headers['webhook-timestamp'] ?? '',
        signature: headers['webhook-signature'] ?? '',
        body,
        headers,
        path: new URL(request.url).pathname,
        method: request.method,
        host: headers.host ?? '',
      };
      const index = received.length;
      received.push(entry);
      for (const wake of waiters.splice(0)) wake();
      const answer = await receiver.answer(entry, index);
      if (answer === 'hang') return new Response(null, { status: await new Promise<number>((resolve) => hung.push(resolve)) });
      return typeof answer === 'number' ? new Response(answer >= 200 && answer < 300 ? 'ok' : 'no', { status: answer }) : answer;
    },
  });
  receiver.port = server.port!;
  receiver.url = `http://127.0.0.1:${server.port}`;
  return receiver;
}

/** A TCP port that accepts connections and counts them, saying nothing (no request can complete on it). */
export function connectionCounter(): { port: number; connections: () => number; stop(): void } {
  let connections = 0;
  const listener = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(socket) {
        connections++;
        socket.end();
      },
      data() {},
    },
  });
  return { port: listener.port, connections: () => connections, stop: () => listener.stop(true) };
}
