/**
 * REST on /api: resolves a request to a procedure through the route table and runs its compiled
 * definition (procedures/runner.ts) with the same context and gates as /trpc. Built once at start; per request it only matches, reads the
 * input and calls. Paths and parameters come from the procedures' openapi meta, which is also what
 * trpc-to-openapi documents in /openapi.json.
 *
 * Inputs: GET/DELETE take query parameters (a repeated name becomes a list, which scalar
 * parameters refuse); POST/PUT/PATCH take a JSON object body (an empty body counts as `{}`); a
 * body that is not one reaches the procedure as a deferred error (401 comes first).
 * Path parameters are URL-decoded and win over body or query members of the same name.
 */
import { publicErrorOf } from '../procedures/trpc-errors.ts';
import { ApiError, type PublicError } from '../../errors.ts';
import { jsonText } from '../../lib/reusable-json.ts';
import type { RequestContext } from '../procedures/context.ts';
import { readBodyText } from './body-reader.ts';
import { deferredInput, type DeferredInput } from '../procedures/deferred-input.ts';
import { answerWithFile, StreamedFile } from '../procedures/streamed-file.ts';
import { readJsonInput } from './json-input.ts';
import { RouteTable } from './route-table.ts';
import type { RestInputConversion } from './rest-input.ts';

export const REST_PREFIX = '/api';
/** Query parameters consumed by the transport, never passed to a procedure. */
const TRANSPORT_PARAMS = new Set(['apiKey']);

export interface RestOutcome {
  status: number;
  /** JSON text ('' when the procedure answered a file: the response serves the file, see answeredFile). */
  body: string;
  /** Set when the request failed; the caller logs 5xx causes. */
  error?: { body: PublicError; cause: unknown };
}

export function createRestBridge(router: object) {
  const table = new RouteTable(router);

  /** Answers synchronously when the route's procedure does (no body to read, no I/O on the way). */
  function handle(request: Request, ctx: RequestContext, maxBodyBytes: number): RestOutcome | Promise<RestOutcome> {
    const failed = (cause: unknown): RestOutcome => {
      const body = publicErrorOf(cause, ctx.requestId);
      return { status: body.status, body: JSON.stringify(body), error: { body, cause } };
    };
    try {
      const path = ctx.path.slice(REST_PREFIX.length) || '/';
      const match = table.match(request.method, path);
      if (!match) {
        const allowed = table.allowedMethods(path);
        if (allowed.length === 0) throw new ApiError('NOT_FOUND', `No route ${request.method} ${ctx.path}`);
        ctx.resHeaders['Allow'] = allowed.join(', ');
        throw new ApiError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${ctx.path}; use ${allowed.join(' or ')}`);
      }
      const { route } = match;
      ctx.logFields.route = route.label;
      // Query and path parameters are text, converted to the schema's numbers and lists; a JSON body's members are typed already.
      const call = (input: Record<string, unknown>, isText: boolean): RestOutcome | Promise<RestOutcome> => {
        const rawInput = isText ? route.convert(withPathParams(input, match.params)) : withPathParams(input, match.params, route.convert);
        const data = route.run({ ctx, path: route.procedurePath, rawInput });
        const success = (value: unknown): RestOutcome => {
          if (!(value instanceof StreamedFile)) return { status: route.meta.successStatus ?? 200, body: jsonText(value) };
          answerWithFile(ctx, value);
          return { status: route.meta.successStatus ?? 200, body: '' };
        };
        return data instanceof Promise ? data.then(success).catch(failed) : success(data);
      };
      if (request.method === 'GET' || request.method === 'DELETE') return call(queryInput(ctx), true);
      return readBody(request, maxBodyBytes)
        .then((body) => call(body, false))
        .catch(failed);
    } catch (cause) {
      return failed(cause);
    }
  }

  return { handle, table };
}

/** Path parameters, URL-decoded (and converted, beside a body), win over body or query members of the same name. */
function withPathParams(input: Record<string, unknown>, params: Record<string, string>, convert?: RestInputConversion): Record<string, unknown> {
  let decoded: Record<string, unknown> | undefined;
  for (const name in params) {
    decoded ??= {};
    try {
      decoded[name] = decodeURIComponent(params[name]!);
    } catch {
      throw new ApiError('BAD_REQUEST', `${name}: malformed percent-encoding in the path`);
    }
  }
  if (!decoded) return input;
  return { ...input, ...(convert ? convert(decoded) : decoded) };
}

/**
 * GET and DELETE take query parameters; a repeated name becomes a list. Linear: a repeat appends to
 * its list (app.ts has already refused more than MAX_QUERY_PARAMS parameters). Transport parameters
 * (`apiKey`; the stream routes add `userId`) are not input.
 */
export function queryInput(ctx: RequestContext, transportParams: ReadonlySet<string> = TRANSPORT_PARAMS): Record<string, unknown> {
  // No prototype: a parameter named `constructor` or `__proto__` is just an unknown parameter.
  const query: Record<string, string | string[]> = Object.create(null);
  for (const [name, value] of ctx.query()) {
    if (transportParams.has(name)) continue;
    const seen = query[name];
    if (seen === undefined) query[name] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else query[name] = [seen, value];
  }
  return query;
}

/**
 * POST, PUT and PATCH take a JSON object body; an empty body counts as `{}`. A body over the limit is
 * refused now (413, before reading the rest); a body of the wrong type, malformed or nested too deep
 * becomes a deferred input error, answered after authentication (procedures/deferred-input.ts).
 */
async function readBody(request: Request, maxBodyBytes: number): Promise<Record<string, unknown> | DeferredInput> {
  const text = await readBodyText(request, maxBodyBytes);
  const input = readJsonInput(text, { contentType: request.headers.get('content-type'), notAnObject: 'not-an-object' });
  if ('blank' in input) return {};
  if ('problem' in input) return deferredInput(input.problem);
  return input.value as Record<string, unknown>;
}
