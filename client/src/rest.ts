/**
 * @pre-ipo/client/rest: the REST API (/api) for callers that do not use tRPC, as an openapi-fetch
 * client typed by the service's OpenAPI document (./generated/openapi.ts, generated from
 * /openapi.json by openapi-typescript). Paths, parameters (headers such as x-user-id and
 * Idempotency-Key included), bodies, answers and error bodies are all typed.
 *
 *     const api = createRestClient({ baseUrl: 'https://api.example.com', apiKey });
 *     const { data, error, response } = await api.GET('/trading/quote', { params: { query: { eventSlug, side: 'LONG', amount: 100 } } });
 *     const { cost, requestId } = callInfoOf(response);
 */
import createFetchClient, { type Client } from 'openapi-fetch';
import { MICROS_PER_USD, usdToMicros } from './call-info.js';
import type { components, operations, paths } from './generated/openapi.js';

export type { components, operations, paths };

/** The error body of every failed request: `{code, message, status, requestId}`. */
export type RestApiError = components['schemas']['ApiError'];

export interface RestClientOptions {
  /** The service's origin, e.g. `https://api.example.com` (the client adds `/api`). */
  baseUrl: string;
  /** An API key (`pipo_…`), sent as x-api-key. */
  apiKey?: string;
  /** Headers sent on every request. */
  headers?: Record<string, string>;
  /** The fetch to use (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

export type RestClient = Client<paths>;

export function createRestClient(options: RestClientOptions): RestClient {
  return createFetchClient<paths>({
    baseUrl: `${options.baseUrl.replace(/\/+$/, '')}/api`,
    headers: { ...options.headers, ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}) },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

export interface RestCallInfo {
  /** X-Request-Id (null when the answer had none). */
  requestId: string | null;
  /** What the request cost in USD (X-Request-Cost-USD; 0 when unbilled or refunded). */
  cost: number | null;
  /** The same in micro-USD, an exact integer. */
  costMicros: number | null;
}

/** A REST answer's request id and cost, from its headers. */
export function callInfoOf(response: Response): RestCallInfo {
  const header = response.headers.get('x-request-cost-usd');
  const micros = header === null ? 0 : usdToMicros(header);
  return { requestId: response.headers.get('x-request-id'), cost: micros === null ? null : micros / MICROS_PER_USD, costMicros: micros };
}
