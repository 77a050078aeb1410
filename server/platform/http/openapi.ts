/**
 * /openapi.json: trpc-to-openapi generates paths, parameters and schemas from the procedures; this
 * module then states what the generator cannot know, from each route's `access` and `billing` meta:
 * the auth schemes and headers, our single error body, and the response headers. Built once at start.
 */
import { SCOPE_DESCRIPTIONS } from '../../accounts/scopes.ts';
import type { AnyTRPCRouter } from '@trpc/server';
import { EXAMPLE_USER } from '../procedures/user-member.ts';
import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import type { HeaderObject, ParameterObject, SchemaObject } from 'openapi3-ts/oas31';
import pkg from '../../../package.json' with { type: 'json' };
import { ERROR_STATUS } from '../../errors.ts';
import { IDENTIFIER, IDENTIFIER_RULE } from '../../lib/identifiers.ts';
import type { Access } from '../procedures/meta.ts';
import { INPUT_LIMITS } from '../../lib/input-limits.ts';
import { addCodeSamples } from './openapi-code-samples.ts';
import { addExamples } from './openapi-examples.ts';
import { describeFileRoutes, describeStreamRoutes } from './openapi-streams.ts';
import type { Route, RouteTable } from './route-table.ts';

const TAGS = [
  { name: 'Trading settings and credentials', description: 'Per-user floors, wallet and venue credentials. Needs x-api-key and the trading user (x-user-id or the userId member).' },
  { name: 'Trading', description: 'Open and sell positions. Needs x-api-key and the trading user (x-user-id or the userId member); accepts Idempotency-Key.' },
  { name: 'Positions', description: 'The user\'s positions, valued at the bids, and the wallet sync.' },
  { name: 'Orders', description: 'Orders sent to the venue and their sync.' },
  { name: 'History', description: 'Trades (fills) with a summary.' },
  { name: 'Trading market data', description: 'IPO valuation events, band prices, costs, returns and slippage. Public and unbilled.' },
  { name: 'Private companies', description: 'Thousands of private companies built from public sources (docs/data.md), each fact with its source and date. Billed at ten times the standard rate.' },
  { name: 'Funding rounds and investors', description: 'Funding rounds across companies and the investors named in them, with their portfolios, from the same dataset. Billed at the private-company rate.' },
  { name: 'Account and billing', description: 'Pricing, billing summary and usage records of the calling account.' },
  { name: 'API keys (dashboard)', description: 'Key management with a server-configured dashboard key and x-account-id.' },
  { name: 'Accounts (dashboard)', description: 'Funding and per-account rates, with a dashboard key and x-account-id.' },
  { name: 'Webhooks', description: 'Signed webhooks (Standard Webhooks): order, position, settlement, resolution, deposit and balance events of the calling account, delivered at least once (docs/webhooks.md).' },
  { name: 'Sign-in', description: 'Sign in with a wallet (EIP-4361): a session cookie that acts for the wallet\'s own account on the routes that list the Session scheme, billed to that account exactly like a key on billed routes.' },
  { name: 'Operations', description: 'Operator routes (a dashboard key): resolving or voiding an event, which settles its open positions.' },
];

