/**
 * `npx @pre-ipo/client mcp`: the service's MCP server over stdio, for desktop agents (mcp-stdio.ts).
 * Settings from flags or the environment: --url / PIPO_BASE_URL, --key / PIPO_API_KEY,
 * --user / PIPO_USER_ID (optional).
 */
import { runStdioBridge } from './mcp-stdio.ts';

const USAGE = 'usage: pre-ipo mcp [--url https://api.example.com] [--key pipo_…] [--user 0x…]   (or PIPO_BASE_URL, PIPO_API_KEY, PIPO_USER_ID)';

function flag(args: string[], name: string): string | undefined {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : undefined;
}

const [command, ...rest] = process.argv.slice(2);
if (command !== 'mcp') {
  process.stderr.write(`${USAGE}\n`);
  process.exit(command === undefined || command === '--help' ? 0 : 2);
}
const baseUrl = flag(rest, 'url') ?? process.env.PIPO_BASE_URL;
const apiKey = flag(rest, 'key') ?? process.env.PIPO_API_KEY;
if (!baseUrl || !apiKey) {
  process.stderr.write(`pre-ipo mcp needs the service URL and an API key\n${USAGE}\n`);
  process.exit(2);
}
await runStdioBridge({ baseUrl, apiKey, userId: flag(rest, 'user') ?? process.env.PIPO_USER_ID });
