/**
 * A tool call is a call of its procedure on /trpc, made through the app's own request handling
 * (app.ts `handle`) with the caller's key, trading user and address: so it is authenticated, checked,
 * rate limited, scoped and billed exactly as the same call from a typed client — one code path, no
 * second set of rules to keep in step (docs/decisions.md §3, "MCP"). Its answer becomes the tool's
 * result: the procedure's answer as text and as structured content, or our error as a tool error
 * (`isError`), with the request's cost, status and id in `_meta`.
 */
import type { McpTool } from './tools.ts';

/** What the /mcp request passes on to the calls it makes. */
export interface Caller {
  /** The presented API key (x-api-key, or Authorization: Bearer), if any. */
  key: string | null;
  /** The x-user-id header of the /mcp request, if any (a tool's `userId` argument names the user per call). */
  userId: string | null;
}

/** Answers a request as the app answers any request from this client's address. */
export type Dispatch = (request: Request) => Response | Promise<Response>;

/** The `_meta` members of every result (an MCP `_meta` key may carry a `name/` prefix). */
export const META = { cost: 'pre-ipo/costUsd', status: 'pre-ipo/status', requestId: 'pre-ipo/requestId' } as const;

export interface CallOutcome {
  ok: boolean;
  status: number;
  /** The procedure's answer (ok), or our error body (status, code, message, requestId). */
  body: unknown;
  meta: Record<string, string | number>;
}

/** The base the internal requests are addressed to (only their path and query are read). */
const INTERNAL_ORIGIN = 'http://mcp.internal';

export async function callProcedure(dispatch: Dispatch, caller: Caller, tool: McpTool, args: Record<string, unknown>): Promise<CallOutcome> {
  const headers = new Headers({ accept: 'application/json' });
  if (caller.key !== null) headers.set('x-api-key', caller.key);
  if (caller.userId !== null) headers.set('x-user-id', caller.userId);
  const input = JSON.stringify(args);
  const request =
    tool.kind === 'query'
      ? new Request(`${INTERNAL_ORIGIN}/trpc/${tool.procedurePath}?input=${encodeURIComponent(input)}`, { headers })
      : new Request(`${INTERNAL_ORIGIN}/trpc/${tool.procedurePath}`, { method: 'POST', headers: withJson(headers), body: input });
  const response = await dispatch(request);
  const answer = (await response.json()) as { result?: { data: unknown }; error?: { message: string; data?: { api?: unknown } } };
  const meta: Record<string, string | number> = { [META.status]: response.status };
  // What the call was charged ("0" for a free one, which has no cost header).
  meta[META.cost] = response.headers.get('x-request-cost-usd') ?? '0';
  const requestId = response.headers.get('x-request-id');
  if (requestId !== null) meta[META.requestId] = requestId;
  if (response.ok && answer.result) return { ok: true, status: response.status, body: answer.result.data, meta };
  return { ok: false, status: response.status, body: answer.error?.data?.api ?? { status: response.status, message: answer.error?.message ?? 'failed' }, meta };
}

function withJson(headers: Headers) {
  headers.set('content-type', 'application/json');
  return headers;
}

/** The MCP tool result of a call. */
export function toolResult(tool: McpTool, outcome: CallOutcome) {
  const text = JSON.stringify(outcome.body);
  if (!outcome.ok) {
    const error = outcome.body as { code?: string; message?: string };
    return { isError: true, content: [{ type: 'text' as const, text: `${error.code ?? outcome.status}: ${error.message ?? ''}\n${text}` }], _meta: outcome.meta };
  }
  return {
    content: [{ type: 'text' as const, text }],
    ...(tool.outputSchema ? { structuredContent: outcome.body as Record<string, unknown> } : {}),
    _meta: outcome.meta,
  };
}