const DESCRIPTION = (maxBodyBytes: number) => `Pre-IPO trading, market data and private-company data.

Authentication: send your API key in the \`x-api-key\` header. The \`apiKey\` query parameter is accepted
too but deprecated and discouraged: URLs end up in logs (proxies, servers, browser history), and a key
in one is leaked with them. Trading routes also need the trading user: the \`x-user-id\` header or the
input's \`userId\` member (one of them; both only if they name the same user), each
${IDENTIFIER_RULE}. Key-management routes need a dashboard key (in the
\`x-api-key\` header only, never in the query) and \`x-account-id\` naming an existing account:
creating an account's first key (\`POST /keys\`) creates it; every other dashboard route answers 404
for an account that does not exist. A customer may instead sign in with their wallet (\`GET /auth/nonce\`,
\`POST /auth/verify\`): the session cookie then works, without a key, on the routes that list the
\`Session\` scheme, for the wallet's own account (\`x-account-id\` is then neither needed nor read). A
session's calls on a billed route are billed to its account exactly like a key's (usage records
without a key id); routes unbilled for keys stay unbilled for sessions. A request that changes something with a
session must carry an \`Origin\` of this service or of CORS_ORIGINS (403 FORBIDDEN_ORIGIN). A client IP that presents more than a few invalid keys gets
429 RATE_LIMITED (with \`Retry-After\`) before its keys are looked up. A key may be limited to scopes
(\`POST /keys\`, \`scopes\`): each billed key operation names the one it needs in \`x-required-scope\`,
and a key without it is 403 FORBIDDEN, checked after the input and the rate limit, and not charged.
Keys are live (\`pipo_live_…\`) or test (\`pipo_test_…\`, \`POST /keys\` with \`mode: "test"\`): a test key
trades on the paper venue (against the live books when the server has a live venue), with positions,
orders, history, webhooks, stream events, usage and balance of its own that a live key never sees,
at the test price (free by default), never from the live balance, and reads no private-company data;
its calls are also limited per account and per client address (429).
Security-relevant changes (keys, credentials, webhooks, credits, plans, sign-ins, event resolutions)
are recorded append-only with their actor — key, session, or operator by name (\`DASHBOARD_KEYS\`
\`name=key\`) — in the audit log (\`GET /audit-log\`; operators \`GET /operator/audit-log\`).

AI agents: every operation an API key can call is also a tool of the MCP server at \`/mcp\`
(Streamable HTTP, the same key, price, scopes and limits; a tool's result carries its cost), or over
stdio with \`npx @pre-ipo/client mcp\` (docs/mcp.md).

Limits on every request (also in \`x-request-limits\` of this document's \`info\`): a body of at most
${maxBodyBytes} bytes (413 PAYLOAD_TOO_LARGE, with or without Content-Length), at most
${INPUT_LIMITS.maxQueryParameters} query parameters (400), JSON nested at most ${INPUT_LIMITS.maxJsonDepth} levels
deep (400), and on /trpc at most ${INPUT_LIMITS.maxBatchCalls} calls per batch (400). Dates are ISO 8601
calendar dates or date-times from ${INPUT_LIMITS.minDate} to ${INPUT_LIMITS.maxDate} (400 otherwise). A key is
authenticated before its input is read: a bad key is 401 even when the body is malformed.

Billing: billed routes debit the account's prepaid balance per request and report the charge in
\`X-Request-Cost-USD\`; failed requests cost nothing. Every response carries \`X-Request-Id\`.

Errors: every error is \`{code, message, status, requestId}\`. Every route lists 405 METHOD_NOT_ALLOWED
(another method on its path; with \`Allow\`), and every route with a body 413 PAYLOAD_TOO_LARGE and
415 UNSUPPORTED_MEDIA_TYPE. Besides the statuses listed per route, any route may answer
403 FORBIDDEN_ORIGIN (browser origins not in CORS_ORIGINS) and 503 SERVICE_UNAVAILABLE (database
unreachable; retry). \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\` come on every answer
that reached a rate limit, errors included (not on 405 and 413, refused before any), and
\`Retry-After\` with every 429.`;

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid parameter or body (BAD_REQUEST; INVALID_FLOOR for floors)',
  401: 'Missing, unknown or revoked key, or the wrong kind of key (UNAUTHORIZED)',
  405: 'Another method than this operation\'s on its path (METHOD_NOT_ALLOWED); Allow lists the methods of the path',
  413: 'Request body larger than the limit, with or without Content-Length (PAYLOAD_TOO_LARGE)',
  415: 'A body whose Content-Type is not application/json (UNSUPPORTED_MEDIA_TYPE)',
  402: 'Balance below the cost of this request; on buy, also a venue balance below the cost of the trade (INSUFFICIENT_BALANCE)',
  403: 'Forbidden: a key without the scope the operation needs (FORBIDDEN; see x-required-scope), a browser Origin that is not allowed, on any operation, or with a session a change (or a cross-site billed read) without a trusted Origin (FORBIDDEN_ORIGIN); on trading routes, no venue credentials or the venue refused them (INVALID_CREDENTIALS)',
  404: 'Not found (NOT_FOUND; POSITION_NOT_FOUND for positions; on dashboard routes, an account that does not exist)',
  409: 'Conflict (IDEMPOTENCY_IN_PROGRESS)',
  422: 'Rejected (ORDER_REJECTED, IDEMPOTENCY_MISMATCH)',
  429: 'Rate limited (RATE_LIMITED), or too many failed authentications from this client IP; see Retry-After',
  500: 'Unexpected error (INTERNAL_ERROR); quote X-Request-Id',
  503: 'The server is still starting, or a dependency is unavailable: the database (SERVICE_UNAVAILABLE), the venue or the chain (VENUE_UNAVAILABLE); retry after Retry-After',
};

