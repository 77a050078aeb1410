/**
 * createClient: the typed tRPC client of the service, with an API key, a default trading user,
 * batching, subscriptions, typed errors and each call's cost and request id.
 *
 * Links, in order:
 *   callInfo       reads each call's request id and cost, turns the service's errors into PreIpoApiError
 *   subscriptions  → httpSubscriptionLink over a fetch-based EventSource (it can send the API key as a
 *                    header; a browser's EventSource cannot, and a key in a URL ends up in logs)
 *   a call with its own `userId` input → a batch without the x-user-id header (the input names the
 *                    user; the service refuses a header and an input that disagree)
 *   any other call → a batch with x-user-id set to the client's default user
 */
import { createTRPCClient, httpBatchLink, httpLink, httpSubscriptionLink, splitLink, type Operation, type TRPCClient, type TRPCLink } from '@trpc/client';
import { observable } from '@trpc/server/observable';
import { FetchEventSource } from '../../server/streams/sse-client.ts';
import type { AppRouter } from './app-router.js';
import { BatchPositions, CALL_INFO_RECEIVER, readCallInfo, type CallInfo, type CallInfoReceiver } from './call-info.js';
import { toApiError } from './errors.js';

export interface ClientOptions {
  /** The service's origin, e.g. `https://api.example.com` (the client adds `/trpc`). */
  baseUrl: string;
  /** An API key (`pipo_…`), sent as x-api-key. */
  apiKey?: string;
  /**
   * The trading user the trading and portfolio routes act for, sent as x-user-id. A call names
   * another one with its own `userId` input member.
   */
  userId?: string;
  /** Batch the calls made in the same tick into one HTTP request (default: true). */
  batch?: boolean;
  /** Called once per query or mutation with its request id and cost (for logs or metering). */
  onCall?: (info: CallInfo) => void;
  /** Headers sent on every request (besides x-api-key and x-user-id). */
  headers?: Record<string, string>;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** The longest URL a batch of queries may have before it is split (default 4000). */
  maxURLLength?: number;
}

export type PreIpoClient = TRPCClient<AppRouter>;

/** The service answers at most this many calls per batch (INPUT_LIMITS.maxBatchCalls in the document's x-request-limits). */
const MAX_BATCH_CALLS = 20;

export function createClient(options: ClientOptions): PreIpoClient {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/trpc`;
  const positions = new BatchPositions();
  const headers = (withUser: boolean): Record<string, string> => ({
    ...options.headers,
    ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}),
    ...(withUser && options.userId ? { 'x-user-id': options.userId } : {}),
  });
  const fetchImpl = options.fetch;
  const transport = (withUser: boolean): TRPCLink<AppRouter> =>
    options.batch === false
      ? httpLink({ url, fetch: fetchImpl, headers: ({ op }) => (positions.recordBatch([op]), headers(withUser)) })
      : httpBatchLink({
          url,
          fetch: fetchImpl,
          maxURLLength: options.maxURLLength ?? 4000,
          maxItems: MAX_BATCH_CALLS,
          headers: ({ opList }) => (positions.recordBatch(opList), headers(withUser)),
        });

  return createTRPCClient<AppRouter>({
    links: [
      callInfoLink(positions, options.onCall),
      splitLink({
        condition: (op) => op.type === 'subscription',
        true: httpSubscriptionLink({
          url,
          EventSource: FetchEventSource,
          eventSourceOptions: ({ op }) => ({ headers: headers(!namesItsUser(op)), fetch: fetchImpl }),
        }),
        false: splitLink({ condition: namesItsUser, true: transport(false), false: transport(true) }),
      }),
    ],
  });
}

/** A call whose input has its own `userId` (every route that acts for a trading user takes one). */
function namesItsUser(op: Operation): boolean {
  const input = op.input as { userId?: unknown } | null | undefined;
  return typeof input === 'object' && input !== null && input.userId !== undefined;
}

/** Reports each query's and mutation's call info (to withCallInfo and onCall) and types the service's errors (subscriptions' too). */
function callInfoLink(positions: BatchPositions, onCall: ClientOptions['onCall']): TRPCLink<AppRouter> {
  return () =>
    ({ op, next }) =>
      observable((observer) => {
        if (op.type === 'subscription') {
          // A stream has no per-call cost (it is billed per minute held); its errors are typed all the same.
          return next(op).subscribe({
            next: (envelope) => observer.next(envelope),
            error: (error) => observer.error(toApiError(error, readCallInfo(op, false, undefined, undefined)) as typeof error),
            complete: () => observer.complete(),
          });
        }
        const receiver = op.context[CALL_INFO_RECEIVER] as CallInfoReceiver | undefined;
        const report = (ok: boolean, response: unknown): CallInfo => {
          const info = readCallInfo(op, ok, response, positions.take(op.id));
          receiver?.(info);
          onCall?.(info);
          return info;
        };
        let reported = false;
        const subscription = next(op).subscribe({
          next(envelope) {
            if (!reported) {
              reported = true;
              report(true, envelope.context?.response);
            }
            observer.next(envelope);
          },
          error(error) {
            const info = reported ? undefined : report(false, error.meta?.response);
            reported = true;
            observer.error((info ? toApiError(error, info) : error) as typeof error);
          },
          complete() {
            observer.complete();
          },
        });
        return () => {
          positions.take(op.id);
          subscription.unsubscribe();
        };
      });
}
