/**
 * The MCP tools: one per procedure an API key can call, built once from the procedure catalog
 * (procedures/catalog.ts) — name, description, input and output JSON Schema from the same zod
 * definitions /openapi.json is generated from, the scope it needs, and annotations that tell an agent
 * which tools only read and which spend money (docs/mcp.md).
 *
 * Left out: routes for the dashboard key or a browser session (an operator's or a signed-in person's,
 * never an API key's), subscriptions (the streams have catch-up queries, which are tools), files
 * streamed as they are produced (the company export), and procedures whose meta says `mcp: false`
 * (wallet sign-in, which a browser does).
 */
import { z } from 'zod';
import { SCOPE_DESCRIPTIONS, allows, type Scope } from '../../accounts/scopes.ts';
import { catalogOf } from '../procedures/catalog.ts';
import type { ProcedureKind } from '../procedures/definition.ts';

export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface McpTool {
  /** The tool's name: the procedure's dotted path with `_` for `.` (`trading_buy`), which every MCP client accepts. */
  name: string;
  /** The procedure's dotted path, e.g. `trading.buy`. */
  procedurePath: string;
  kind: Exclude<ProcedureKind, 'subscription'>;
  /** The scope a key needs (absent: public market data, any key). */
  scope?: Scope;
  description: string;
  inputSchema: JsonObjectSchema;
  outputSchema?: JsonObjectSchema;
  annotations: ToolAnnotations;
}

export type JsonObjectSchema = { type: 'object'; [member: string]: unknown };

const TOOL_ACCESS = new Set(['public', 'key', 'user']);

/** The JSON Schema of a zod schema, for one direction; an object schema, or undefined. */
function objectSchema(schema: z.ZodType | undefined, io: 'input' | 'output'): JsonObjectSchema | undefined {
  if (!schema) return undefined;
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  delete json.$schema;
  return json.type === 'object' ? (json as JsonObjectSchema) : undefined;
}

const toolName = (path: string) => path.replaceAll('.', '_');

function describe(summary: string | undefined, detail: string | undefined, billing: string | undefined, scope: Scope | undefined): string {
  const price = billing === 'premium' ? 'Billed per call at the private-company (premium) rate.' : billing ? 'Billed per call at the standard rate.' : 'Free (public market data).';
  const needs = scope ? ` Needs the key scope ${scope} (${SCOPE_DESCRIPTIONS[scope]}).` : '';
  return [summary, detail, `${price}${needs}`].filter(Boolean).join('\n\n');
}

/** Every tool of the router, in the catalog's order. Throws at start-up for a schema the tools cannot state. */
export function mcpToolsOf(router: object): McpTool[] {
  const tools: McpTool[] = [];
  for (const { path, definition } of catalogOf(router)) {
    const { kind, meta } = definition;
    if (kind === 'subscription' || meta.files || meta.mcp === false || !TOOL_ACCESS.has(meta.access ?? 'public')) continue;
    const method = meta.openapi?.method;
    const spends = meta.scope === 'trading:write';
    const inputSchema = objectSchema(definition.input, 'input') ?? { type: 'object', properties: {} };
    tools.push({
      name: toolName(path),
      procedurePath: path,
      kind,
      scope: meta.scope,
      description: describe(meta.openapi?.summary, meta.openapi?.description, meta.billing, meta.scope),
      inputSchema,
      outputSchema: objectSchema(definition.output, 'output'),
      annotations: {
        title: meta.openapi?.summary ?? path,
        readOnlyHint: kind === 'query',
        // A mutation that trades, removes or replaces something; creating a webhook or storing a setting is not destructive.
        destructiveHint: kind === 'mutation' && (spends || method === 'DELETE' || method === 'PUT'),
        // Buys and sales take an idempotencyKey: with the same key a retry answers the first outcome.
        idempotentHint: kind === 'query' || method === 'PUT' || method === 'DELETE',
        // Trading reaches the venue (Polymarket, or the paper venue standing in for it).
        openWorldHint: spends,
      },
    });
  }
  return tools;
}

/** The tools a key holding `held` (null: every scope) may call: those without a scope, and those of its scopes. */
export const toolsFor = (tools: readonly McpTool[], held: readonly string[] | null) => tools.filter((t) => !t.scope || allows(held, t.scope));