const BASE_ERRORS: Record<Access, number[]> = {
  public: [400, 429, 500],
  key: [400, 401, 402, 429, 500],
  user: [400, 401, 402, 429, 500],
  dashboard: [400, 401, 404, 429, 500],
  session: [400, 401, 403, 429, 500],
};

/** Statuses a route answers that neither its access rule nor its meta lists, by procedure path. */
const ROUTE_STATUSES: Record<string, Record<number, string>> = {
  'auth.verify': { 401: 'Sign-in refused (UNAUTHORIZED), the message naming why: a wrong scheme, domain, URI or chain, an expired, used or unknown nonce, no pipo_nonce cookie or another client\'s, a signature not the wallet\'s' },
};

/** Statuses refused before the rate limit is taken (routing, the body limit): no RateLimit-* headers. */
const BEFORE_RATE_LIMIT = new Set([405, 413]);

/** A wallet address as the routers check it (viem's isAddress: 0x and 40 hex digits, any case). */
export const EVM_ADDRESS_PATTERN = '^0x[0-9a-fA-F]{40}$';
/** Input members that are wallet addresses (a refine in the router, which the generator cannot state). */
const ADDRESS_MEMBERS = new Set(['walletAddress']);
/**
 * The text routers/params.ts parseIsoInstant reads (a date, or a date-time with an optional offset);
 * it then checks the calendar and the range, which the description states. tests/openapi/openapi.test.ts
 * checks that this pattern and the parser agree.
 */
export const ISO_INSTANT_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:?[0-9]{2}))?$';
/** The query parameters that are instants (isoInstant in routers/params.ts). */
export const INSTANT_PARAMETERS = new Set(['from', 'to', 'startDate', 'endDate', 'updatedSince']);

const SECURITY: Record<Access, Array<Record<string, string[]>>> = {
  public: [],
  key: [{ ApiKey: [] }, { ApiKeyQuery: [] }],
  user: [{ ApiKey: [] }, { ApiKeyQuery: [] }],
  dashboard: [{ DashboardKey: [] }],
  session: [{ Session: [] }],
};

const header = (description: string, schema: SchemaObject = { type: 'string' }): HeaderObject => ({ description, schema });

function headerParameter(name: string, required: boolean, description: string, example: string, maxLength = 128, pattern?: string): ParameterObject {
  return { in: 'header', name, required, description, example, schema: { type: 'string', minLength: 1, maxLength, ...(pattern ? { pattern } : {}) } };
}

