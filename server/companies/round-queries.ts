/**
 * Funding rounds across companies (db/tables/company-graph.ts `funding_rounds`, kept by graph.ts):
 * the filtered list, paged by keyset (docs/api.md "Funding rounds and investors"). Every filter is one
 * of the table's indexes; a page is one index walk from the cursor, so its cost does not grow with
 * the table or with how deep the caller has paged, and nothing counts the whole table.
 */
import { and, asc, desc, eq, gte, inArray, lte, sql, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { Db } from '../../db/client.ts';
import { companies, fundingRounds } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import { dateKey } from './history.ts';

// ---- Cursors: opaque to callers, base64url of [sort, ...the last row's sort key]. ----------------

type KeyPart = 'text' | 'int';
const CURSOR_TEXT = /^[A-Za-z0-9_-]{1,1000}$/;
const INT_MAX = 2_147_483_647;
const badCursor = () => new ApiError('BAD_REQUEST', 'cursor: is not a cursor this list gave (pass nextCursor back unchanged, with the same sort)');

export const encodeCursor = (sort: string, key: Array<string | number>) => Buffer.from(JSON.stringify([sort, ...key])).toString('base64url');

/**
 * The sort key a cursor holds, checked part by part against `parts`: a cursor of another list or
 * sort, or an edited one, is a 400 naming `cursor` (never a database error).
 */
export function decodeCursor(cursor: string, sort: string, parts: KeyPart[]): Array<string | number> {
  if (!CURSOR_TEXT.test(cursor)) throw badCursor();
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  if (!Array.isArray(value) || value.length !== parts.length + 1 || value[0] !== sort) throw badCursor();
  const key = value.slice(1);
  const fits = parts.every((part, i) =>
    part === 'int'
      ? Number.isSafeInteger(key[i]) && key[i] >= 0 && key[i] <= INT_MAX
      : typeof key[i] === 'string' && !/[\u0000-\u001f]/.test(key[i]),
  );
  if (!fits) throw badCursor();
  return key;
}

/** A page of a keyset list: `limit + 1` rows were read, so a further row means there is a next page. */
export function keysetPage<T>(rows: T[], limit: number, sort: string, keyOf: (row: T) => Array<string | number>) {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { page, nextCursor: rows.length > limit && last ? encodeCursor(sort, keyOf(last)) : null };
}

// ---- Rounds ---------------------------------------------------------------------------------

export const ROUND_SORTS = ['-date', 'date'] as const;
export type RoundSort = (typeof ROUND_SORTS)[number];

export interface RoundFilters {
  /** Inclusive days (YYYY-MM-DD); a partial round date counts as its first day. */
  from?: string;
  to?: string;
  roundType?: string;
  minAmount?: number;
  maxAmount?: number;
  /** An investor id: rounds naming it (lead or not). */
  investor?: number;
  industry?: string;
  country?: string;
  companyId?: number;
  updatedSince?: Date;
}

/** Matches a *_key column (trimmed, lower-case). */
const keyEq = (column: PgColumn, value: string) => eq(column, value.trim().toLowerCase());

/**
 * The smallest date key on or after a day. A partial date counts as its first day, so from
 * 2025-03-01 keeps `2025-03` (key `2025-03   `, which sorts before `2025-03-01`) and from
 * 2025-01-01 keeps `2025`. An upper bound needs no such care: a partial date's key sorts before
 * its first day, and after every earlier day.
 */
function fromKey(day: string): string {
  const partial = day.endsWith('-01-01') ? day.slice(0, 4) : day.endsWith('-01') ? day.slice(0, 7) : day;
  return dateKey(partial);
}

function roundWhere(f: RoundFilters): SQL | undefined {
  if (f.minAmount !== undefined && f.maxAmount !== undefined && f.minAmount > f.maxAmount) {
    throw new ApiError('BAD_REQUEST', 'minAmount: must not be greater than maxAmount');
  }
  if (f.from !== undefined && f.to !== undefined && f.from > f.to) throw new ApiError('BAD_REQUEST', 'from: must not be later than to');
  return and(
    f.from !== undefined ? gte(fundingRounds.dateKey, fromKey(f.from)) : undefined,
    f.to !== undefined ? lte(fundingRounds.dateKey, dateKey(f.to)) : undefined,
    f.roundType !== undefined ? keyEq(fundingRounds.roundTypeKey, f.roundType) : undefined,
    f.minAmount !== undefined ? gte(fundingRounds.amountUsd, f.minAmount) : undefined,
    f.maxAmount !== undefined ? lte(fundingRounds.amountUsd, f.maxAmount) : undefined,
    // The GIN index's operator: the round's investor ids contain this one.
    f.investor !== undefined ? sql`${fundingRounds.investorIds} @> array[${f.investor}::integer]` : undefined,
    f.industry !== undefined ? keyEq(fundingRounds.industryKey, f.industry) : undefined,
    f.country !== undefined ? keyEq(fundingRounds.countryKey, f.country) : undefined,
    f.companyId !== undefined ? eq(fundingRounds.companyId, f.companyId) : undefined,
    f.updatedSince !== undefined ? gte(fundingRounds.updatedAt, f.updatedSince) : undefined,
  );
}

/** A round as the per-company rounds route gives it, with its company's name and sourceId. */
const roundColumns = {
  id: fundingRounds.id,
  companyId: fundingRounds.companyId,
  companyName: companies.name,
  companySourceId: companies.sourceId,
  date: fundingRounds.date,
  roundType: fundingRounds.roundType,
  amountUsd: fundingRounds.amountUsd,
  preMoneyValuationUsd: fundingRounds.preMoneyValuationUsd,
  postMoneyValuationUsd: fundingRounds.postMoneyValuationUsd,
  pricePerShareUsd: fundingRounds.pricePerShareUsd,
  leadInvestors: fundingRounds.leadInvestors,
  investors: fundingRounds.investors,
  source: fundingRounds.source,
};

/**
 * A page of rounds, newest first by default (ties by id, in the same direction): the page's ids come
 * from one walk of an index from the cursor (a deferred join), then only those rows are read with
 * their company. Returns the rounds and the cursor of the next page (null at the end).
 */
export async function listRounds(db: Db, filters: RoundFilters, page: { sort: RoundSort; limit: number; cursor?: string }) {
  const descending = page.sort === '-date';
  const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor, page.sort, ['text', 'text']);
  const keyset = after && sql`(${fundingRounds.dateKey}, ${fundingRounds.id}) ${sql.raw(descending ? '<' : '>')} (${after[0]}, ${after[1]})`;
  const order = descending ? [desc(fundingRounds.dateKey), desc(fundingRounds.id)] : [asc(fundingRounds.dateKey), asc(fundingRounds.id)];
  const pageIds = db.select({ id: fundingRounds.id }).from(fundingRounds).where(and(roundWhere(filters), keyset)).orderBy(...order).limit(page.limit + 1);
  const rows = await db
    .select({ ...roundColumns, dateKey: fundingRounds.dateKey })
    .from(fundingRounds)
    .innerJoin(companies, eq(companies.id, fundingRounds.companyId))
    .where(inArray(fundingRounds.id, pageIds))
    .orderBy(...order);
  const { page: found, nextCursor } = keysetPage(rows, page.limit, page.sort, (r) => [r.dateKey, r.id]);
  return { rounds: found.map(({ dateKey: _, ...round }) => round), nextCursor };
}
