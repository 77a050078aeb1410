/**
 * The HTTP application: one Elysia app serving
 *   /api/*         REST, mapped onto the tRPC procedures (http/rest-bridge.ts)
 *   /trpc/*        tRPC for typed clients (http/trpc-endpoint.ts)
 *   /openapi.json  OpenAPI 3.1, generated once here
 *   /docs          the interactive reference (http/docs/)
 *   /dashboard     the customer web app (dashboard/, served by http/dashboard/)
 *   /mcp           the Model Context Protocol: a tool per procedure (mcp/)
 *   /healthz, /readyz
 * `handle` is what every request gets: a request id, CORS, the X-Request-Id and cost headers, JSON
 * errors for unknown paths, and one JSON log line. It hands /api/* to the REST bridge itself and
 * everything else to Elysia's router: the bridge routes by its own table (built from the procedures'
 * openapi meta), and passing its requests through Elysia's router and context first cost more than
 * the cheapest routes do (measured: docs/performance.md).
 */
import { publicErrorOf } from './procedures/trpc-errors.ts';
import { Elysia } from 'elysia';
import type { AnyTRPCRouter } from '@trpc/server';
import type { OpenAPIObject } from 'openapi3-ts/oas31';
import { errorResponse, ApiError, type PublicError } from '../errors.ts';
import { createCorsPolicy } from './http/cors.ts';
import { bodyTooLarge, declaresTooLargeBody } from './http/body-reader.ts';
import { docsAssets } from './http/docs/assets.ts';
import { dashboardAssets } from './http/dashboard/assets.ts';
import { assertQueryParameterCount } from './http/input-checks.ts';
import { buildOpenApiDocument } from './http/openapi.ts';
import { requestTarget, type RequestTarget } from './http/request-target.ts';
import { JsonResponses, withResponseHeaders } from './http/response-headers.ts';
import { REST_PREFIX, createRestBridge, type RestOutcome } from './http/rest-bridge.ts';
import { TRPC_PREFIX, createTrpcEndpoint } from './http/trpc-endpoint.ts';
import { createTrpcRpc, type RpcOutcome } from './http/trpc-rpc.ts';
import { newId } from '../lib/ids.ts';
import { createStreamRoutes, isStreamRoute } from './http/stream-routes.ts';
import { metricsForOperator } from './http/metrics-access.ts';
import { createFallbackRoutes, transportOf } from './http/route-labels.ts';
import type { Services } from './services.ts';
import { createRequestContext, type RequestContext } from './procedures/context.ts';
import { errorMessage } from '../lib/error-message.ts';
import { MCP_PATH, createMcpEndpoint } from './mcp/endpoint.ts';
import { mcpToolsOf } from './mcp/tools.ts';
import pkg from '../../package.json' with { type: 'json' };

/** What the outer wrapper knows about a request before it is routed. */
interface RequestScope {
  requestId: string;
  clientIp: () => string;
  target: RequestTarget;
  logFields: RequestContext['logFields'];
  /** Set by the /api and /trpc transports for the cost header and the error log. */
  ctx?: RequestContext;
  failures: Array<{ body: PublicError; cause: unknown }>;
  /** CORS headers of an allowed cross-origin request. */
  cors?: Record<string, string>;
}

const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

export interface HandleOptions {
  /**
   * The socket peer address, or how to get it (Bun's server.requestIP costs a system call, so the
   * server passes a function and only public routes, limited per IP, call it).
   */
  clientIp?: string | (() => string | undefined);
}

/**
 * What the platform serves, handed in by the composition (server/platform/app.ts) so that the pipeline
 * imports no router: the API's procedures, and the webhooks it sends (described in /openapi.json).
 */
export interface ApiSurface {
  router: AnyTRPCRouter;
  describeWebhooks: (document: OpenAPIObject) => void;
}

