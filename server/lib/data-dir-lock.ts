/**
 * One process per embedded data directory. PGlite is a single-process PostgreSQL: a second process
 * on the same DATA_DIR (a second server, or the CLI beside a running server) works on its own copy
 * of the pages, and its writes are lost — or worse, overwrite the other's — at the next restart.
 *
 * The lock is flock(2) on DATA_DIR/.lock, taken through bun:ffi and held (its file descriptor open)
 * for the life of the process: the kernel releases it when the process ends, however it ends, so a
 * kill -9 never leaves the directory locked. The file also names its holder (pid, command, since)
 * for the message the next process prints. Where flock cannot be loaded (Windows, an unknown libc)
 * the file's pid is checked instead: weaker (not atomic, and a reused pid looks alive), but it still
 * stops the common mistake.
 */
import { closeSync, constants, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { EXIT, StartupError } from './startup-error.ts';

const LOCK_EX = 2;
const LOCK_NB = 4; // both values are the same on Linux, macOS and the BSDs

type Flock = (fd: number, operation: number) => number;

const LIBC_CANDIDATES: Partial<Record<NodeJS.Platform, string[]>> = {
  linux: ['libc.so.6', `libc.musl-${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}.so.1`, 'libc.so'],
  darwin: ['libSystem.B.dylib', '/usr/lib/libSystem.B.dylib', 'libc.dylib'],
  freebsd: ['libc.so.7'],
};

let flockFn: Flock | null | undefined;

/** libc's flock, or null where it cannot be loaded. */
async function loadFlock(): Promise<Flock | null> {
  if (flockFn !== undefined) return flockFn;
  flockFn = null;
  try {
    const { dlopen, FFIType } = await import('bun:ffi');
    for (const name of LIBC_CANDIDATES[process.platform] ?? []) {
      try {
        const lib = dlopen(name, { flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 } });
        flockFn = lib.symbols.flock as Flock;
        break;
      } catch {
        // try the next name
      }
    }
  } catch {
    // no bun:ffi on this platform
  }
  return flockFn;
}

export interface DataDirLock {
  /** How the lock is held: 'flock' (kernel lock) or 'pid-file' (the fallback). */
  kind: 'flock' | 'pid-file';
  /** Releases the lock (the process ending releases it too). */
  release(): void;
}

interface Holder {
  pid?: number;
  command?: string;
  since?: string;
}

function readHolder(file: string): Holder {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Holder;
  } catch {
    return {};
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function lockedError(dir: string, holder: Holder): StartupError {
  const who = holder.pid
    ? `process ${holder.pid}${holder.command ? ` (${holder.command}${holder.since ? `, since ${holder.since}` : ''})` : ''}`
    : 'another process';
  return new StartupError(
    `DATA_DIR ${resolve(dir)} is in use by ${who}; the embedded database allows one process at a time: ` +
      'stop that process first, or while the server runs use its HTTP/dashboard routes instead of the CLI',
    EXIT.tempfail,
  );
}

function describeSelf(): string {
  const [runtime, script, ...args] = process.argv;
  const command = [basename(runtime ?? 'bun').replace(/\.exe$/, ''), script ? relative(process.cwd(), script) : '', ...args].filter(Boolean).join(' ');
  return command.length > 200 ? `${command.slice(0, 200)}…` : command;
}

/**
 * Locks `dir` (which must exist) for this process, or throws a StartupError (exit 75) naming the
 * holder. Call it before anything opens the database.
 */
export async function lockDataDir(dir: string): Promise<DataDirLock> {
  const file = join(dir, '.lock');
  const fd = openSync(file, constants.O_RDWR | constants.O_CREAT, 0o600);
  const flock = await loadFlock();
  if (flock) {
    if (flock(fd, LOCK_EX | LOCK_NB) !== 0) {
      closeSync(fd);
      throw lockedError(dir, readHolder(file));
    }
  } else {
    const holder = readHolder(file);
    if (holder.pid && holder.pid !== process.pid && isAlive(holder.pid)) {
      closeSync(fd);
      throw lockedError(dir, holder);
    }
  }
  ftruncateSync(fd, 0);
  writeSync(fd, JSON.stringify({ pid: process.pid, command: describeSelf(), since: new Date().toISOString() }) + '\n', 0);
  let held = true;
  return {
    kind: flock ? 'flock' : 'pid-file',
    release() {
      if (!held) return;
      held = false;
      ftruncateSync(fd, 0); // a stale name would mislead the fallback and the next message
      closeSync(fd); // closing the descriptor releases the flock
    },
  };
}
