/**
 * /openapi.json, examples: what a reader (and /docs "Try it") needs to call each route, added after
 * the operations are described (openapi.ts). The routers state each parameter's own description and
 * example in its zod schema; this module
 *  - lifts them from the parameter's schema to the parameter (where OpenAPI tools look for them),
 *  - builds each JSON body's example from its properties' examples (or the body's own `examples`),
 *  - gives every documented error status examples of our error body, with the codes and messages
 *    that route really answers,
 *  - which the code samples (openapi-code-samples.ts) are then built from.
 */
import { missingScopeMessage, SCOPES } from '../../accounts/scopes.ts';
import type { ExampleObject, OpenAPIObject, OperationObject, ParameterObject, ReferenceObject, RequestBodyObject, SchemaObject } from 'openapi3-ts/oas31';
import { ERROR_STATUS, type ErrorCode } from '../../errors.ts';
import type { Route } from './route-table.ts';

/** Ids as the service writes them (server/lib/ids.ts: a prefix and 22 base58 digits). */
export const EXAMPLE_IDS = {
  requestId: 'req_3mJr7AoUXx2WqdVb9kLs4T',
  position: 'pos_8Hn3QwZr5KcV2mTy7LpX9d',
  order: 'ord_5Tq9WmR2xKpB7nVc3HyL8e',
  webhook: 'wh_4Fk8NpQ2vRm7XcT9bLy3Wd',
  apiKey: 'key_FnfU71WQeSY3DWtAZpbSi1',
} as const;

type ErrorCase = [ErrorCode, string];

const isParameter = (p: ParameterObject | ReferenceObject): p is ParameterObject => !('$ref' in p);
const jsonSchemaOf = (operation: OperationObject): SchemaObject | undefined =>
  (operation.requestBody as RequestBodyObject | undefined)?.content?.['application/json']?.schema as SchemaObject | undefined;

export function addExamples(doc: OpenAPIObject, routes: readonly Route[]): void {
  for (const route of routes) {
    const operation = doc.paths?.[route.template]?.[route.method.toLowerCase() as 'get'];
    if (!operation) throw new Error(`OpenAPI document lacks ${route.method} ${route.template}`);
    liftParameterDocs(operation);
    addBodyExample(operation);
    addErrorExamples(operation, route, { allowed: Object.keys(doc.paths?.[route.template] ?? {}).map((m) => m.toUpperCase()), maxBodyBytes: maxBodyBytesOf(doc) });
  }
}

/** What an example of a refusal before the procedure needs to know of the document. */
interface TransportFacts {
  /** The methods of the operation's path. */
  allowed: string[];
  maxBodyBytes: number;
}

const maxBodyBytesOf = (doc: OpenAPIObject) => Number((doc.info as unknown as { 'x-request-limits'?: { maxBodyBytes?: number } })['x-request-limits']?.maxBodyBytes ?? 1_048_576);

/** The operation's path with its path parameters' examples in place, as a request names it. */
function examplePath(route: Route, operation: OperationObject): string {
  let path = route.template;
  for (const p of (operation.parameters ?? []).filter(isParameter).filter((p) => p.in === 'path')) {
    const value = parameterExample(p);
    if (value !== undefined) path = path.replace(`{${p.name}}`, encodeURIComponent(String(value)));
  }
  return `/api${path}`;
}

/**
 * A parameter's description and example, written on its schema by zod, belong on the parameter.
 * An optional parameter's example is an Example Object marked `x-disabled`: /docs shows it, and its
 * "Try it" leaves the parameter unticked until the reader wants it (a filter example sent by
 * default would narrow every answer; a fixed Idempotency-Key would replay the first one).
 */
function liftParameterDocs(operation: OperationObject) {
  for (const parameter of (operation.parameters ?? []).filter(isParameter)) {
    const schema = parameter.schema as SchemaObject | undefined;
    if (!parameter.description && schema?.description) parameter.description = schema.description;
    const value = parameter.example ?? schema?.example;
    if (schema) delete schema.example;
    delete parameter.example;
    if (value === undefined) continue;
    if (parameter.required) parameter.example = value;
    else parameter.examples = { example: { summary: `${parameter.name} example`, value, 'x-disabled': true } as ExampleObject };
  }
}