export function createApp(services: Services, api: ApiSurface) {
  const { config, logger } = services;
  const scopes = new WeakMap<Request, RequestScope>();
  const rest = createRestBridge(api.router);
  const trpc = createTrpcEndpoint(api.router);
  const trpcRpc = createTrpcRpc(api.router);
  const streamRoutes = createStreamRoutes(api.router);
  const openApiDocument = buildOpenApiDocument(api.router, rest.table, { maxBodyBytes: config.maxBodyBytes, describeWebhooks: api.describeWebhooks, origin: new URL(config.auth.publicUrl).origin });
  const openApiJson = JSON.stringify(openApiDocument);
  // The service's own origins (PUBLIC_URL, or the local ones) are as trusted as its request URL's: behind a proxy they differ.
  const cors = createCorsPolicy([...config.corsOrigins, ...config.auth.origins]);
  const mcp = createMcpEndpoint({ tools: mcpToolsOf(api.router), maxBodyBytes: config.maxBodyBytes, version: pkg.version });

  const contextFor = (request: Request, scope: RequestScope, transport: RequestContext['transport']) => {
    const { path, search } = scope.target;
    scope.ctx = createRequestContext(services, { transport, request, path, search, clientIp: scope.clientIp, requestId: scope.requestId }, scope.logFields);
    return scope.ctx;
  };

  const elysia = new Elysia()
    // First, so it covers every route below (Elysia hooks apply to routes registered after them).
    .onError(({ code, error, request }) => {
      const scope = scopes.get(request);
      const requestId = scope?.requestId ?? 'unknown';
      const cause = code === 'NOT_FOUND' ? new ApiError('NOT_FOUND', `No route ${request.method} ${scope?.target.path ?? ''}`) : error;
      const body = publicErrorOf(cause, requestId);
      if (body.status >= 500) scope?.failures.push({ body, cause });
      return errorResponse(body);
    })
    .get('/healthz', () => Response.json({ status: 'ok' }))
    .get('/readyz', async () => {
      try {
        // Bounded: a frozen database (connection up, no answers) is "unavailable" within 1 s.
        await services.database.ping(900);
        return Response.json({ status: 'ready', database: 'ok' });
      } catch {
        return Response.json({ status: 'unavailable', database: 'unreachable' }, { status: 503 });
      }
    })
    // Operator metrics, with an operator key (http/metrics-access.ts); METRICS_PORT serves them on a private address instead.
    .get('/metrics', ({ request }) => metricsForOperator(contextFor(request, scopes.get(request)!, 'rest')))
    .get('/openapi.json', () => new Response(openApiJson, { headers: { 'content-type': 'application/json' } }))
    .get('/docs', () => docsAssets.page())
    .get('/docs/:asset', ({ params, request }) => docsAssets.asset(params.asset, request.headers.get('accept-encoding')))
    .get('/dashboard', () => dashboardAssets.page())
    .get('/dashboard/', () => dashboardAssets.page())
    .get('/dashboard/assets/:asset', ({ params, request }) => dashboardAssets.asset(params.asset, request.headers.get('accept-encoding')))
    .all(
      `${TRPC_PREFIX}/*`,
      async ({ request }) => {
        const scope = scopes.get(request)!;
        const { response, failures } = await trpc(request, contextFor(request, scope, 'trpc'), config.maxBodyBytes);
        scope.failures.push(...failures);
        return response;
      },
      { parse: 'none' },
    );

  /**
   * The client address, computed once on first use. Behind TRUST_PROXY_HOPS trusted proxies, each
   * appends the address it received from to X-Forwarded-For, so the client is the hops-th entry from
   * the right: the one our outermost proxy wrote. Entries left of it are the client's own writing and
   * never used. A header with fewer entries than hops (a request that skipped a proxy) gives its
   * leftmost entry; no header (or an empty entry) gives the socket peer.
   */
  function clientIpOf(request: Request, peer: HandleOptions['clientIp']): () => string {
    let known: string | undefined;
    return () => {
      if (known !== undefined) return known;
      const header = config.trustProxy ? request.headers.get('x-forwarded-for') : null;
      const forwarded = header === null ? undefined : forwardedClient(header, config.trustProxyHops);
      return (known = forwarded || (typeof peer === 'function' ? peer() : peer) || 'unknown');
    };
  }

  /** The hops-th comma-separated entry from the right (or the leftmost when there are fewer), trimmed. */
  function forwardedClient(header: string, hops: number): string {
    let end = header.length;
    let start = header.lastIndexOf(',', end - 1) + 1;
    for (let hop = 1; hop < hops && start > 0; hop++) {
      end = start - 1;
      start = header.lastIndexOf(',', end - 1) + 1;
    }
    return header.slice(start, end).trim();
  }

  const logRequests = logger.enabled('info');
  // Request counts and latencies by route, status and transport (metrics/http.ts; off with METRICS_ENABLED=false).
  const requestMetrics = services.metrics.enabled ? services.metrics.http : undefined;
  const fallbackRoute = createFallbackRoutes(rest.table.routes);

  /** The response to a request, synchronous when the route answers without I/O (/api/pricing). */
  function handle(request: Request, options: HandleOptions = {}): Response | Promise<Response> {
    try {
      return route(request, options);
    } catch (cause) {
      // Nothing above should throw; if it does, the answer is still ours (and the cause is logged)
      // under the id the client sent, when it is a valid one, else a fresh id.
      const presentedId = request.headers.get('x-request-id');
      const body = publicErrorOf(cause, presentedId && REQUEST_ID.test(presentedId) ? presentedId : newId('req'));
      logger.error('request failed', { requestId: body.requestId, code: body.code, error: describeError(cause) });
      return errorResponse(body, { 'X-Request-Id': body.requestId });
    }
  }

  function route(request: Request, options: HandleOptions): Response | Promise<Response> {
    const started = logRequests || requestMetrics ? performance.now() : 0;
    const presentedId = request.headers.get('x-request-id');
    const requestId = presentedId && REQUEST_ID.test(presentedId) ? presentedId : newId('req');
    const target = requestTarget(request.url);
    // (Without a valid Host, Bun's request.url is the bare path; the log line gets it without its query.)
    const scope: RequestScope = {
      requestId,
      clientIp: clientIpOf(request, options.clientIp),
      target: target ?? { path: request.url.split('?', 1)[0]!, search: '' },
      logFields: {},
      failures: [],
    };
    const done = (response: Response) => finish(request, scope, response, started);
    const failed = (cause: unknown) => {
      const body = publicErrorOf(cause, requestId);
      scope.failures.push({ body, cause });
      return done(withResponseHeaders(errorResponse(body), scope));
    };

    try {
      if (!target) throw new ApiError('BAD_REQUEST', 'Invalid Host header');
      // CORS first, so an allowed browser origin can read even the refusals below.
      const verdict = cors(request);
      if (verdict.kind === 'forbidden') throw new ApiError('FORBIDDEN_ORIGIN', `Origin ${verdict.origin} is not allowed`);
      if (verdict.kind === 'preflight') return done(withResponseHeaders(new Response(null, { status: 204, headers: verdict.headers }), scope));
      if (verdict.kind === 'allowed') scope.cors = verdict.headers;
      // Bounds that hold on every path, before anything reads the body or parses the query.
      if (declaresTooLargeBody(request, config.maxBodyBytes)) throw bodyTooLarge(config.maxBodyBytes);
      if (target.search) assertQueryParameterCount(target.search);

      if (isStreamRoute(request, target.path)) {
        scope.logFields.route ??= `GET ${target.path}`; // one of the two fixed stream paths
        return streamRoutes.serve(request, contextFor(request, scope, 'rest')).then((response) => done(withResponseHeaders(response, scope)), failed);
      }
      if (target.path === MCP_PATH) {
        scope.logFields.route = `${request.method} ${MCP_PATH}`;
        // A tool call is answered by this app's own handle, from this client's address (mcp/tool-calls.ts).
        const clientIp = scope.clientIp();
        return mcp(request, contextFor(request, scope, 'rest'), (inner) => handle(inner, { clientIp })).then((response) => done(withResponseHeaders(response, scope)), failed);
      }
      if (target.path.startsWith(`${REST_PREFIX}/`)) {
        const outcome = rest.handle(request, contextFor(request, scope, 'rest'), config.maxBodyBytes);
        return outcome instanceof Promise ? outcome.then((o) => done(restResponse(scope, o))).catch(failed) : done(restResponse(scope, outcome));
      }
      if (target.path.startsWith(`${TRPC_PREFIX}/`)) {
        const outcome = trpcRpc.handle(request, contextFor(request, scope, 'trpc'), config.maxBodyBytes);
        // undefined: a request tRPC's own adapter answers (subscriptions, streamed batches…), below.
        if (outcome !== undefined) return outcome instanceof Promise ? outcome.then((o) => done(rpcResponse(scope, o))).catch(failed) : done(rpcResponse(scope, outcome));
      }
      scopes.set(request, scope);
      return elysia.handle(request).then((response) => done(withResponseHeaders(response, scope)), failed);
    } catch (cause) {
      return failed(cause);
    }
  }

  /** The bridge's answer with every header at once (cheaper than adding them to a built Response). */
  const jsonResponses = new JsonResponses();
  function restResponse(scope: RequestScope, outcome: RestOutcome): Response {
    if (outcome.error) scope.failures.push(outcome.error);
    return jsonResponses.build(outcome.body, outcome.status, scope);
  }

  function rpcResponse(scope: RequestScope, outcome: RpcOutcome): Response {
    scope.failures.push(...outcome.failures);
    return jsonResponses.build(outcome.body, outcome.status, scope);
  }

  /** Logs 5xx causes and the request line. */
  function finish(request: Request, scope: RequestScope, response: Response, started: number): Response {
    for (const failure of scope.failures) {
      if (failure.body.status >= 500) {
        logger.error('request failed', { requestId: scope.requestId, code: failure.body.code, error: describeError(failure.cause) });
      }
    }
    // One clock read for both (a read costs ~35 ns here, a tenth of the cheapest request).
    const elapsedMs = started === 0 ? 0 : performance.now() - started;
    if (requestMetrics) {
      const { path } = scope.target;
      const transport = transportOf(path);
      requestMetrics.observe(scope.logFields.route ?? fallbackRoute(request.method, path, transport), response.status, transport, elapsedMs / 1000);
    }
    if (logRequests) {
      logger.info('request', {
        method: request.method,
        path: scope.target.path,
        status: response.status,
        durationMs: Math.round(elapsedMs * 100) / 100,
        requestId: scope.requestId,
        accountId: scope.logFields.accountId ?? null,
      });
    }
    return response;
  }

  return { handle, elysia, openApiDocument, routes: rest.table.routes };
}

export type App = ReturnType<typeof createApp>;

/**
 * Error detail for the log: name, message and the top of the stack, never request data. Query errors
 * echo their bound parameters after "params:"; those are cut, since they may hold hashes or ciphertext.
 */
export function describeError(error: unknown): string {
  const chain: string[] = [];
  for (let e: any = error, depth = 0; e && depth < 4; e = e.cause, depth++) {
    // Driver and RPC client messages can carry an endpoint URL (an RPC provider's key sits in its
    // path) and the request body: neither reaches a log.
    const message = errorMessage(e)
      .split(/\nparams:/)[0]!
      .split('\n')
      .filter((line) => !/^\s*(Request body|Raw Call Arguments):/i.test(line))
      .join('\n')
      .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"']+/gi, '<url>');
    const frames = String(e.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line)).slice(0, 3);
    chain.push([`${e.name ?? 'Error'}: ${message}`, ...frames].join('\n'));
  }
  return chain.join('\ncaused by ');
}
