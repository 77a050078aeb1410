/**
 * Keyset-paging cursors: opaque to callers, base64url of [sort, ...the last row's sort key]. A list
 * answers `nextCursor` (keysetPage) and takes it back as `cursor`; the route checks the cursor with
 * its input (cursorProblem), so a cursor of another list or sort, or an edited one, is a 400 naming
 * `cursor` before any charge, and never a database error.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { ApiError } from '../errors.ts';

/**
 * What each part of a sort key must be: a text, a whole number that fits a PostgreSQL integer, or an
 * instant as `instantKey` writes it (a timestamp to the microsecond, UTC).
 */
export type KeyPart = 'text' | 'int' | 'instant';

/**
 * A timestamp column as exact text for a cursor: PostgreSQL keeps microseconds, a JS Date only
 * milliseconds, which could skip or repeat rows between pages. Compare it back with `column > text::timestamptz`.
 */
export const instantKey = (column: PgColumn): SQL<string> => sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
const INSTANT_KEY = /^(\d{4})-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** A real instant in instantKey's form (so the database never sees a text it cannot cast). */
function isInstantKey(value: unknown): value is string {
  const year = typeof value === 'string' ? INSTANT_KEY.exec(value)?.[1] : undefined;
  if (year === undefined || Number(year) < 1) return false; // PostgreSQL has no year 0
  const millis = (value as string).slice(0, 23);
  const date = new Date(`${millis}Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 23) === millis;
}

const CURSOR_TEXT = /^[A-Za-z0-9_-]{1,1000}$/;
const INT_MAX = 2_147_483_647;
const CURSOR_RULE = 'is not a cursor this list gave (pass nextCursor back unchanged, with the same sort)';

export const encodeCursor = (sort: string, key: Array<string | number>) => Buffer.from(JSON.stringify([sort, ...key])).toString('base64url');

/** The sort key a cursor holds, checked part by part against `parts`; null when it is not one this list gave. */
function keyOf(cursor: string, sort: string, parts: readonly KeyPart[]): Array<string | number> | null {
  if (!CURSOR_TEXT.test(cursor)) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length !== parts.length + 1 || value[0] !== sort) return null;
  const key = value.slice(1);
  const fits = parts.every((part, i) =>
    part === 'int'
      ? Number.isSafeInteger(key[i]) && key[i] >= 0 && key[i] <= INT_MAX
      : part === 'instant'
        ? isInstantKey(key[i])
        : typeof key[i] === 'string' && !/[\u0000-\u001f]/.test(key[i]),
  );
  return fits ? key : null;
}

/** For a route's input rules (routers/params.ts `check`): the cursor's problem, or null when it is absent or fits. */
export function cursorProblem(cursor: string | undefined, sort: string, parts: readonly KeyPart[]): { parameter: 'cursor'; rule: string } | null {
  return cursor === undefined || keyOf(cursor, sort, parts) ? null : { parameter: 'cursor', rule: CURSOR_RULE };
}

/** The sort key of a cursor the route's input has already checked (a 400 naming cursor should it not fit). */
export function decodeCursor(cursor: string, sort: string, parts: readonly KeyPart[]): Array<string | number> {
  const key = keyOf(cursor, sort, parts);
  if (!key) throw new ApiError('BAD_REQUEST', `cursor: ${CURSOR_RULE}`);
  return key;
}

/** A page of a keyset list: `limit + 1` rows were read, so a further row means there is a next page. */
export function keysetPage<T>(rows: T[], limit: number, sort: string, keyOf: (row: T) => Array<string | number>) {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { page, nextCursor: rows.length > limit && last ? encodeCursor(sort, keyOf(last)) : null };
}
