/**
 * Runs the real server entry point (`bun server/main.ts`) as a child process on a free port.
 * While a server started here runs, every response the test process's `fetch` gets from it on /api
 * is checked against /openapi.json (response-validator.ts; RESPONSE_VALIDATION=strict|report|off).
 */
import type { Subprocess } from 'bun';
import { checkResponse, isCheckedPath, validationMode, validatorForDocument, type ResponseValidator } from './response-validator.ts';

export interface RunningServer {
  url: string;
  process: Subprocess<'ignore', 'pipe', 'pipe'>;
  /** Every stdout line so far (JSON log lines). */
  lines: string[];
  waitFor(predicate: (line: any) => boolean, timeoutMs?: number): Promise<any>;
  stop(signal?: NodeJS.Signals): Promise<number>;
}

/**
 * The runtime settings `npm start` uses (package.json; tests/platform/server.test.ts keeps the two equal):
 * --smol, and the memory JSC sizes its heap for (by default it assumes all of the machine's RAM and
 * lets the heap double between collections).
 */
export const PRODUCTION_RUNTIME = { args: ['--smol'], env: { NODE_ENV: 'production', BUN_JSC_forceRAMSize: '536870912' } };

const repositoryRoot = new URL('../..', import.meta.url).pathname;

/** A port nothing listens on right now (the OS picks it; a test that wants it taken binds it again). */
export function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const { port } = probe;
  probe.stop(true);
  return port;
}

/** Starts the server and waits until it answers /readyz (/healthz is 200 while it is still starting). env.PORT chooses the port (default: a random one). */
export async function startServer(env: Record<string, string>): Promise<RunningServer> {
  const server = spawnServer(env);
  // Ready when it answers (the 'listening' line is not logged below LOG_LEVEL=info). A fresh PGlite
  // directory alone (initdb) takes 3-10 s on a loaded machine, before migrations and the seed.
  const deadline = Date.now() + 45_000;
  for (;;) {
    if (server.process.exitCode !== null || Date.now() > deadline) await server.waitFor(() => false, 0);
    try {
      if ((await fetch(`${server.url}/readyz`)).ok) break;
    } catch {}
    await Bun.sleep(50);
  }
  return server;
}

/** Origins (`http://127.0.0.1:port`) of the servers started here that are still running. */
const checkedOrigins = new Map<string, Subprocess>();
let serverValidator: Promise<ResponseValidator> | undefined;

/**
 * The document the spawned servers serve at /openapi.json, built here from the same source (by the
 * same function the server calls at start) rather than fetched: a request of our own would show in
 * the server's metrics and logs that tests count. Only the description depends on MAX_BODY_BYTES.
 */
function documentOfServers(): Promise<ResponseValidator> {
  return (serverValidator ??= (async () => {
    const [{ appRouter }, { RouteTable }, { buildOpenApiDocument }] = await Promise.all([
      import('../../routers/index.ts'),
      import('../../server/platform/http/route-table.ts'),
      import('../../server/platform/http/openapi.ts'),
    ]);
    return validatorForDocument(buildOpenApiDocument(appRouter, new RouteTable(appRouter), { maxBodyBytes: 1_048_576 }));
  })());
}

/** Wraps the global fetch once: responses from a running server of ours on /api are checked. */
function checkResponsesFrom(origin: string, child: Subprocess) {
  checkedOrigins.set(origin, child);
  const original = globalThis.fetch as typeof fetch & { responseValidation?: true };
  if (original.responseValidation) return;
  const checked = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await original(input as never, init);
    if (validationMode() === 'off') return response;
    const url = input instanceof Request ? input.url : String(input);
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return response;
    }
    if (!checkedOrigins.has(parsed.origin) || !isCheckedPath(method, parsed.pathname)) return response;
    const validator = await documentOfServers().catch((error) => {
      if (validationMode() === 'strict') throw error;
      return undefined; // report mode: a document that cannot be built fails openapi.test, not every fetch
    });
    if (validator) await checkResponse(validator, { method, url }, response);
    return response;
  };
  globalThis.fetch = Object.assign(checked, original, { responseValidation: true as const }) as typeof fetch;
}

/**
 * What a child takes from the test process: PATH, HOME, and the company-dataset selection the suite
 * runs on (SEED_COMPANIES=sample, tests/harness/preload.ts), so a server seeds what in-process
 * databases hold.
 */
function inherited(): Record<string, string> {
  // Still books and no background history fill, as in-process apps have (TEST_ENV); a test of either sets its own.
  const env: Record<string, string> = { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', PAPER_DRIFT: '0', HISTORY_FILL_INTERVAL_MS: '0' };
  if (process.env.SEED_COMPANIES) env.SEED_COMPANIES = process.env.SEED_COMPANIES;
  return env;
}

/** Starts the server process without waiting for it (for tests of how it starts, or fails to). */
export function spawnServer(env: Record<string, string>): RunningServer {
  // A port the OS just handed out: a random pick collided now and then with other tests' listeners.
  const port = env.PORT ? Number(env.PORT) : freePort();
  const origin = `http://127.0.0.1:${port}`;
  const child = Bun.spawn([process.execPath, ...PRODUCTION_RUNTIME.args, 'server/main.ts'], {
    cwd: repositoryRoot,
    env: { ...inherited(), ...PRODUCTION_RUNTIME.env, PORT: String(port), HOST: '127.0.0.1', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  if (validationMode() !== 'off') {
    // Built while the server starts, so its first answers are not held up by the build (tests that
    // count answers in a time window, such as crash-billing's, would see fewer).
    documentOfServers().catch(() => {});
    checkResponsesFrom(origin, child);
    // Another listener may take the port once this server is gone: its answers are not ours to check.
    child.exited.then(() => checkedOrigins.get(origin) === child && checkedOrigins.delete(origin));
  }
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  (async () => {
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const chunk of child.stdout) {
      buffered += decoder.decode(chunk);
      let newline;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        lines.push(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        waiters.splice(0).forEach((wake) => wake());
      }
    }
    waiters.splice(0).forEach((wake) => wake());
  })();

  const server: RunningServer = {
    url: origin,
    process: child,
    lines,
    async waitFor(predicate, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        for (const line of lines) {
          try {
            const parsed = JSON.parse(line);
            if (predicate(parsed)) return parsed;
          } catch {}
        }
        if (Date.now() > deadline || child.exitCode !== null) {
          throw new Error(`timed out; stdout:\n${lines.join('\n')}\nstderr:\n${await new Response(child.stderr).text()}`);
        }
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
    },
    async stop(signal = 'SIGTERM') {
      child.kill(signal);
      return child.exited;
    },
  };
  return server;
}

export interface Finished {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs one of this repository's entry points (`server/commands/cli.ts …`, `server/main.ts`) to its end with
 * only the given environment (and PATH/HOME), killing it after `timeoutMs`.
 */
export async function runToExit(args: string[], env: Record<string, string>, timeoutMs = 30_000): Promise<Finished> {
  const child = Bun.spawn([process.execPath, ...args], {
    cwd: repositoryRoot,
    env: { ...inherited(), ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  clearTimeout(timer);
  return { exitCode, stdout, stderr };
}
