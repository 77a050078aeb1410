/**
 * /mcp: the Model Context Protocol over Streamable HTTP (the official SDK's web-standard transport),
 * stateless — each POST gets its own server object, so any instance answers any message and nothing
 * is held between them (GET and DELETE, which serve sessions and server-sent streams, are 405).
 *
 * Who may do what:
 * - every message needs an API key (x-api-key, or Authorization: Bearer), as the billed routes do;
 * - protocol messages (initialize, tools/list, resources/list, ping) are free but authenticated: the
 *   key is looked up (a bad key is 401 in our error shape and counted against the address like any
 *   failed authentication), and each takes a token from the key's rate-limit bucket, so listing is
 *   not a free way to load the database;
 * - tools/call and resources/read are calls of the procedure on /trpc (tool-calls.ts): the call itself
 *   authenticates, limits, scopes and bills, and a refusal (401, 402, 403, 429…) is the tool's error.
 * tools/list shows only the tools the key's scopes allow.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { hashApiKey, isApiKeyShaped } from '../../accounts/api-keys.ts';
import { ApiError, errorResponse } from '../../errors.ts';
import { readBodyText } from '../http/body-reader.ts';
import { isDashboardKey } from '../procedures/access.ts';
import type { RequestContext } from '../procedures/context.ts';
import { authFailed, authenticate, refuseBlockedClient } from '../procedures/key-gate.ts';
import { applyRateLimit } from '../procedures/rate-limits.ts';
import { publicErrorOf } from '../procedures/trpc-errors.ts';
import { readResource, RESOURCES, RESOURCE_TEMPLATES } from './resources.ts';
import { callProcedure, toolResult, type Caller, type Dispatch } from './tool-calls.ts';
import { toolsFor, type McpTool } from './tools.ts';

export const MCP_PATH = '/mcp';

const INSTRUCTIONS =
  'Pre-IPO API: IPO valuation markets (Polymarket bands) priced as LONG/SHORT units, paper or live trading of them, and private-company data (companies, rounds, investors, each figure with its source and date). ' +
  'Every tool is one API operation with the same price, scopes and rate limits as on /api; a billed call says its cost in _meta["pre-ipo/costUsd"]. ' +
  'Tools that trade (trading_buy, trading_sell) spend money on the key\'s venue: quote first (trading_quote, trading_sellQuote), and pass an idempotencyKey so a retry never trades twice. ' +
  'Trading tools act for a trading user: pass userId (or send the x-user-id header with the connection). ' +
  'A test key (pipo_test_…) trades on the paper venue at live prices, free, with records of its own: use one to try a strategy.';

export interface McpEndpointOptions {
  tools: McpTool[];
  maxBodyBytes: number;
  version: string;
}

/** The key the /mcp request presents: x-api-key, else an Authorization bearer token. */
function presentedKey(headers: Headers): string | null {
  const header = headers.get('x-api-key');
  if (header !== null) return header;
  const authorization = headers.get('authorization');
  const bearer = authorization && /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return bearer ? bearer[1]! : null;
}

/** Calls that run a procedure (and authenticate, limit and bill themselves); every other message is checked here. */
const CALLS = new Set(['tools/call', 'resources/read']);

export function createMcpEndpoint(options: McpEndpointOptions) {
  const byName = new Map(options.tools.map((t) => [t.name, t]));

  /** The protocol messages' check: a valid API key with a token left in its bucket; its scopes. */
  async function admitListing(ctx: RequestContext, key: string | null): Promise<readonly string[] | null> {
    if (key === null) throw new ApiError('UNAUTHORIZED', 'Missing API key: send the x-api-key header (or Authorization: Bearer <key>)');
    await refuseBlockedClient(ctx);
    const check = {};
    if (!isApiKeyShaped(key) || isDashboardKey(ctx.services, key)) throw await authFailed(ctx, check, new ApiError('UNAUTHORIZED', 'Invalid API key'));
    await applyRateLimit(ctx, `key:${hashApiKey(key).slice(0, 32)}`, ctx.services.config.rateLimits.key);
    const principal = await authenticate(ctx, check, key);
    return principal.scopes;
  }

  function serverFor(caller: Caller, scopes: readonly string[] | null, dispatch: Dispatch) {
    const server = new Server({ name: 'pre-ipo-api', version: options.version }, { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: toolsFor(options.tools, scopes).map(({ name, description, inputSchema, outputSchema, annotations }) => ({ name, description, inputSchema, ...(outputSchema ? { outputSchema } : {}), annotations })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const tool = byName.get(request.params.name);
      if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${request.params.name}; tools/list names them`);
      return toolResult(tool, await callProcedure(dispatch, caller, tool, request.params.arguments ?? {}));
    });
    server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: RESOURCES }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
    server.setRequestHandler(ReadResourceRequestSchema, (request) => readResource(request.params.uri, (name, args) => callProcedure(dispatch, caller, byName.get(name)!, args)));
    return server;
  }

  /** Answers one POST; `dispatch` answers the calls it makes as the app answers this client's requests. */
  return async function serve(request: Request, ctx: RequestContext, dispatch: Dispatch): Promise<Response> {
    if (request.method !== 'POST') {
      return errorResponse(publicErrorOf(new ApiError('METHOD_NOT_ALLOWED', 'This MCP server is stateless: send every message as a POST to /mcp'), ctx.requestId), { Allow: 'POST' });
    }
    const text = await readBodyText(request, options.maxBodyBytes);
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return Response.json({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.ParseError, message: 'Parse error: the body is not JSON' } }, { status: 400 });
    }
    const messages = Array.isArray(message) ? message : [message];
    const caller: Caller = { key: presentedKey(request.headers), userId: request.headers.get('x-user-id') };
    const onlyCalls = messages.every((m) => typeof m === 'object' && m !== null && (CALLS.has((m as { method?: string }).method ?? '') || !('method' in m)));
    let scopes: readonly string[] | null = null;
    try {
      if (!onlyCalls || caller.key === null) scopes = await admitListing(ctx, caller.key);
    } catch (cause) {
      const body = publicErrorOf(cause, ctx.requestId);
      return errorResponse(body, body.status === 401 ? { 'WWW-Authenticate': 'Bearer realm="pre-ipo-api"' } : {});
    }
    const server = serverFor(caller, scopes, dispatch);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, { parsedBody: message });
    } finally {
      await server.close();
    }
  };
}