/** A parameter's example value, wherever liftParameterDocs put it. */
export function parameterExample(parameter: ParameterObject): unknown {
  if (parameter.example !== undefined) return parameter.example;
  const first = Object.values(parameter.examples ?? {})[0];
  return first && 'value' in first ? first.value : undefined;
}

/**
 * Body members that stand in for a header, per call (buy and sell's `userId` and `idempotencyKey`, for
 * the calls of a tRPC batch): a body example leaves them out, since the samples and "Try it" send the
 * headers, and both places must agree.
 */
export const PER_CALL_MEMBERS = new Set(['userId', 'idempotencyKey']);

/**
 * The body's example: the body schema's own (`.meta({ examples: [...] })` on the input, for bodies
 * whose fields exclude one another), or else every property that has an example (but PER_CALL_MEMBERS).
 */
function addBodyExample(operation: OperationObject) {
  const media = (operation.requestBody as RequestBodyObject | undefined)?.content?.['application/json'];
  const schema = jsonSchemaOf(operation);
  if (!media || !schema) return;
  const own = schema.examples?.[0];
  if (own !== undefined) {
    media.example = own;
    delete schema.examples;
    return;
  }
  const example: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const value = (property as SchemaObject).example;
    if (value !== undefined && !PER_CALL_MEMBERS.has(name)) example[name] = value;
  }
  media.example = example;
}

/** The names of the inputs a caller must send (body first), for "required" examples. */
function requiredInputs(operation: OperationObject): string[] {
  const body = jsonSchemaOf(operation)?.required ?? [];
  const query = (operation.parameters ?? []).filter(isParameter).filter((p) => p.in === 'query' && p.required).map((p) => p.name);
  return [...body, ...query];
}

function hasInput(operation: OperationObject, name: string): boolean {
  return Boolean(jsonSchemaOf(operation)?.properties?.[name]) || (operation.parameters ?? []).filter(isParameter).some((p) => p.name === name);
}

