/**
 * The per-request context, built once per HTTP request by the transport (REST bridge or /trpc) and
 * shared by every procedure call of that request (a tRPC batch is one request).
 */
import type { KeyIdentity } from '../../accounts/api-keys.ts';
import type { Session } from '../../auth/sessions.ts';
import type { ApiError } from '../../errors.ts';
import type { Services } from '../services.ts';

export interface RequestContext {
  services: Services;
  transport: 'rest' | 'trpc';
  method: string;
  /** The URL path, without the query string. */
  path: string;
  headers: Headers;
  /** The query string's parameters, parsed on first use. */
  query: () => URLSearchParams;
  /** The client's address (see TRUST_PROXY); computed on first use (only per-IP limits need it). */
  clientIp: () => string;
  requestId: string;
  /**
   * Headers any middleware or procedure adds to the response (RateLimit-*, Retry-After, …), by their
   * canonical name. A plain object: the response is built with every header at once.
   */
  resHeaders: Record<string, string>;
  /** What this request was billed; `billable` is set by billed procedures even when they fail. */
  billing: { billable: boolean; chargedMicros: number };
  /** Fields for the request log line, filled in as the request is understood. */
  logFields: { accountId?: string; route?: string };
  /** What this request has learnt about its key, shared by the calls of a tRPC batch (set on first use). */
  keyCheck?: KeyCheck;
  /** The session its cookie names, looked up once per HTTP request (procedures/session-gate.ts). */
  session?: Promise<Session | null>;
}

/** See procedures.ts: a key is looked up, and a failed authentication counted, once per HTTP request. */
export interface KeyCheck {
  /** The failed authentication was counted against the client address (once per request). */
  counted?: boolean;
  /** The billed key's failure (401), answered again to the batch's other calls without a lookup. */
  failure?: ApiError;
  /** Settles once the batch's first billed call knows whether its key is good: the others wait for it. */
  known?: Promise<void>;
  /** The key looked up for a refusal (a 400 or 429 is answered 401 if the key is not valid). */
  lookup?: Promise<KeyIdentity>;
}

export interface RequestInfo {
  transport: RequestContext['transport'];
  request: Request;
  /** The request target's path and query string (without `?`), see http/request-target.ts. */
  path: string;
  search: string;
  clientIp: () => string;
  requestId: string;
}

export function createRequestContext(services: Services, info: RequestInfo, logFields: RequestContext['logFields']): RequestContext {
  let query: URLSearchParams | undefined;
  return {
    services,
    transport: info.transport,
    method: info.request.method,
    path: info.path,
    headers: info.request.headers,
    query: () => (query ??= new URLSearchParams(info.search)),
    clientIp: info.clientIp,
    requestId: info.requestId,
    resHeaders: {},
    billing: { billable: false, chargedMicros: 0 },
    logFields,
  };
}
