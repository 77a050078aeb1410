/**
 * Prepared statements for the hot paths, built once per database. drizzle otherwise rebuilds the
 * SQL text and the driver re-parses and re-plans it on every call; a prepared statement costs about
 * a quarter of that (measured: 0.2 ms instead of 0.8 ms for a company by id on PostgreSQL).
 */
import type { Db } from './client.ts';

const cache = new WeakMap<Db, Map<string, unknown>>();

/** The statement `name` for this database, built by `build` the first time it is needed. */
export function prepared<T>(db: Db, name: string, build: (db: Db) => T): T {
  let statements = cache.get(db);
  if (!statements) cache.set(db, (statements = new Map()));
  let statement = statements.get(name) as T | undefined;
  if (statement === undefined) statements.set(name, (statement = build(db)));
  return statement;
}
