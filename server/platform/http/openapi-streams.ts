/**
 * /openapi.json for the live stream routes (routers/streams.ts): trpc-to-openapi documents their JSON
 * form; this adds what it cannot know — the `text/event-stream` response (the stream itself), the
 * Last-Event-ID header, — and their tag (the account route's `userId` is its input's member, as on every trading route).
 * Likewise for the routes that answer a streamed file (their meta's `files`): the file's media types
 * in place of JSON, and its Content-Disposition. Called by openapi.ts after every operation is described.
 */
import type { OpenAPIObject, OperationObject, ParameterObject } from 'openapi3-ts/oas31';
import type { Route } from './route-table.ts';

const TAG = {
  name: 'Live streams',
  description:
    'Server-sent events: live valuations (public) and the user\'s own account events (billed per minute held). Send `Accept: text/event-stream` (EventSource does); resume with Last-Event-ID. Also over /trpc as the subscriptions streams.valuation and streams.account. See docs/streams.md.',
};

const VALUATION_EXAMPLE = `id: 1764000000123-0-k3x9q1
data: {"event":{"name":"SpaceX IPO","slug":"spacex-ipo",…},"bands":[…],"valuation":{…},"impliedValuation":412.5,…,"timestamp":"2026-11-24T16:00:00.123Z"}

: ping

`;

const ACCOUNT_EXAMPLE = `id: 41
data: {"seq":41,"id":"evt_…","type":"order.filled","userId":"0xabc…","data":{…},"timestamp":"2026-11-24T16:00:00.123Z"}

event: ready
id: 41
data: {"type":"ready","lastEventId":"41"}

: ping

`;

function lastEventIdHeader(example: string): ParameterObject {
  return {
    in: 'header',
    name: 'Last-Event-ID',
    required: false,
    description: 'The `id` of the last message received (EventSource sends it when it reconnects): the stream resumes after it. Wins over the lastEventId parameter',
    schema: { type: 'string', maxLength: 1000 },
    example,
  };
}

function addStreamResponse(operation: OperationObject, description: string, example: string) {
  const success = operation.responses?.['200'];
  if (!success || '$ref' in success) throw new Error('OpenAPI: a stream route lacks its 200 response');
  success.description = 'The stream (with Accept: text/event-stream), or its opening messages as JSON';
  success.content = {
    'text/event-stream': { schema: { type: 'string', description }, example },
    ...success.content,
  };
}

export function describeStreamRoutes(doc: OpenAPIObject): void {
  const valuation = doc.paths?.['/trading/stream']?.get;
  const account = doc.paths?.['/trading/stream/account']?.get;
  if (!valuation || !account) throw new Error('OpenAPI document lacks the stream routes');
  doc.tags = [...(doc.tags ?? []).filter((t) => t.name !== TAG.name), TAG];

  addStreamResponse(
    valuation,
    'Server-sent events. Each message: `id: <ms>-<n>-<tag>` and `data:` the /trading/valuation object (default floors) of one event, whose `timestamp` is the market snapshot it comes from. First the current valuation of each requested event (after a Last-Event-ID: of each one that changed since, once, at its current value), then one message per snapshot that changes an event. `: ping` comments keep the connection alive. A client too slow to read is dropped with a final comment and resumes with Last-Event-ID.',
    VALUATION_EXAMPLE,
  );
  addStreamResponse(
    account,
    'Server-sent events. Each message: `id:` (a resume point) and `data:` {seq, id, type, userId, data, timestamp}, one per order.filled, order.rejected, position.opened/closed/settled, event.resolved (this user\'s, userId set) and deposit.credited, balance.low, balance.changed (the account\'s, userId null). After the catch-up, an `event: ready` message carries the current resume id. `: ping` comments keep the connection alive. When a per-minute charge is refused the stream ends with `event: error` and our error body (401 or 402).',
    ACCOUNT_EXAMPLE,
  );

  for (const [operation, resumeId] of [
    [valuation, '1764000000123-0-k3x9q1'],
    [account, '41'],
  ] as const) {
    const parameters = (operation.parameters ?? []) as ParameterObject[];
    const at = parameters.findIndex((p) => p.in === 'header');
    parameters.splice(at < 0 ? parameters.length : at, 0, lastEventIdHeader(resumeId));
    operation.parameters = parameters;
  }
  for (const p of valuation.parameters as ParameterObject[]) if (p.name === 'eventSlug') p.required = true;
}

/**
 * Routes whose answer is a file streamed as it is produced (meta `files`, procedures/streamed-file.ts):
 * the success is the file in one of its media types (the generator can only say JSON), with the
 * name to save it under.
 */
export function describeFileRoutes(doc: OpenAPIObject, routes: readonly Route[]): void {
  for (const route of routes) {
    const files = route.meta.files;
    if (!files) continue;
    const success = doc.paths?.[route.template]?.[route.method.toLowerCase() as 'get']?.responses?.[String(route.meta.successStatus ?? 200)];
    if (!success || '$ref' in success) throw new Error(`OpenAPI: ${route.method} ${route.template} lacks its success response`);
    success.description = 'The file, streamed as it is produced (chunked transfer); its cost was charged before the first byte (X-Request-Cost-USD)';
    success.content = Object.fromEntries(Object.entries(files).map(([type, description]) => [type, { schema: { type: 'string', description } }]));
    success.headers = {
      ...success.headers,
      'Content-Disposition': {
        description: 'attachment, with the name to save the file under',
        schema: { type: 'string', maxLength: 255, example: 'attachment; filename=companies-2026-11-22.ndjson' },
      },
    };
  }
}
