/**
 * A fresh embedded database starts from a template instead of running initdb.
 *
 * PGlite's initdb runs a second PostgreSQL instance beside the first, in memory, then copies its
 * directory over: 8-12 s and ~850 MB of RSS on a 2-core machine (docs/performance.md), for output that
 * is the same every time for a given PGlite build. db/pglite-template/ keeps that output, made once by
 * `bun db/make-pglite-template.ts` (initdb only: no migration, no data, no key), as a gzipped tar
 * named after the PGlite version that made it, restored into an empty data directory in under a
 * second (restoreTemplate; PGlite's own `loadDataDir` when `tar` is not there). Migrations and the
 * seed then run as on any fresh directory.
 *
 * Safe because: the template is used only when the installed PGlite is the version that made it
 * (another version may have another catalog: then initdb runs as before, and a warning-free fallback
 * is all it costs), only for a directory with no PG_VERSION (never over a database), and it holds
 * nothing of anyone's (initdb's catalog and the `postgres` database, which every initdb makes the
 * same apart from its system identifier, which nothing here uses: PGlite has no replication).
 * Writing the files is what initdb's own copy does, with the same durability: PGlite syncs them
 * before the first query.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const TEMPLATE_DIR = new URL('./pglite-template/', import.meta.url);

/** The installed PGlite's version (its package.json, found from its entry point). */
export function pgliteVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')));
  for (let i = 0; i < 4; i++, dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === '@electric-sql/pglite' && pkg.version) return pkg.version;
  }
  throw new Error('cannot find the version of @electric-sql/pglite');
}

export function templateFileFor(version: string): URL {
  return new URL(`pglite-${version}.tar.gz`, TEMPLATE_DIR);
}

/** This PGlite's template file, or undefined (none made for this version). */
function templateFile(): URL | undefined {
  try {
    const file = templateFileFor(pgliteVersion());
    return existsSync(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

/** True when `dataDir` is a directory that holds no database yet (memory and existing databases are not). */
function isEmptyDataDir(dataDir: string | undefined): dataDir is string {
  return dataDir !== undefined && !existsSync(join(dataDir, 'PG_VERSION'));
}

/**
 * Restores the template into an empty `dataDir` before PGlite opens it, with the system's `tar` (a
 * separate process, streaming: the server's own memory never holds the archive; PGlite's own
 * restore, the fallback below, did and peaked ~100 MB higher). Extracted into a staging directory
 * inside `dataDir` first, then moved in entry by entry, PG_VERSION last: a start stopped midway leaves
 * no PG_VERSION, so the next start restores again. False (nothing changed) when there is nothing to
 * restore or `tar` is missing or fails.
 */
export function restoreTemplate(dataDir: string | undefined): boolean {
  if (!isEmptyDataDir(dataDir) || !existsSync(dataDir)) return false;
  const file = templateFile();
  if (!file) return false;
  let staging: string | undefined;
  try {
    staging = mkdtempSync(join(dataDir, '.template-'));
    const tar = Bun.spawnSync(['tar', '-xzf', fileURLToPath(file), '-C', staging], { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' });
    if (tar.exitCode !== 0 || !existsSync(join(staging, 'PG_VERSION'))) return false;
    // The dump was taken from a running instance; a pid file would only name a process long gone.
    rmSync(join(staging, 'postmaster.pid'), { force: true });
    const names = readdirSync(staging).filter((name) => name !== 'PG_VERSION');
    for (const name of [...names, 'PG_VERSION']) {
      // Leftovers of a restore stopped midway (there is no database here: no PG_VERSION).
      rmSync(join(dataDir, name), { recursive: true, force: true });
      renameSync(join(staging, name), join(dataDir, name));
    }
    return true;
  } catch {
    return false;
  } finally {
    if (staging) rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * The template for PGlite to restore itself (its `loadDataDir`) into an empty `dataDir`, or undefined:
 * the directory already holds a database (restoreTemplate's included), is memory, or there is no
 * template for this PGlite.
 */
export function templateFor(dataDir: string | undefined): Blob | undefined {
  if (!isEmptyDataDir(dataDir)) return undefined;
  const file = templateFile();
  return file ? Bun.file(file) : undefined;
}