export function buildOpenApiDocument(
  router: AnyTRPCRouter,
  table: RouteTable,
  options: { maxBodyBytes: number; describeWebhooks?: (document: OpenAPIObject) => void; /** Where the code samples call (PUBLIC_URL, or localhost on PORT); default http://localhost:3000. */ origin?: string },
): OpenAPIObject {
  const doc = generateOpenApiDocument(router, {
    title: 'Pre-IPO API',
    version: pkg.version,
    description: DESCRIPTION(options.maxBodyBytes),
    baseUrl: '/api',
    tags: TAGS.map((t) => t.name),
  });
  doc.tags = TAGS;
  // One server, this service's own public API (OWASP API9: the audience of every server is stated).
  doc.servers = (doc.servers ?? [{ url: '/api' }]).map((server) => ({ ...server, 'x-internal': false }));
  // A private service's API: no open licence is granted. Redocly's recommended rules ask for the
  // field with an SPDX identifier; LicenseRef- is SPDX's form for a licence of one's own.
  doc.info.license = { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' };
  // Machine-readable request limits (the description says the same in words).
  (doc.info as unknown as Record<string, unknown>)['x-request-limits'] = {
    maxBodyBytes: options.maxBodyBytes,
    maxQueryParameters: INPUT_LIMITS.maxQueryParameters,
    maxJsonDepth: INPUT_LIMITS.maxJsonDepth,
    maxTrpcBatchCalls: INPUT_LIMITS.maxBatchCalls,
    dateRange: { from: INPUT_LIMITS.minDate, to: INPUT_LIMITS.maxDate },
  };
  doc.components ??= {};
  doc.components.securitySchemes = {
    ApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'An API key (pipo_…)' },
    ApiKeyQuery: {
      type: 'apiKey',
      in: 'query',
      name: 'apiKey',
      description:
        'Deprecated, discouraged: the same API key as a query parameter, kept because the interface specification requires it. Send x-api-key instead: URLs end up in logs (proxies, load balancers, servers, browser history), and a key in one leaks with them. Never accepted for a dashboard key',
      'x-deprecated': true,
    } as never,
    DashboardKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'A server-configured dashboard key' },
    Session: {
      type: 'apiKey',
      in: 'cookie',
      name: 'pipo_session',
      description:
        'A customer session from a wallet sign-in (GET /api/auth/nonce, POST /api/auth/verify). Acts for its own account only (x-account-id is neither needed nor read); on a billed route its calls are billed to that account exactly like a key\'s, and routes unbilled for keys stay unbilled for it. A request that changes something must carry an Origin of this service or of CORS_ORIGINS (403 FORBIDDEN_ORIGIN otherwise)',
    },
  };
  const schemas = Object.fromEntries(Object.entries(doc.components.schemas ?? {}).filter(([name]) => !name.startsWith('error.')));
  schemas.ApiError = {
    type: 'object',
    required: ['code', 'message', 'status', 'requestId'],
    additionalProperties: false,
    properties: {
      code: { type: 'string', enum: Object.keys(ERROR_STATUS), example: 'BAD_REQUEST' },
      message: { type: 'string', maxLength: 2000, example: 'limit: Too big: expected number to be <=10000' },
      status: { type: 'integer', format: 'int32', minimum: 400, maximum: 599, example: 400 },
      requestId: { type: 'string', maxLength: 128, example: 'req_3mJr7AoUXx2Wqd' },
    },
  };
  doc.components.schemas = schemas;
  doc.components.headers = {
    'X-Request-Id': header('Request identifier: yours from x-request-id, or generated', { type: 'string', maxLength: 128 }),
    'X-Request-Cost-USD': header('What this request was charged, in USD (0 when it failed)', { type: 'string', maxLength: 32, pattern: '^[0-9]+(\\.[0-9]+)?$', example: '0.002' }),
    'RateLimit-Limit': header('Capacity of your token bucket. The RateLimit-* headers come on every answer that reached its rate limit, errors included; not on one refused before it (405, 413, and those refused on the way to it)', { type: 'integer', format: 'int32', minimum: 0, maximum: 2147483647 }),
    'RateLimit-Remaining': header('Requests left in the bucket', { type: 'integer', format: 'int32', minimum: 0, maximum: 2147483647 }),
    'RateLimit-Reset': header('Seconds until the bucket is full', { type: 'integer', format: 'int32', minimum: 0, maximum: 2147483647 }),
    'Retry-After': header('Seconds to wait before retrying', { type: 'integer', format: 'int32', minimum: 0, maximum: 2147483647 }),
    'Idempotent-Replayed': header('true when this answer is the stored answer of an earlier request with the same Idempotency-Key', { type: 'string', enum: ['true'], example: 'true' }),
    Allow: header('The methods this path takes, comma-separated', { type: 'string', maxLength: 64, example: 'GET' }),
  };
  for (const route of table.routes) describeOperation(doc, route);
  describeStreamRoutes(doc);
  describeFileRoutes(doc, table.routes);
  options.describeWebhooks?.(doc);
  statePatterns(doc);
  addExamples(doc, table.routes);
  addCodeSamples(doc, table.routes, options.origin);
  return doc;
}

