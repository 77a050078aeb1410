/**
 * The HTTP application: one Elysia app serving
 *   /api/*         REST, mapped onto the tRPC procedures (http/rest-bridge.ts)
 *   /trpc/*        tRPC for typed clients (http/trpc-endpoint.ts)
 *   /openapi.json  OpenAPI 3.1, generated once here
 *   /docs          the interactive reference (http/docs/)
 *   /healthz, /readyz
 * `handle` wraps Elysia with what every request gets: a request id, CORS, the X-Request-Id and cost
 * headers, JSON errors for unknown paths, and one JSON log line.
 */
import { Elysia } from 'elysia';
import { appRouter } from '../routers/index.ts';
import { errorResponse, toPublicError, ApiError, type PublicError } from './errors.ts';
import { createCorsPolicy } from './http/cors.ts';
import { docsAssets } from './http/docs/assets.ts';
import { buildOpenApiDocument } from './http/openapi.ts';
import { REST_PREFIX, createRestBridge } from './http/rest-bridge.ts';
import { TRPC_PREFIX, createTrpcEndpoint } from './http/trpc-endpoint.ts';
import { newId } from './lib/ids.ts';
import { formatUsd } from './lib/money.ts';
import type { Services } from './services.ts';
import { createRequestContext, type RequestContext } from './trpc/context.ts';

/** What the outer wrapper knows about a request before Elysia routes it. */
interface RequestScope {
  requestId: string;
  clientIp: () => string;
  url: URL;
  logFields: RequestContext['logFields'];
  /** Set by the /api and /trpc handlers for the cost header and the error log. */
  ctx?: RequestContext;
  failures: Array<{ body: PublicError; cause: unknown }>;
  /** CORS headers of an allowed cross-origin request. */
  cors?: Record<string, string>;
  /** The response was built with every header already (the /api handler); nothing to add. */
  headersComplete?: boolean;
}

const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

export interface HandleOptions {
  /**
   * The socket peer address, or how to get it (Bun's server.requestIP costs a system call, so the
   * server passes a function and only public routes, limited per IP, call it).
   */
  clientIp?: string | (() => string | undefined);
}

