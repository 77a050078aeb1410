/**
 * /trpc requests the fast path (trpc-rpc.ts) leaves to tRPC: subscriptions, streamed batches (answered
 * whole once settled, so their cost header is true: settledStream), HEAD,
 * unknown procedures, a method that does not fit. tRPC's own fetch adapter over the same router and
 * the same per-request context as /api.
 * Errors carry our four public fields in `error.data.api` (see errorFormatter in procedures/trpc.ts).
 *
 * Before tRPC sees a request, the endpoint holds it to the same input rules as /api:
 * - at most MAX_BATCH_CALLS calls (400 before any call runs; `%2C` counts, tRPC decodes the path);
 * - a body of at most the body limit (413 before reading further, also without Content-Length);
 * - input that is malformed JSON, not JSON (Content-Type), nested deeper than MAX_JSON_DEPTH, or a
 *   batch input that is not an object is not answered here: tRPC parses the body itself, so it is
 *   handed a well-formed body whose every call's input is the deferred-error marker, and each
 *   procedure answers it after authentication (procedures/deferred-input.ts).
 * A well-formed request is passed on as it is (a POST is rebuilt around the text already read).
 */
import { publicErrorOf, trpcCodeOf } from '../procedures/trpc-errors.ts';
import type { AnyTRPCRouter } from '@trpc/server';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { ApiError, type PublicError } from '../../errors.ts';
import type { RequestContext } from '../procedures/context.ts';
import { recordRequestId, trpcErrorShape } from '../procedures/trpc.ts';
import { readBodyText } from './body-reader.ts';
import { deferredInput, type DeferredReason } from '../procedures/deferred-input.ts';
import { readJsonInput, type JsonInput } from './json-input.ts';
import { assertBatchSize, trpcCallCount } from './input-checks.ts';
import { MAX_BATCH_CALLS } from '../../lib/input-limits.ts';

export const TRPC_PREFIX = '/trpc';

export function createTrpcEndpoint(router: AnyTRPCRouter) {
  return async function handle(request: Request, ctx: RequestContext, maxBodyBytes: number) {
    const failures: Array<{ body: PublicError; cause: unknown }> = [];
    let req: Request;
    try {
      const calls = trpcCallCount(ctx.path.slice(TRPC_PREFIX.length + 1));
      assertBatchSize(calls);
      req = await withCheckedInput(request, ctx, calls, maxBodyBytes);
    } catch (cause) {
      const body = publicErrorOf(cause, ctx.requestId);
      failures.push({ body, cause });
      const trpcCode = trpcCodeOf(cause);
      return { response: Response.json({ error: trpcErrorShape(body, trpcCode) }, { status: body.status }), failures };
    }
    const response = await fetchRequestHandler({
      endpoint: TRPC_PREFIX,
      req,
      router,
      createContext: () => ctx,
      maxBatchSize: MAX_BATCH_CALLS,
      onError: ({ error }) => {
        recordRequestId(error, ctx.requestId);
        failures.push({ body: publicErrorOf(error, ctx.requestId), cause: error });
      },
    });
    // tRPC answers errors raised before the context (mixed procedure types, a malformed path…)
    // without a content type; every answer here is JSON.
    if (response.body && !response.headers.has('content-type')) response.headers.set('content-type', 'application/json');
    return { response: await settledStream(response), failures };
  };
}

/**
 * A streamed batch (`trpc-accept: application/jsonl`) is answered once every call has settled, in
 * the same jsonl framing: only then is X-Request-Cost-USD what the calls cost (headers sent before
 * the calls ran could only say 0 for a charged request), refunds of failed calls included. Our calls
 * are short, so streaming them bought a client little; a wrong cost header cost it the truth.
 */
async function settledStream(response: Response): Promise<Response> {
  if (response.headers.get('transfer-encoding') !== 'chunked' || !response.body) return response;
  const body = await response.arrayBuffer();
  const headers = new Headers(response.headers);
  headers.delete('transfer-encoding');
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}

/** The request tRPC gets: the same one, or one whose inputs are the deferred-error marker. */
async function withCheckedInput(request: Request, ctx: RequestContext, calls: number, maxBodyBytes: number): Promise<Request> {
  const isBatch = ctx.query().get('batch') === '1';
  // tRPC itself refuses a batch whose input is not an object, but before authentication.
  const batchReason: DeferredReason | undefined = isBatch ? 'batch-not-an-object' : undefined;
  const markers = (reason: DeferredReason) => JSON.stringify(isBatch ? Object.fromEntries(Array.from({ length: calls }, (_, i) => [i, deferredInput(reason)])) : deferredInput(reason));

  if (request.method === 'GET' || request.method === 'HEAD') {
    const input = ctx.query().get('input');
    // (A blank `input` is not "no input" here: tRPC would parse it, and fail before authentication.)
    const read = input ? readJsonInput(input, { notAnObject: batchReason }) : undefined;
    const reason = read && ('blank' in read ? 'malformed-json' : inputProblem(read));
    if (!reason) return request;
    const query = new URLSearchParams(ctx.query());
    query.set('input', markers(reason));
    return new Request(`${request.url.split('?', 1)[0]}?${query}`, { method: request.method, headers: request.headers, signal: request.signal });
  }

  const text = await readBodyText(request, maxBodyBytes);
  // tRPC reads only JSON bodies; an empty body is no input, whatever its type (as on /api).
  const read = readJsonInput(text, { contentType: request.headers.get('content-type'), notAnObject: batchReason });
  const empty = 'blank' in read;
  const reason = inputProblem(read);
  const headers = new Headers(request.headers);
  headers.set('content-type', 'application/json');
  headers.delete('content-length');
  return new Request(request.url, { method: request.method, headers, body: reason ? markers(reason) : empty ? '' : text, signal: request.signal });
}

/** Why a tRPC input cannot be handed to tRPC as it is, if it cannot. */
const inputProblem = (read: JsonInput): DeferredReason | undefined => ('problem' in read ? read.problem : undefined);
