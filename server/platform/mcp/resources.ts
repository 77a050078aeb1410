/**
 * MCP resources: read-only context an agent can attach without a tool call — the tradable events,
 * the price list, and a private company's profile by id (a template). Each is read by calling the
 * tool of the same operation (tool-calls.ts), so a resource costs what its operation costs (the
 * event list and prices are free; a company profile is billed at the premium rate, data:read).
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallOutcome } from './tool-calls.ts';

const JSON_TYPE = 'application/json';

export const RESOURCES = [
  { uri: 'pre-ipo://trading/events', name: 'events', title: 'Tradable IPO valuation events', description: 'Every event with its bands, status and aliases (free).', mimeType: JSON_TYPE },
  { uri: 'pre-ipo://pricing', name: 'pricing', title: 'Prices of the API', description: 'What each kind of call costs (free).', mimeType: JSON_TYPE },
];

export const RESOURCE_TEMPLATES = [
  {
    uriTemplate: 'pre-ipo://private-companies/{id}',
    name: 'private-company',
    title: 'A private company\'s profile',
    description: 'One company with its rounds, valuations, investors and the source and date of every figure. Billed at the premium rate (data:read).',
    mimeType: JSON_TYPE,
  },
];

/** The tool and arguments a resource URI reads, or null. */
function toolOf(uri: string): { tool: string; args: Record<string, unknown> } | null {
  if (uri === 'pre-ipo://trading/events') return { tool: 'tradingMarket_events', args: {} };
  if (uri === 'pre-ipo://pricing') return { tool: 'pricing_get', args: {} };
  // A company's id is its number (as GET /api/private-companies lists it).
  const company = /^pre-ipo:\/\/private-companies\/(\d{1,15})$/.exec(uri);
  if (company) return { tool: 'privateCompanies_byId', args: { id: Number(company[1]) } };
  return null;
}

/** The resource's contents, or a JSON-RPC error with our error body as its data. */
export async function readResource(uri: string, call: (tool: string, args: Record<string, unknown>) => Promise<CallOutcome>) {
  const target = toolOf(uri);
  if (!target) throw new McpError(-32002, `Resource not found: ${uri}; resources/list and resources/templates/list name them`);
  const outcome = await call(target.tool, target.args);
  if (!outcome.ok) {
    const body = outcome.body as { code?: string; message?: string };
    throw new McpError(outcome.status === 404 ? -32002 : ErrorCode.InvalidRequest, `${body.code ?? outcome.status}: ${body.message ?? ''}`, { error: outcome.body, ...outcome.meta });
  }
  return { contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(outcome.body) }], _meta: outcome.meta };
}