export function createApp(services: Services) {
  const { config, logger } = services;
  const scopes = new WeakMap<Request, RequestScope>();
  const rest = createRestBridge(appRouter);
  const trpc = createTrpcEndpoint(appRouter);
  const openApiDocument = buildOpenApiDocument(appRouter, rest.table);
  const openApiJson = JSON.stringify(openApiDocument);
  const cors = createCorsPolicy(config.corsOrigins);

  const scopeOf = (request: Request) => scopes.get(request)!;
  const contextFor = (request: Request, transport: RequestContext['transport']) => {
    const scope = scopeOf(request);
    scope.ctx = createRequestContext(services, { transport, request, url: scope.url, clientIp: scope.clientIp, requestId: scope.requestId }, scope.logFields);
    return scope.ctx;
  };

  const elysia = new Elysia()
    // First, so it covers every route below (Elysia hooks apply to routes registered after them).
    .onError(({ code, error, request }) => {
      const scope = scopes.get(request);
      const requestId = scope?.requestId ?? 'unknown';
      const cause = code === 'NOT_FOUND' ? new ApiError('NOT_FOUND', `No route ${request.method} ${new URL(request.url).pathname}`) : error;
      const body = toPublicError(cause, requestId);
      if (body.status >= 500) scope?.failures.push({ body, cause });
      return errorResponse(body);
    })
    .get('/healthz', () => Response.json({ status: 'ok' }))
    .get('/readyz', async () => {
      try {
        await services.database.ping();
        return Response.json({ status: 'ready', database: 'ok' });
      } catch {
        return Response.json({ status: 'unavailable', database: 'unreachable' }, { status: 503 });
      }
    })
    .get('/openapi.json', () => new Response(openApiJson, { headers: { 'content-type': 'application/json' } }))
    .get('/docs', () => docsAssets.page())
    .get('/docs/:asset', ({ params }) => docsAssets.asset(params.asset))
    .all(
      `${REST_PREFIX}/*`,
      async ({ request }) => {
        const scope = scopeOf(request);
        const outcome = await rest.handle(request, contextFor(request, 'rest'), config.maxBodyBytes);
        if (outcome.error) scope.failures.push(outcome.error);
        scope.headersComplete = true;
        const headers = responseHeaders(scope, outcome.status);
        headers['content-type'] = 'application/json';
        return new Response(outcome.body, { status: outcome.status, headers });
      },
      { parse: 'none' },
    )
    .all(
      `${TRPC_PREFIX}/*`,
      async ({ request }) => {
        const { response, failures } = await trpc(request, contextFor(request, 'trpc'));
        scopeOf(request).failures.push(...failures);
        return response;
      },
      { parse: 'none' },
    );

  /** The client address, computed once on first use. */
  function clientIpOf(request: Request, peer: HandleOptions['clientIp']): () => string {
    let known: string | undefined;
    return () => {
      if (known !== undefined) return known;
      const forwarded = config.trustProxy ? request.headers.get('x-forwarded-for')?.split(',')[0]?.trim() : undefined;
      return (known = forwarded || (typeof peer === 'function' ? peer() : peer) || 'unknown');
    };
  }

  const logRequests = logger.enabled('info');

  async function handle(request: Request, options: HandleOptions = {}): Promise<Response> {
    const started = logRequests ? performance.now() : 0;
    const presentedId = request.headers.get('x-request-id');
    const url = new URL(request.url);
    const scope: RequestScope = {
      requestId: presentedId && REQUEST_ID.test(presentedId) ? presentedId : newId('req'),
      clientIp: clientIpOf(request, options.clientIp),
      url,
      logFields: {},
      failures: [],
    };
    scopes.set(request, scope);

    let response: Response;
    const verdict = cors(request, url);
    if (verdict.kind === 'allowed') scope.cors = verdict.headers;
    if (verdict.kind === 'forbidden') {
      response = errorResponse({ code: 'FORBIDDEN_ORIGIN', message: `Origin ${verdict.origin} is not allowed`, status: 403, requestId: scope.requestId });
    } else if (verdict.kind === 'preflight') {
      response = new Response(null, { status: 204, headers: verdict.headers });
    } else {
      try {
        response = await elysia.handle(request);
      } catch (cause) {
        const body = toPublicError(cause, scope.requestId);
        scope.failures.push({ body, cause });
        response = errorResponse(body);
      }
    }
    if (!scope.headersComplete) response = withHeaders(response, scope);

    for (const failure of scope.failures) {
      if (failure.body.status >= 500) {
        logger.error('request failed', { requestId: scope.requestId, code: failure.body.code, error: describeError(failure.cause) });
      }
    }
    if (logRequests) {
      logger.info('request', {
        method: request.method,
        path: url.pathname,
        status: response.status,
        durationMs: Math.round((performance.now() - started) * 100) / 100,
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
 * The headers every response gets besides its body's own: the request id, what middleware and
 * procedures added (RateLimit-*, Retry-After, Allow, …), the cost of a billed request, Retry-After
 * on 409/503, and CORS.
 */
function responseHeaders(scope: RequestScope, status: number, alreadyHasRetryAfter = false): Record<string, string> {
  const headers: Record<string, string> = { 'X-Request-Id': scope.requestId, ...scope.ctx?.resHeaders };
  if (scope.ctx?.billing.billable) headers['X-Request-Cost-USD'] = formatUsd(scope.ctx.billing.chargedMicros);
  // Conflicts and unavailable dependencies are worth retrying: say when, unless a middleware already did.
  if ((status === 409 || status === 503) && !alreadyHasRetryAfter && headers['Retry-After'] === undefined) headers['Retry-After'] = '1';
  if (scope.cors) Object.assign(headers, scope.cors);
  return headers;
}

/** Adds responseHeaders to a response built elsewhere (Elysia's routes, /trpc, errors). */
function withHeaders(response: Response, scope: RequestScope): Response {
  let headers = response.headers;
  const add = responseHeaders(scope, response.status, headers.has('Retry-After'));
  try {
    headers.set('X-Request-Id', scope.requestId);
  } catch {
    // A response with immutable headers (e.g. one passed through from fetch): copy it once.
    headers = new Headers(response.headers);
    response = new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }
  for (const name in add) headers.set(name, add[name]!);
  return response;
}

/**
 * Error detail for the log: name, message and the top of the stack, never request data. Query errors
 * echo their bound parameters after "params:"; those are cut, since they may hold hashes or ciphertext.
 */
export function describeError(error: unknown): string {
  const chain: string[] = [];
  for (let e: any = error, depth = 0; e && depth < 4; e = e.cause, depth++) {
    const message = String(e.message ?? e).split(/\nparams:/)[0];
    const frames = String(e.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line)).slice(0, 3);
    chain.push([`${e.name ?? 'Error'}: ${message}`, ...frames].join('\n'));
  }
  return chain.join('\ncaused by ');
}
