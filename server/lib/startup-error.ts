/**
 * A reason the process cannot start that an operator can act on: printed as ONE line on stderr (no
 * stack trace), and the process exits with its code. The codes follow sysexits.h so scripts and
 * supervisors can tell them apart:
 *   69 EX_UNAVAILABLE  PostgreSQL did not answer within DATABASE_START_TIMEOUT_MS
 *   75 EX_TEMPFAIL     another process holds the data directory (its lock) or the port
 *   78 EX_CONFIG       a bad configuration value
 */
export const EXIT = { unavailable: 69, tempfail: 75, config: 78 } as const;

export class StartupError extends Error {
  override name = 'StartupError';
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** A SIGTERM/SIGINT arrived while starting: not a failure, the process just stops. */
export class StartAborted extends StartupError {
  override name = 'StartAborted';
  constructor() {
    super('stopped while starting', 0);
  }
}