function describeOperation(doc: OpenAPIObject, route: Route) {
  const operation = doc.paths?.[route.template]?.[route.method.toLowerCase() as 'get'];
  if (!operation) throw new Error(`OpenAPI document lacks ${route.method} ${route.template}`);
  const access = route.meta.access ?? 'public';
  // Routes that also take a customer's session list it as an alternative scheme.
  operation.security = route.meta.session && access !== 'session' ? [...SECURITY[access], { Session: [] }] : SECURITY[access];
  // The scope a key needs (an apiKey scheme's requirement cannot carry scopes in OpenAPI 3.0): an
  // extension for tools, and a sentence for people.
  if (route.meta.scope) {
    (operation as Record<string, unknown>)['x-required-scope'] = route.meta.scope;
    operation.description = `${operation.description ?? ''}\n\nNeeds a key with the scope \`${route.meta.scope}\` (${SCOPE_DESCRIPTIONS[route.meta.scope]}); without it, 403 FORBIDDEN, not charged. A session holds every scope.`.trim();
  }
  operation.parameters = [
    // Path parameters are always required (the generator cannot tell for preprocessed schemas).
    ...(operation.parameters ?? []).map((p) => ('in' in p && p.in === 'path' ? { ...p, required: true } : p)),
    // Not required: the input's userId member may name the user instead (a tRPC batch's calls share
    // their headers). The server requires one of the two (400 otherwise), which a header's
    // `required` cannot say; a client generated from the document must be able to send either.
    ...(access === 'user'
      ? [
          headerParameter(
            'x-user-id',
            false,
            `The trading user: a wallet address (checksummed, so case variants name one user) or an account identifier, ${IDENTIFIER_RULE}. Required unless the input's userId member names the user; if both are sent they must name the same user (400 otherwise)`,
            EXAMPLE_USER,
            128,
            IDENTIFIER.source,
          ),
        ]
      : []),
    // Required with a dashboard key; a session (on the routes that take one) acts for its own account and never reads it.
    ...(access === 'dashboard'
      ? [
          headerParameter(
            'x-account-id',
            !route.meta.session,
            `${route.meta.createsAccount ? 'The account this dashboard request manages (created by this request if it does not exist)' : 'The account this dashboard request manages (must exist: 404 otherwise)'}, ${IDENTIFIER_RULE}${route.meta.session ? '. Required with a dashboard key (400 without it); with a session cookie it is neither needed nor read (the session acts for its own account)' : ''}`,
            'acme',
            128,
            IDENTIFIER.source,
          ),
        ]
      : []),
    ...(route.meta.idempotent
      ? [headerParameter('Idempotency-Key', false, 'Up to 255 visible ASCII characters. The same key and body within 24 h replays the first answer (with Idempotent-Replayed: true)', `${route.procedurePath.replace('.', '-')}-2026-11-22-0001`, 255)]
      : []),
    headerParameter('x-request-id', false, 'Your request id, echoed back as X-Request-Id (1-128 printable characters)', 'checkout-7f3a9c'),
  ];

  const success = operation.responses?.['200'];
  const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
  const rateLimit = { 'RateLimit-Limit': ref('RateLimit-Limit'), 'RateLimit-Remaining': ref('RateLimit-Remaining'), 'RateLimit-Reset': ref('RateLimit-Reset') };
  const headers: Record<string, { $ref: string }> = { 'X-Request-Id': ref('X-Request-Id') };
  if (route.meta.billing) headers['X-Request-Cost-USD'] = ref('X-Request-Cost-USD');
  Object.assign(headers, rateLimit);
  if (route.meta.idempotent) headers['Idempotent-Replayed'] = ref('Idempotent-Replayed');
  const responses: Record<string, unknown> = { [String(route.meta.successStatus ?? 200)]: { ...success, headers } };

  const declared = route.meta.openapi?.errorResponses;
  const extra = Array.isArray(declared) ? declared : Object.keys(declared ?? {}).map(Number);
  const own = ROUTE_STATUSES[route.procedurePath] ?? {};
  // The route that creates its account never answers 404 for a missing one.
  const base = route.meta.createsAccount ? BASE_ERRORS[access].filter((status) => status !== 404) : BASE_ERRORS[access];
  // 403 on every operation (a browser Origin not allowed is refused before routing: CORS), 405 on
  // every one (another method on its path), 503 on every one (the server still starting, or its
  // database unreachable); 413 and 415 on every method that carries a body, whether the operation
  // reads one or not (the body is checked before the operation is known to need it).
  const transport = route.method === 'GET' ? [403, 405, 503] : [403, 405, 413, 415, 503];
  const statuses = [...new Set([...base, ...extra, ...Object.keys(own).map(Number), ...transport])].sort();
  for (const status of statuses) {
    responses[String(status)] = {
      description: own[status] ?? ERROR_DESCRIPTIONS[status] ?? 'Error',
      headers: {
        'X-Request-Id': ref('X-Request-Id'),
        ...(route.meta.billing && !BEFORE_RATE_LIMIT.has(status) ? { 'X-Request-Cost-USD': ref('X-Request-Cost-USD') } : {}),
        // Sent on every answer that reached a rate limit, refusals included; 405 and 413 come before any.
        ...(BEFORE_RATE_LIMIT.has(status) ? {} : rateLimit),
        ...([409, 429, 503].includes(status) ? { 'Retry-After': ref('Retry-After') } : {}),
        ...(status === 405 ? { Allow: ref('Allow') } : {}),
        ...(route.meta.idempotent && !BEFORE_RATE_LIMIT.has(status) ? { 'Idempotent-Replayed': ref('Idempotent-Replayed') } : {}),
      },
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ApiError' } } },
    };
  }
  operation.responses = responses as typeof operation.responses;
}

