/**
 * The service's MCP server (/mcp, Streamable HTTP) for desktop agents that start MCP servers as
 * programs and talk to them over stdio: each JSON-RPC message read from stdin (one per line, as MCP's
 * stdio transport frames them) is POSTed to the service's /mcp with the key, and each message the
 * service answers is written to stdout, one per line. The server is stateless, so the bridge holds
 * nothing but the connection settings; it only moves messages and speaks no protocol of its own (no
 * dependency: the tools, their schemas and their billing are all the service's).
 *
 *   npx @pre-ipo/client mcp --url https://api.example.com --key pipo_…   (or PIPO_BASE_URL, PIPO_API_KEY; PIPO_USER_ID)
 */
import { createInterface } from 'node:readline';

export interface BridgeSettings {
  /** The service's base URL (https://…), without /mcp. */
  baseUrl: string;
  apiKey: string;
  /** A trading user for every call (the x-user-id header); tools also take `userId`. */
  userId?: string;
}

type Message = { jsonrpc: '2.0'; id?: string | number | null; method?: string };

/** The messages of a response: a JSON body (one message or an array), or the `data:` events of a stream. */
async function messagesOf(response: Response): Promise<unknown[]> {
  const text = await response.text();
  if (!text.trim()) return [];
  if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    return text
      .split(/\r?\n\r?\n/)
      .map((event) => event.split(/\r?\n/).filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trimStart()).join('\n'))
      .filter(Boolean)
      .map((data) => JSON.parse(data));
  }
  const body = JSON.parse(text);
  return Array.isArray(body) ? body : [body];
}

/** A JSON-RPC error for a request the service refused outright (401, 429, 5xx…), in its words. */
function refusal(message: Message, status: number, body: string): unknown {
  let detail: unknown = body;
  try {
    detail = JSON.parse(body);
  } catch {
    // not JSON: kept as text
  }
  const text = typeof detail === 'object' && detail !== null && 'message' in detail ? String((detail as { message: unknown }).message) : `HTTP ${status}`;
  return { jsonrpc: '2.0', id: message.id ?? null, error: { code: -32000, message: `${status}: ${text}`, data: detail } };
}

export async function forward(settings: BridgeSettings, line: string, fetchImpl: typeof fetch = fetch): Promise<unknown[]> {
  let message: Message;
  try {
    message = JSON.parse(line);
  } catch {
    return [{ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: a line of stdin is not JSON' } }];
  }
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': settings.apiKey };
  if (settings.userId) headers['x-user-id'] = settings.userId;
  try {
    const response = await fetchImpl(`${settings.baseUrl.replace(/\/+$/, '')}/mcp`, { method: 'POST', headers, body: line });
    if (response.status === 202) return [];
    const isRequest = message.id !== undefined && message.id !== null;
    const ours = response.headers.get('content-type')?.includes('json') || response.headers.get('content-type')?.includes('event-stream');
    if (!response.ok && !(ours && response.status === 400)) return isRequest ? [refusal(message, response.status, await response.text())] : [];
    return await messagesOf(response);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return message.id === undefined ? [] : [{ jsonrpc: '2.0', id: message.id, error: { code: -32000, message: `The service at ${settings.baseUrl} did not answer: ${reason}` } }];
  }
}

/** Runs the bridge until stdin ends; answers are written in the order their requests arrived. */
export async function runStdioBridge(settings: BridgeSettings, input: NodeJS.ReadableStream = process.stdin, output: NodeJS.WritableStream = process.stdout): Promise<void> {
  const lines = createInterface({ input, crlfDelay: Infinity });
  let previous: Promise<void> = Promise.resolve();
  const pending: Promise<void>[] = [];
  for await (const line of lines) {
    if (!line.trim()) continue;
    const answered = forward(settings, line);
    // Sent at once (calls may run side by side), written in arrival order.
    previous = previous.then(async () => {
      for (const message of await answered) output.write(`${JSON.stringify(message)}\n`);
    });
    pending.push(previous);
  }
  await Promise.all(pending);
}
