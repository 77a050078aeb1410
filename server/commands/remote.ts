/**
 * Operator commands through a running server. PGlite allows one process, so while a server holds the
 * embedded database every other command that opens it exits 75; the commands that must work then
 * (history:backfill, import:companies) ask that server instead, on its operator routes: a dashboard
 * key (DASHBOARD_KEYS, as the server's) and x-account-id naming the operator's own account.
 */
import type { Config } from '../config.ts';

export interface RemoteServer {
  /** The server's origin, e.g. http://localhost:3000. */
  base: string;
  dashboardKey: string;
  accountId: string;
}

/** A refusal or an unreachable server: one line for the operator. */
export class RemoteError extends Error {}

/** A command-line mistake: one line, exit 2. */
export class UsageError extends Error {}

/**
 * Where and as whom to ask: the server at --url, else $BASE, else $PUBLIC_URL, else
 * http://localhost:$PORT (3000); the first of DASHBOARD_KEYS; --account.
 */
export function remoteServer(config: Config, values: { account?: string; url?: string }, why: string): RemoteServer {
  const dashboardKey = config.dashboardKeys[0];
  if (!dashboardKey) throw new UsageError(`DASHBOARD_KEYS: ${why}; set it to one of the server's dashboard keys`);
  if (!values.account) throw new UsageError(`--account: ${why}; name your operator account (as x-account-id on the operator routes)`);
  const base = (values.url ?? process.env.BASE ?? process.env.PUBLIC_URL ?? `http://localhost:${process.env.PORT ?? 3000}`).replace(/\/$/, '');
  return { base, dashboardKey, accountId: values.account };
}

/** One operator call; the answer's JSON, or a RemoteError naming the status and the server's message. */
export async function callServer(server: RemoteServer, method: 'GET' | 'POST', path: string, body?: unknown): Promise<any> {
  let response: Response;
  try {
    response = await fetch(`${server.base}/api${path}`, {
      method,
      headers: { 'x-api-key': server.dashboardKey, 'x-account-id': server.accountId, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch (error) {
    throw new RemoteError(`cannot reach the server at ${server.base} (${(error as { code?: string }).code ?? (error as Error).message}): pass --url or set BASE`);
  }
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new RemoteError(`${server.base} answered ${response.status}: ${answer?.message ?? response.statusText}`);
  return answer;
}
