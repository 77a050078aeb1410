/**
 * JSON-lines logger, on stdout by default. The CLI logs to stderr instead: its stdout is exactly one
 * JSON document (its answer), so `npm run -s cli -- show … | jq` works. Callers pass fields, never
 * secrets (keys are not in any log line).
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** Whether lines of this level are written (so a hot path can skip building their fields). */
  enabled(level: Exclude<LogLevel, 'silent'>): boolean;
}

/** Where log lines go: a standard stream, or any function taking one line (tests collect them). */
export type LogTarget = 'stdout' | 'stderr' | ((line: string) => void);

const streams = {
  stdout: (line: string) => void process.stdout.write(line + '\n'),
  stderr: (line: string) => void process.stderr.write(line + '\n'),
};

export function createLogger(level: LogLevel, target: LogTarget = 'stdout'): Logger {
  const write = typeof target === 'function' ? target : streams[target];
  const at = (lvl: Exclude<LogLevel, 'silent'>) => (msg: string, fields?: Record<string, unknown>) => {
    if (rank[lvl] < rank[level]) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }));
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), enabled: (lvl) => rank[lvl] >= rank[level] };
}