type Schema = SchemaObject & Record<string, unknown>;

/**
 * The longest text an anchored pattern matches, for patterns made of literals, escapes, classes
 * and groups with bounded quantifiers (`{n}`, `{n,m}`, `?`) and alternatives; undefined when it is
 * unbounded (`*`, `+`, `{n,}`) or not of that form.
 */
export function longestMatch(pattern: string): number | undefined {
  if (!pattern.startsWith('^') || !pattern.endsWith('$') || pattern.endsWith('\\$')) return undefined;
  let at = 1;
  const end = pattern.length - 1;
  function sequence(): number | undefined {
    let best = 0;
    let total = 0;
    while (at < end && pattern[at] !== ')') {
      if (pattern[at] === '|') {
        at++;
        best = Math.max(best, total);
        total = 0;
        continue;
      }
      let piece: number | undefined;
      const c = pattern[at]!;
      if (c === '(') {
        at++;
        if (pattern.startsWith('?:', at)) at += 2;
        piece = sequence();
        if (pattern[at] !== ')') return undefined;
        at++;
      } else if (c === '[') {
        const close = pattern.indexOf(']', at + 2);
        if (close < 0) return undefined;
        at = close + 1;
        piece = 1;
      } else if (c === '\\') {
        at += 2;
        piece = 1;
      } else if ('*+^$'.includes(c)) {
        return undefined;
      } else {
        at++;
        piece = 1;
      }
      if (piece === undefined) return undefined;
      const quantifier = /^(?:\{(\d+)(,(\d*))?\}|\?)/.exec(pattern.slice(at));
      if (pattern[at] === '*' || pattern[at] === '+') return undefined;
      if (quantifier) {
        at += quantifier[0].length;
        if (quantifier[0] === '?') total += piece;
        else if (quantifier[2] === undefined) total += piece * Number(quantifier[1]);
        else if (quantifier[3] === '') return undefined;
        else total += piece * Number(quantifier[3]);
      } else total += piece;
    }
    return Math.max(best, total);
  }
  const longest = sequence();
  return at === end ? longest : undefined;
}

