/**
 * The dashboard's one way to the service: the typed tRPC client on the same origin. The session
 * cookie travels by itself (same origin); `import type` keeps every line of server code out of the
 * bundle — only the router's types are used.
 */
import { createTRPCClient, httpBatchLink, httpLink, TRPCClientError } from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../routers/index.ts';

export const api = createTRPCClient<AppRouter>({
  links: [httpBatchLink({ url: '/trpc', maxURLLength: 2000 })],
});

type Client = ReturnType<typeof createTRPCClient<AppRouter>>;
const userClients = new Map<string, Client>();

/**
 * The client acting for one trading user of the account: x-user-id on every request. One client per
 * user, so a batch never mixes two users' calls under one header.
 */
export function forUser(userId: string): Client {
  let client = userClients.get(userId);
  if (!client) {
    client = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: '/trpc', maxURLLength: 2000, headers: { 'x-user-id': userId } })] });
    userClients.set(userId, client);
  }
  return client;
}

/**
 * One sale, on a request of its own with its own Idempotency-Key: a retry of the same confirmation
 * (a lost answer, a double click) is answered from the record of the first, never sold twice.
 */
export function saleClient(userId: string, idempotencyKey: string): Client {
  return createTRPCClient<AppRouter>({ links: [httpLink({ url: '/trpc', headers: { 'x-user-id': userId, 'idempotency-key': idempotencyKey } })] });
}

export type Outputs = inferRouterOutputs<AppRouter>;
export type Inputs = inferRouterInputs<AppRouter>;

/** The public error body the service puts in every tRPC error's `data.api`. */
export interface ApiProblem {
  code: string;
  message: string;
  status: number;
  requestId: string | null;
}

/** Any thrown value → what the page shows: the service's words and request id, or a network failure. */
export function problemOf(error: unknown): ApiProblem {
  if (error instanceof TRPCClientError) {
    const data = (error as TRPCClientError<AppRouter>).data;
    if (data?.api) return { code: data.api.code, message: data.api.message, status: data.api.status, requestId: data.api.requestId };
    // No JSON body from the service (offline, a proxy page, …).
    return { code: 'NETWORK_ERROR', message: error.message || 'The service could not be reached', status: data?.httpStatus ?? 0, requestId: null };
  }
  if (error instanceof Error) return { code: 'CLIENT_ERROR', message: error.message, status: 0, requestId: null };
  return { code: 'CLIENT_ERROR', message: String(error), status: 0, requestId: null };
}

/** A signed-out (or expired) session: the page shows sign-in instead of an error. */
export function isUnauthorized(error: unknown): boolean {
  if (!(error instanceof TRPCClientError)) return false;
  const data = (error as TRPCClientError<AppRouter>).data;
  return data?.api?.code === 'UNAUTHORIZED' || data?.httpStatus === 401;
}
