/**
 * The REST stream routes, GET /api/trading/stream and GET /api/trading/stream/account, registered in
 * app.ts ahead of the REST bridge (whose answers are JSON text). Each runs its procedure of
 * routers/streams.ts through its compiled definition, exactly as the bridge would — the same
 * gate, so 400/401/402/404/429 come first, in our error shape — then:
 *  - with `Accept: text/event-stream` (every EventSource sends it): a `text/event-stream` response
 *    whose body is the sink the resolver opened (catch-up, then live messages, heartbeats);
 *  - otherwise: the procedure's JSON answer (the catch-up and the id to resume from), as /trpc gives it.
 * The transport parameter, as on the bridge: `apiKey` (the key, for clients that cannot send headers,
 * such as a browser's EventSource). The account route's user may be `?userId=`, its input member like
 * on every trading route (x-user-id too; both must agree). `Last-Event-ID` (what EventSource sends
 * when it reconnects) wins over `lastEventId`.
 */
import { queryInput } from './rest-bridge.ts';
import { restInputConversion, type RestInputConversion } from './rest-input.ts';
import { catalogOf } from '../procedures/catalog.ts';
import { compileDefinition, type CompiledProcedure } from '../procedures/runner.ts';
import { jsonText } from '../../lib/reusable-json.ts';
import type { RequestContext } from '../procedures/context.ts';
import { beginOpening } from '../procedures/open-stream.ts';
import { ACCOUNT_STREAM_PATH, VALUATION_STREAM_PATH } from '../../streams/registry.ts';

const ROUTES: Record<string, { procedure: 'valuationCatchUp' | 'accountCatchUp'; transportParams: ReadonlySet<string> }> = {
  [VALUATION_STREAM_PATH]: { procedure: 'valuationCatchUp', transportParams: new Set(['apiKey']) },
  [ACCOUNT_STREAM_PATH]: { procedure: 'accountCatchUp', transportParams: new Set(['apiKey']) },
};

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  // Proxies that buffer responses (nginx) pass this one through as it is written.
  'x-accel-buffering': 'no',
};

type Compiled = { run: CompiledProcedure; convert: RestInputConversion };

/** Whether app.ts hands this request to the stream routes (a GET on one of their paths). */
export function isStreamRoute(request: Request, path: string): boolean {
  return request.method === 'GET' && Object.hasOwn(ROUTES, path);
}

export function acceptsEventStream(accept: string | null): boolean {
  if (!accept) return false;
  return accept.split(',').some((range) => {
    const [type, ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    return type === 'text/event-stream' && !params.some((p) => /^q=0(\.0*)?$/.test(p));
  });
}

/**
 * The stream routes of an app router (its `streams.*` procedures, compiled once). `serve` answers a
 * stream route; it throws (an ApiError, or what the procedure threw) for app.ts to answer in our shape.
 */
export function createStreamRoutes(router: object) {
  const compiled = new Map<string, Compiled>();
  for (const { path, definition } of catalogOf(router)) {
    if (path.startsWith('streams.')) compiled.set(path, { run: compileDefinition(definition), convert: restInputConversion(definition.input) });
  }
  for (const { procedure } of Object.values(ROUTES)) {
    if (!compiled.has(`streams.${procedure}`)) throw new Error(`the app router has no streams.${procedure} for its stream route`);
  }
  return { serve: (request: Request, ctx: RequestContext) => serveStreamRoute(compiled, request, ctx) };
}

async function serveStreamRoute(compiled: Map<string, Compiled>, request: Request, ctx: RequestContext): Promise<Response> {
  const route = ROUTES[ctx.path]!;
  const input = queryInput(ctx, route.transportParams);
  const lastEventId = request.headers.get('last-event-id');
  if (lastEventId !== null) input.lastEventId = lastEventId;

  const procedurePath = `streams.${route.procedure}`;
  const { run, convert } = compiled.get(procedurePath)!;
  ctx.logFields.route = `GET ${ctx.path}`;
  const rawInput = convert(input);
  if (!acceptsEventStream(request.headers.get('accept'))) {
    const data = await run({ ctx, path: procedurePath, rawInput });
    return new Response(jsonText(data), { status: 200, headers: { 'content-type': 'application/json' } });
  }
  const opening = beginOpening(ctx);
  try {
    await run({ ctx, path: procedurePath, rawInput });
  } catch (error) {
    opening.sink?.close();
    throw error;
  }
  const sink = opening.sink;
  if (!sink) throw new Error(`${procedurePath} opened no stream`);
  return new Response(sink.body, { status: 200, headers: SSE_HEADERS });
}
