/**
 * The embedded database's files hold balances, key hashes and sealed venue credentials: only the
 * service's own user may read them. DATA_DIR and its directories are 0700, its files 0600.
 *
 * A umask of 077 covers what PostgreSQL itself creates, but not everything: PGlite writes its initial
 * cluster with an explicit chmod to 0666, and chmods two cache files (pg_internal.init) to 0644 on
 * every open, whatever the umask. So the tree is also tightened after the database is open.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const PRIVATE_DIR = 0o700;
const PRIVATE_FILE = 0o600;

/** Creates `dir` (and missing parents) 0700; from now on this process creates files without group/other bits. */
export function createPrivateDir(dir: string) {
  process.umask(0o077);
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
}

/**
 * Takes group and other permissions off every directory and file under `dir` (`dir` included),
 * walking iteratively; symbolic links below `dir` are left alone. Returns how many entries it changed.
 */
export function tightenModes(dir: string): number {
  let changed = 0;
  const pending = [dir];
  for (let path = pending.pop(); path !== undefined; path = pending.pop()) {
    // DATA_DIR itself may be a link to the real directory; links inside it are left alone.
    const stat = (path === dir ? statSync : lstatSync)(path, { throwIfNoEntry: false });
    if (!stat || stat.isSymbolicLink()) continue;
    if ((stat.mode & 0o077) !== 0) {
      // Files keep their owner bits (0666 becomes 0600, a read-only 0444 stays read-only: 0400).
      chmodSync(path, stat.isDirectory() ? PRIVATE_DIR : stat.mode & PRIVATE_FILE);
      changed++;
    }
    if (stat.isDirectory()) for (const name of readdirSync(path)) pending.push(join(path, name));
  }
  return changed;
}