/** Route-specific refusals, by tRPC procedure path and status (the messages the handlers write). */
const ROUTE_ERRORS: Record<string, Partial<Record<number, ErrorCase[]>>> = {
  'auth.verify': {
    401: [
      ['UNAUTHORIZED', 'Sign-in refused: the message is for evil.example, not localhost:3000'],
      ['UNAUTHORIZED', 'Sign-in refused: the signature is not 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed\'s'],
      ['UNAUTHORIZED', 'Sign-in refused: no pipo_nonce cookie: send back the cookie GET /api/auth/nonce set with the nonce'],
    ],
  },
  'trading.buy': {
    402: [
      ['INSUFFICIENT_BALANCE', 'Account balance is below the cost of this request; add funds'],
      ['INSUFFICIENT_BALANCE', 'amount: this buy costs up to $100; the venue balance is $42.5'],
    ],
    403: [['INVALID_CREDENTIALS', 'No venue credentials stored: POST /api/trading/credentials first']],
    404: [['NOT_FOUND', 'eventId: no event nvidia-ipo; GET /api/trading/events lists them']],
    422: [
      ['ORDER_REJECTED', 'eventId: stripe-ipo is resolved; buys are accepted while an event is open'],
      ['IDEMPOTENCY_MISMATCH', 'Idempotency-Key: already used with a different request body; use a new key for a new request'],
    ],
    503: [['VENUE_UNAVAILABLE', 'The venue failed to place the orders; retry shortly']],
  },
  'trading.quote': {
    404: [['NOT_FOUND', 'eventId: no event nvidia-ipo; GET /api/trading/events lists them']],
    422: [['ORDER_REJECTED', 'eventId: stripe-ipo is resolved; buys are accepted while an event is open']],
    503: [['VENUE_UNAVAILABLE', 'The venue failed to read the order books; retry shortly']],
  },
  'trading.sell': {
    403: [['INVALID_CREDENTIALS', 'No venue credentials stored: POST /api/trading/credentials first']],
    404: [['POSITION_NOT_FOUND', `positionId: no position ${EXAMPLE_IDS.position}`]],
    422: [
      ['ORDER_REJECTED', `positionId: position ${EXAMPLE_IDS.position} is closed`],
      ['IDEMPOTENCY_MISMATCH', 'Idempotency-Key: already used with a different request body; use a new key for a new request'],
    ],
    503: [['VENUE_UNAVAILABLE', `The venue has not confirmed every sell order of position ${EXAMPLE_IDS.position}; POST /api/trading/orders/sync completes it`]],
  },
  'trading.sellQuote': {
    404: [['POSITION_NOT_FOUND', `positionId: no position ${EXAMPLE_IDS.position}`]],
    422: [['ORDER_REJECTED', `positionId: position ${EXAMPLE_IDS.position} is closed`]],
    503: [['VENUE_UNAVAILABLE', 'The venue failed to read the order books; retry shortly']],
  },
  'tradingSettings.storeCredentials': { 403: [['INVALID_CREDENTIALS', 'The venue refused these credentials']] },
  'tradingSettings.reset': {
    403: [['FORBIDDEN', 'Only a test key (pipo_test_…) can reset its paper account: live records are never erased']],
    422: [['ORDER_REJECTED', '1 order(s) of this user are still PENDING; POST /api/trading/orders/sync settles them, then reset']],
  },
  'positions.sync': {
    403: [['INVALID_CREDENTIALS', 'No venue credentials stored: POST /api/trading/credentials first']],
    503: [['VENUE_UNAVAILABLE', 'The Polygon RPC did not answer; retry shortly']],
  },
  'orders.sync': {
    403: [['INVALID_CREDENTIALS', 'No venue credentials stored: POST /api/trading/credentials first']],
    503: [['VENUE_UNAVAILABLE', 'The venue did not answer for any pending order; retry shortly']],
  },
  'positions.get': { 404: [['POSITION_NOT_FOUND', `id: no position ${EXAMPLE_IDS.position}`]] },
  'positions.value': { 404: [['POSITION_NOT_FOUND', `id: no position ${EXAMPLE_IDS.position}`]] },
  'orders.get': { 404: [['NOT_FOUND', `orderId: no order ${EXAMPLE_IDS.order}`]] },
  'settlements.list': { 404: [['NOT_FOUND', 'eventId: no event nvidia-ipo; GET /api/trading/events lists them']] },
  'tradingMarket.valuation': { 404: [['NOT_FOUND', 'eventSlug: no event nvidia-ipo; GET /api/trading/events lists them']] },
  'marketHistory.valuationHistory': { 404: [['NOT_FOUND', 'eventSlug: no event nvidia-ipo; GET /api/trading/events lists them']] },
  'streams.valuationCatchUp': {
    404: [['NOT_FOUND', 'eventSlug: no event nvidia-ipo; GET /api/trading/events lists them']],
    503: [['SERVICE_UNAVAILABLE', 'This server holds its maximum of 50000 public streams; retry shortly (another instance may have room)']],
  },
  'streams.accountCatchUp': { 503: [['SERVICE_UNAVAILABLE', 'The database is unavailable; retry shortly']] },
  'privateCompanies.spacex': { 404: [['NOT_FOUND', 'No company with sourceId spacex']] },
  'privateCompanies.bySourceId': { 404: [['NOT_FOUND', 'No company with sourceId acme-robotics']] },
  'privateCompanies.byId': { 404: [['NOT_FOUND', 'No company with id 99999']] },
  'keys.revoke': { 404: [['NOT_FOUND', `No active API key ${EXAMPLE_IDS.apiKey}`]] },
  'deposits.claim': { 404: [['NOT_FOUND', 'Deposits are not enabled on this server (DEPOSIT_ADDRESS and POLYGON_RPC_URL)']] },
  'events.resolve': {
    400: [['BAD_REQUEST', 'winningBandId: send exactly one of winningBandId and voided']],
    404: [['NOT_FOUND', 'eventId: no event nvidia-ipo; GET /api/trading/events lists them']],
  },
  'webhooks.delete': { 404: [['NOT_FOUND', `id: no webhook ${EXAMPLE_IDS.webhook}; GET /api/webhooks lists yours`]] },
  'webhooks.test': { 404: [['NOT_FOUND', `id: no webhook ${EXAMPLE_IDS.webhook}; GET /api/webhooks lists yours`]] },
  'webhooks.rotateSecret': { 404: [['NOT_FOUND', `id: no webhook ${EXAMPLE_IDS.webhook}; GET /api/webhooks lists yours`]] },
  'webhooks.deliveries': { 404: [['NOT_FOUND', `id: no webhook ${EXAMPLE_IDS.webhook}; GET /api/webhooks lists yours`]] },
};