/** Every schema object below `node` (properties, items, compositions, parameters' and bodies' schemas). */
function* schemasIn(node: unknown): Generator<Schema> {
  if (Array.isArray(node)) {
    for (const item of node) yield* schemasIn(item);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const object = node as Record<string, unknown>;
  if ('type' in object || 'anyOf' in object || 'oneOf' in object || 'allOf' in object) yield object as Schema;
  for (const [key, value] of Object.entries(object)) {
    // Examples are values, not schemas.
    if (key === 'example' || key === 'examples' || key === 'x-codeSamples') continue;
    yield* schemasIn(value);
  }
}

const hasType = (schema: Schema, type: string) => schema.type === type || (Array.isArray(schema.type) && schema.type.includes(type as never));

/**
 * What the server checks and the generator cannot state: identifiers' pattern (IDENTIFIER) also as
 * their length bounds, wallet addresses' pattern (a refine in the routers), and each integer's
 * width (int32 when its bounds fit, int64 otherwise: JSON numbers, exact to 2^53).
 */
function statePatterns(doc: OpenAPIObject) {
  for (const schema of schemasIn([doc.paths, doc.components?.schemas, doc.webhooks])) {
    // A pattern of bounded pieces bounds the length too (identifiers, hashes, Stripe ids).
    if (hasType(schema, 'string') && typeof schema.pattern === 'string' && schema.maxLength === undefined) {
      const longest = longestMatch(schema.pattern);
      if (longest !== undefined) schema.maxLength = longest;
    }
    for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
      if (ADDRESS_MEMBERS.has(name) && hasType(property, 'string')) Object.assign(property, { pattern: EVM_ADDRESS_PATTERN, minLength: 42, maxLength: 42 });
    }
    if (hasType(schema, 'integer') && schema.format === undefined) {
      const fits = (n: unknown) => typeof n === 'number' && Math.abs(n) <= 2147483647;
      schema.format = fits(schema.minimum) && fits(schema.maximum) ? 'int32' : 'int64';
    }
  }
  for (const item of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(item) as Array<{ parameters?: ParameterObject[] }>) {
      for (const parameter of operation.parameters ?? []) {
        const schema = parameter.schema as Schema | undefined;
        if (schema && ADDRESS_MEMBERS.has(parameter.name) && hasType(schema, 'string')) Object.assign(schema, { pattern: EVM_ADDRESS_PATTERN, minLength: 42, maxLength: 42 });
        if (schema && parameter.in === 'query' && INSTANT_PARAMETERS.has(parameter.name) && hasType(schema, 'string')) {
          Object.assign(schema, { pattern: ISO_INSTANT_PATTERN, minLength: 10, maxLength: longestMatch(ISO_INSTANT_PATTERN) });
        }
      }
    }
  }
}
