/**
 * @pre-ipo/client: the typed tRPC client of the Pre-IPO API.
 *
 *     import { createClient, PreIpoApiError, withCallInfo } from '@pre-ipo/client';
 *     const api = createClient({ baseUrl: 'https://api.example.com', apiKey, userId: 'alice' });
 *     const events = await api.tradingMarket.events.query();
 *
 * The REST client is @pre-ipo/client/rest. See README.md.
 */
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from './app-router.js';

export { createClient, type ClientOptions, type PreIpoClient } from './create-client.js';
export { withCallInfo, type CallInfo, type WithCallInfo } from './call-info.js';
export { PreIpoApiError, isPreIpoApiError, type ApiErrorBody, type ApiErrorCode } from './errors.js';
export type { AppRouter, ErrorShape } from './app-router.js';

/** Every procedure's input, by path: `RouterInputs['trading']['buy']`. */
export type RouterInputs = inferRouterInputs<AppRouter>;
/** Every procedure's output (as JSON delivers it), by path: `RouterOutputs['billing']['get']`. */
export type RouterOutputs = inferRouterOutputs<AppRouter>;
