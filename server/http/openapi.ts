/**
 * /openapi.json: trpc-to-openapi generates paths, parameters and schemas from the procedures; this
 * module then states what the generator cannot know, from each route's `access` and `billing` meta:
 * the auth schemes and headers, our single error body, and the response headers. Built once at start.
 */
import type { AnyTRPCRouter } from '@trpc/server';
import { EXAMPLE_USER } from '../procedures/user-member.ts';
import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import type { HeaderObject, ParameterObject, SchemaObject } from 'openapi3-ts/oas31';
import pkg from '../../package.json' with { type: 'json' };
import { ERROR_STATUS } from '../errors.ts';
import type { Access } from '../trpc/init.ts';
import { INPUT_LIMITS } from './input-limits.ts';
import { addCodeSamples } from './openapi-code-samples.ts';
import { addExamples } from './openapi-examples.ts';
import { describeStreamRoutes } from './openapi-streams.ts';
import type { Route, RouteTable } from './route-table.ts';

const TAGS = [
  { name: 'Trading settings and credentials', description: 'Per-user floors, wallet and venue credentials. Needs x-api-key and x-user-id.' },
  { name: 'Trading', description: 'Open and sell positions. Needs x-api-key and x-user-id; accepts Idempotency-Key.' },
  { name: 'Positions', description: 'The user\'s positions, valued at the bids, and the wallet sync.' },
  { name: 'Orders', description: 'Orders sent to the venue and their sync.' },
  { name: 'History', description: 'Trades (fills) with a summary.' },
  { name: 'Trading market data', description: 'IPO valuation events, band prices, costs, returns and slippage. Public and unbilled.' },
  { name: 'Private companies', description: 'A curated dataset of private companies. Billed at ten times the standard rate.' },
  { name: 'Account and billing', description: 'Pricing, billing summary and usage records of the calling account.' },
  { name: 'API keys (dashboard)', description: 'Key management with a server-configured dashboard key and x-account-id.' },
  { name: 'Accounts (dashboard)', description: 'Funding and per-account rates, with a dashboard key and x-account-id.' },
  { name: 'Webhooks', description: 'Signed webhooks (Standard Webhooks): order, position, settlement, resolution, deposit and balance events of the calling account, delivered at least once (docs/webhooks.md).' },
  { name: 'Sign-in', description: 'Sign in with a wallet (EIP-4361): a session cookie that acts for the wallet\'s own account on the account routes, unbilled.' },
  { name: 'Operations', description: 'Operator routes (a dashboard key): resolving or voiding an event, which settles its open positions.' },
];

const DESCRIPTION = (maxBodyBytes: number) => `Pre-IPO trading, market data and private-company data.

Authentication: send your API key in the \`x-api-key\` header (or the \`apiKey\` query parameter).
Trading routes also need \`x-user-id\`. Key-management routes need a dashboard key (in the
\`x-api-key\` header only, never in the query) and \`x-account-id\` naming an existing account:
creating an account's first key (\`POST /keys\`) creates it; every other dashboard route answers 404
for an account that does not exist. A customer may instead sign in with their wallet (\`GET /auth/nonce\`,
\`POST /auth/verify\`): the session cookie then works, without a key, on the routes that list the
\`Session\` scheme, for the wallet's own account, unbilled; a request that changes something with a
session must carry an \`Origin\` of this service or of CORS_ORIGINS (403 FORBIDDEN_ORIGIN). A client IP that presents more than a few invalid keys gets
429 RATE_LIMITED (with \`Retry-After\`) before its keys are looked up.

Limits on every request (also in \`x-request-limits\` of this document's \`info\`): a body of at most
${maxBodyBytes} bytes (413 PAYLOAD_TOO_LARGE, with or without Content-Length), at most
${INPUT_LIMITS.maxQueryParameters} query parameters (400), JSON nested at most ${INPUT_LIMITS.maxJsonDepth} levels
deep (400), and on /trpc at most ${INPUT_LIMITS.maxBatchCalls} calls per batch (400). Dates are ISO 8601
calendar dates or date-times from ${INPUT_LIMITS.minDate} to ${INPUT_LIMITS.maxDate} (400 otherwise). A key is
authenticated before its input is read: a bad key is 401 even when the body is malformed.

Billing: billed routes debit the account's prepaid balance per request and report the charge in
\`X-Request-Cost-USD\`; failed requests cost nothing. Every response carries \`X-Request-Id\`.

Errors: every error is \`{code, message, status, requestId}\`. Besides the statuses listed per route,
any route may answer 405 METHOD_NOT_ALLOWED (with \`Allow\`), 413 PAYLOAD_TOO_LARGE,
415 UNSUPPORTED_MEDIA_TYPE, 403 FORBIDDEN_ORIGIN (browser origins not in CORS_ORIGINS) and
503 SERVICE_UNAVAILABLE (database unreachable; retry).`;

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid parameter or body (BAD_REQUEST; INVALID_FLOOR for floors)',
  401: 'Missing, unknown or revoked key, or the wrong kind of key (UNAUTHORIZED)',
  413: 'Request body larger than the limit (PAYLOAD_TOO_LARGE)',
  402: 'Balance below the cost of this request; on buy, also a venue balance below the cost of the trade (INSUFFICIENT_BALANCE)',
  403: 'Forbidden (INVALID_CREDENTIALS)',
  404: 'Not found (NOT_FOUND; POSITION_NOT_FOUND for positions; on dashboard routes, an account that does not exist)',
  409: 'Conflict (IDEMPOTENCY_IN_PROGRESS)',
  422: 'Rejected (ORDER_REJECTED, IDEMPOTENCY_MISMATCH)',
  429: 'Rate limited (RATE_LIMITED), or too many failed authentications from this client IP; see Retry-After',
  500: 'Unexpected error (INTERNAL_ERROR); quote X-Request-Id',
  503: 'A dependency is unavailable (SERVICE_UNAVAILABLE, VENUE_UNAVAILABLE); retry',
};

