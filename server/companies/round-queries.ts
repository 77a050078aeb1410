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
import { decodeCursor, keysetPage, type KeyPart } from '../lib/keyset-cursor.ts';
import { dateKey } from './history.ts';

export const ROUND_SORTS = ['-date', 'date'] as const;
export type RoundSort = (typeof ROUND_SORTS)[number];
/** The sort key a rounds cursor holds: (date key, round id). */
export const ROUND_CURSOR: readonly KeyPart[] = ['text', 'text'];

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
  const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor, page.sort, ROUND_CURSOR);
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

/** The ids of one company's rounds written at or after `since` (its rounds are rewritten with its record). */
export async function roundIdsWrittenSince(db: Db, companyId: number, since: Date): Promise<Set<string>> {
  const rows = await db
    .select({ id: fundingRounds.id })
    .from(fundingRounds)
    .where(and(eq(fundingRounds.companyId, companyId), gte(fundingRounds.updatedAt, since)));
  return new Set(rows.map((r) => r.id));
}
