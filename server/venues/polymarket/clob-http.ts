/**
 * HTTP to the Polymarket CLOB: JSON over an injectable fetch, L2 (HMAC) headers on authenticated
 * calls, timestamps from the CLOB's own clock (signatures carry the time and the CLOB refuses skew),
 * and 429 / 5xx / network failures retried with backoff inside one deadline per call.
 */
import { ApiError } from '../../errors.ts';
import { l2Headers } from './l2-auth.ts';
import { errorMessage } from '../../lib/error-message.ts';

export interface ClobAuth {
  apiKey: string;
  secret: string;
  passphrase: string;
  /** POLY_ADDRESS: the address the API key belongs to. */
  address: string;
}

export interface ClobHttpOptions {
  baseUrl: string;
  fetch?: typeof fetch;
  now?: () => number;
  /** The whole budget of one call, retries included. */
  timeoutMs: number;
  /** Pause before a retry: attempt 1, 2, … → ms (default 100·2^(n−1), capped at 2 s). */
  backoffMs?: (attempt: number) => number;
}

/** A CLOB answer that is not 2xx (after retries): its status and parsed body. */
export class ClobError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly path: string,
  ) {
    super(`CLOB ${path} answered ${status}: ${clobMessage(body)}`);
  }
}

/** The CLOB's error text, wherever this endpoint put it. */
export function clobMessage(body: unknown): string {
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    return String(b.errorMsg || b.error || b.message || JSON.stringify(body)).slice(0, 300);
  }
  return String(body ?? '').slice(0, 300);
}

const RETRYABLE = (status: number) => status === 429 || status >= 500;

export class ClobHttp {
  private fetch: typeof fetch;
  private now: () => number;
  /** CLOB clock minus ours, in seconds; learned once from GET /time. */
  private skewSeconds?: Promise<number>;

  constructor(private options: ClobHttpOptions) {
    this.fetch = options.fetch ?? fetch;
    this.now = options.now ?? Date.now;
  }

  private async serverSeconds(): Promise<number> {
    this.skewSeconds ??= this.call('GET', '/time', {}).then(
      (t) => Number(t) - Math.floor(this.now() / 1000),
      (error) => {
        this.skewSeconds = undefined;
        throw error;
      },
    );
    return Math.floor(this.now() / 1000) + (await this.skewSeconds);
  }

  async call<T = unknown>(method: string, path: string, request: { query?: Record<string, string>; body?: unknown; auth?: ClobAuth }): Promise<T> {
    const deadline = this.now() + this.options.timeoutMs;
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    const query = request.query ? `?${new URLSearchParams(request.query)}` : '';
    for (let attempt = 1; ; attempt++) {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (body !== undefined) headers['content-type'] = 'application/json';
      if (request.auth) {
        const { address, ...credentials } = request.auth;
        // The signature covers the path without its query string, and the exact body bytes sent.
        Object.assign(headers, l2Headers(credentials, address, await this.serverSeconds(), method, path, body));
      }
      const remaining = deadline - this.now();
      let response: Response | undefined;
      let failure: unknown;
      try {
        response = await this.fetch(`${this.options.baseUrl}${path}${query}`, { method, headers, body, signal: AbortSignal.timeout(Math.max(1, remaining)) });
      } catch (error) {
        failure = error;
      }
      if (response && !RETRYABLE(response.status)) {
        const text = await response.text();
        const parsed = text ? safeJson(text) : null;
        if (response.ok) return parsed as T;
        throw new ClobError(response.status, parsed, path);
      }
      const retryAfter = Number(response?.headers.get('retry-after')) * 1000 || 0;
      const pause = Math.max(retryAfter, this.options.backoffMs?.(attempt) ?? Math.min(2000, 100 * 2 ** (attempt - 1)));
      if (this.now() + pause >= deadline) {
        const why = response ? `answered ${response.status}` : `failed (${errorMessage(failure)})`;
        throw new ApiError('VENUE_UNAVAILABLE', `The venue ${why} for ${method} ${path}; retry shortly`, { cause: failure });
      }
      await Bun.sleep(pause);
    }
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