const BASE_ERRORS: Record<Access, number[]> = {
  public: [400, 429, 500],
  key: [400, 401, 402, 429, 500],
  user: [400, 401, 402, 429, 500],
  dashboard: [400, 401, 404, 429, 500],
  session: [400, 401, 403, 429, 500],
};

const SECURITY: Record<Access, Array<Record<string, string[]>>> = {
  public: [],
  key: [{ ApiKey: [] }, { ApiKeyQuery: [] }],
  user: [{ ApiKey: [] }, { ApiKeyQuery: [] }],
  dashboard: [{ DashboardKey: [] }],
  session: [{ Session: [] }],
};

const header = (description: string, schema: SchemaObject = { type: 'string' }): HeaderObject => ({ description, schema });

function headerParameter(name: string, required: boolean, description: string, example: string, maxLength = 128): ParameterObject {
  return { in: 'header', name, required, description, example, schema: { type: 'string', minLength: 1, maxLength } };
}

export function buildOpenApiDocument(router: AnyTRPCRouter, table: RouteTable, limits: { maxBodyBytes: number }): OpenAPIObject {
  const doc = generateOpenApiDocument(router, {
    title: 'Pre-IPO API',
    version: pkg.version,
    description: DESCRIPTION(limits.maxBodyBytes),
    baseUrl: '/api',
    tags: TAGS.map((t) => t.name),
  });
  doc.tags = TAGS;
  // A private service's API: no open licence is granted. Redocly's recommended rules ask for the
  // field with an SPDX identifier; LicenseRef- is SPDX's form for a licence of one's own.
  doc.info.license = { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' };
  // Machine-readable request limits (the description says the same in words).
  (doc.info as unknown as Record<string, unknown>)['x-request-limits'] = {
    maxBodyBytes: limits.maxBodyBytes,
    maxQueryParameters: INPUT_LIMITS.maxQueryParameters,
    maxJsonDepth: INPUT_LIMITS.maxJsonDepth,
    maxTrpcBatchCalls: INPUT_LIMITS.maxBatchCalls,
    dateRange: { from: INPUT_LIMITS.minDate, to: INPUT_LIMITS.maxDate },
  };
  doc.components ??= {};
  doc.components.securitySchemes = {
    ApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'An API key (pipo_…)' },
    ApiKeyQuery: { type: 'apiKey', in: 'query', name: 'apiKey', description: 'The same API key as a query parameter' },
    DashboardKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'A server-configured dashboard key' },
    Session: {
      type: 'apiKey',
      in: 'cookie',
      name: 'pipo_session',
      description:
        'A customer session from a wallet sign-in (GET /api/auth/nonce, POST /api/auth/verify). Acts for its own account only, never billed; a request that changes something must carry an Origin of this service or of CORS_ORIGINS (403 FORBIDDEN_ORIGIN otherwise)',
    },
  };
  const schemas = Object.fromEntries(Object.entries(doc.components.schemas ?? {}).filter(([name]) => !name.startsWith('error.')));
  schemas.ApiError = {
    type: 'object',
    required: ['code', 'message', 'status', 'requestId'],
    additionalProperties: false,
    properties: {
      code: { type: 'string', enum: Object.keys(ERROR_STATUS), example: 'BAD_REQUEST' },
      message: { type: 'string', example: 'limit: Too big: expected number to be <=10000' },
      status: { type: 'integer', example: 400 },
      requestId: { type: 'string', example: 'req_3mJr7AoUXx2Wqd' },
    },
  };
  doc.components.schemas = schemas;
  doc.components.headers = {
    'X-Request-Id': header('Request identifier: yours from x-request-id, or generated'),
    'X-Request-Cost-USD': header('What this request was charged, in USD (0 when it failed)', { type: 'string', example: '0.002' }),
    'RateLimit-Limit': header('Capacity of your token bucket', { type: 'integer' }),
    'RateLimit-Remaining': header('Requests left in the bucket', { type: 'integer' }),
    'RateLimit-Reset': header('Seconds until the bucket is full', { type: 'integer' }),
    'Retry-After': header('Seconds to wait before retrying', { type: 'integer' }),
    'Idempotent-Replayed': header('true when this answer is the stored answer of an earlier request with the same Idempotency-Key', { type: 'string', example: 'true' }),
  };
  for (const route of table.routes) describeOperation(doc, route);
  describeStreamRoutes(doc);
  addExamples(doc, table.routes);
  addCodeSamples(doc, table.routes);
  return doc;
}