/** The refusals any route of its kind gives for a status (used where ROUTE_ERRORS says nothing). */
function defaultErrors(status: number, route: Route, operation: OperationObject, facts: TransportFacts): ErrorCase[] {
  const access = route.meta.access ?? 'public';
  switch (status) {
    case 405: {
      const other = ['PATCH', 'PUT', 'DELETE', 'POST', 'GET'].find((method) => !facts.allowed.includes(method))!;
      return [['METHOD_NOT_ALLOWED', `${other} is not allowed on ${examplePath(route, operation)}; use ${facts.allowed.join(' or ')}`]];
    }
    case 413:
      return [['PAYLOAD_TOO_LARGE', `Request body exceeds ${facts.maxBodyBytes} bytes`]];
    case 415:
      return [['UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json']];
    case 400: {
      const [required] = requiredInputs(operation);
      const cases: ErrorCase[] = [['BAD_REQUEST', required ? `${required}: required` : 'Unknown parameter: colour']];
      if (hasInput(operation, 'floorL')) cases.push(['INVALID_FLOOR', 'floorL: Too big: expected number to be <=1']);
      return cases;
    }
    case 401:
      if (access === 'session') return [['UNAUTHORIZED', 'Session expired or signed out: sign in again (GET /api/auth/nonce, POST /api/auth/verify)']];
      if (access === 'dashboard') return [['UNAUTHORIZED', 'This route needs a dashboard key in x-api-key']];
      return [['UNAUTHORIZED', 'Invalid API key']];
    case 402:
      return [['INSUFFICIENT_BALANCE', 'Account balance is below the cost of this request; add funds']];
    case 403:
      return [
        ...(route.meta.scope ? ([['FORBIDDEN', missingScopeMessage(route.meta.scope, SCOPES.filter((s) => s !== route.meta.scope).slice(0, 1))]] as ErrorCase[]) : []),
        ...originRefusal(route),
      ];
    case 404:
      return [['NOT_FOUND', 'No account acme; creating its first key (POST /api/keys) creates it']];
    case 409:
      return [['IDEMPOTENCY_IN_PROGRESS', 'Idempotency-Key: the first request with this key is still running; retry shortly']];
    case 429:
      return [['RATE_LIMITED', 'Too many requests; retry after 1s and back off exponentially']];
    case 500:
      return [['INTERNAL_ERROR', 'Internal error; quote the request id to support']];
    case 503:
      return [['SERVICE_UNAVAILABLE', 'The database is unavailable; retry shortly']];
    default:
      throw new Error(`OpenAPI: no error example for status ${status} (${route.method} ${route.template})`);
  }
}

/** The refused browser Origin every operation may answer (403 FORBIDDEN_ORIGIN). */
function originRefusal(route: Route): ErrorCase[] {
  return route.type === 'mutation'
    ? [['FORBIDDEN_ORIGIN', 'A request that changes something with a session cookie must come from https://pre-ipo.example (its Origin header is https://elsewhere.example)']]
    : [['FORBIDDEN_ORIGIN', 'Origin https://elsewhere.example is not allowed']];
}

function addErrorExamples(operation: OperationObject, route: Route, facts: TransportFacts) {
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    if (Number(status) < 400) continue;
    const media = response.content?.['application/json'];
    if (!media) continue;
    const own = ROUTE_ERRORS[route.procedurePath]?.[Number(status)];
    // Every operation may answer a refused browser Origin (403 FORBIDDEN_ORIGIN), beside its own 403s.
    const cases = own ? (Number(status) === 403 ? [...own, ...defaultErrors(403, route, operation, facts)] : own) : defaultErrors(Number(status), route, operation, facts);
    const examples: Record<string, ExampleObject> = {};
    for (const [code, message] of cases) {
      if (ERROR_STATUS[code] !== Number(status)) throw new Error(`OpenAPI: ${code} is not a ${status} (${route.method} ${route.template})`);
      // Two refusals with one code (e.g. the account's balance, the venue's) are two examples.
      const name = code in examples ? `${code}_${Object.keys(examples).length + 1}` : code;
      examples[name] = { summary: code, value: { code, message, status: Number(status), requestId: EXAMPLE_IDS.requestId } };
    }
    media.examples = examples;
  }
}
