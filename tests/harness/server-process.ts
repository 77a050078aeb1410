/** Runs the real server entry point (`bun server/main.ts`) as a child process on a free port. */
import type { Subprocess } from 'bun';

export interface RunningServer {
  url: string;
  process: Subprocess<'ignore', 'pipe', 'pipe'>;
  /** Every stdout line so far (JSON log lines). */
  lines: string[];
  waitFor(predicate: (line: any) => boolean, timeoutMs?: number): Promise<any>;
  stop(signal?: NodeJS.Signals): Promise<number>;
}

/**
 * The runtime settings `npm start` uses (package.json; tests/server.test.ts keeps the two equal):
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
  // Ready when it answers (the 'listening' line is not logged below LOG_LEVEL=info).
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (server.process.exitCode !== null || Date.now() > deadline) await server.waitFor(() => false, 0);
    try {
      if ((await fetch(`${server.url}/readyz`)).ok) break;
    } catch {}
    await Bun.sleep(50);
  }
  return server;
}

/** Starts the server process without waiting for it (for tests of how it starts, or fails to). */
export function spawnServer(env: Record<string, string>): RunningServer {
  // A port the OS just handed out: a random pick collided now and then with other tests' listeners.
  const port = env.PORT ? Number(env.PORT) : freePort();
  const child = Bun.spawn([process.execPath, ...PRODUCTION_RUNTIME.args, 'server/main.ts'], {
    cwd: repositoryRoot,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', ...PRODUCTION_RUNTIME.env, PORT: String(port), HOST: '127.0.0.1', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
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
    url: `http://127.0.0.1:${port}`,
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
 * Runs one of this repository's entry points (`server/cli.ts …`, `server/main.ts`) to its end with
 * only the given environment (and PATH/HOME), killing it after `timeoutMs`.
 */
export async function runToExit(args: string[], env: Record<string, string>, timeoutMs = 30_000): Promise<Finished> {
  const child = Bun.spawn([process.execPath, ...args], {
    cwd: repositoryRoot,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  clearTimeout(timer);
  return { exitCode, stdout, stderr };
}