function describeOperation(doc: OpenAPIObject, route: Route) {
  const operation = doc.paths?.[route.template]?.[route.method.toLowerCase() as 'get'];
  if (!operation) throw new Error(`OpenAPI document lacks ${route.method} ${route.template}`);
  const access = route.meta.access ?? 'public';
  // Routes that also take a customer's session list it as an alternative scheme.
  operation.security = route.meta.session && access !== 'session' ? [...SECURITY[access], { Session: [] }] : SECURITY[access];
  operation.parameters = [
    // Path parameters are always required (the generator cannot tell for preprocessed schemas).
    ...(operation.parameters ?? []).map((p) => ('in' in p && p.in === 'path' ? { ...p, required: true } : p)),
    ...(access === 'user' ? [headerParameter('x-user-id', true, 'Wallet address or account identifier of the trading user', EXAMPLE_USER)] : []),
    ...(access === 'dashboard'
      ? [headerParameter('x-account-id', true, route.meta.createsAccount ? 'The account this dashboard request manages (created by this request if it does not exist)' : 'The account this dashboard request manages (must exist: 404 otherwise)', 'acme')]
      : []),
    ...(route.meta.idempotent
      ? [headerParameter('Idempotency-Key', false, 'Up to 255 visible ASCII characters. The same key and body within 24 h replays the first answer (with Idempotent-Replayed: true)', `${route.procedurePath.replace('.', '-')}-2026-11-22-0001`, 255)]
      : []),
    headerParameter('x-request-id', false, 'Your request id, echoed back as X-Request-Id (1-128 printable characters)', 'checkout-7f3a9c'),
  ];

  const success = operation.responses?.['200'];
  const headers: Record<string, { $ref: string }> = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
  if (route.meta.billing) headers['X-Request-Cost-USD'] = { $ref: '#/components/headers/X-Request-Cost-USD' };
  for (const h of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) headers[h] = { $ref: `#/components/headers/${h}` };
  if (route.meta.idempotent) headers['Idempotent-Replayed'] = { $ref: '#/components/headers/Idempotent-Replayed' };
  const responses: Record<string, unknown> = { [String(route.meta.successStatus ?? 200)]: { ...success, headers } };

  const declared = route.meta.openapi?.errorResponses;
  const extra = Array.isArray(declared) ? declared : Object.keys(declared ?? {}).map(Number);
  // The route that creates its account never answers 404 for a missing one.
  const base = route.meta.createsAccount ? BASE_ERRORS[access].filter((status) => status !== 404) : BASE_ERRORS[access];
  const statuses = [...new Set([...base, ...extra])].sort();
  for (const status of statuses) {
    responses[String(status)] = {
      description: ERROR_DESCRIPTIONS[status] ?? 'Error',
      headers: {
        'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
        ...(route.meta.billing ? { 'X-Request-Cost-USD': { $ref: '#/components/headers/X-Request-Cost-USD' } } : {}),
        ...([409, 429, 503].includes(status) ? { 'Retry-After': { $ref: '#/components/headers/Retry-After' } } : {}),
        ...(route.meta.idempotent ? { 'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' } } : {}),
      },
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ApiError' } } },
    };
  }
  operation.responses = responses as typeof operation.responses;
}
