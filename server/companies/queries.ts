/**
 * Reading companies: the filtered list, search, lookups, and the aggregates. Every text filter is an
 * exact, case-insensitive match on an indexed lower() expression; ranges are inclusive.
 */
import { and, asc, count, countDistinct, desc, eq, gte, lte, max, min, or, sql, sum, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { Db } from '../../db/client.ts';
import { companies } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';

export type Company = typeof companies.$inferSelect;

export const SORT_FIELDS = ['name', 'valuationUsd', 'totalFundingUsd', 'foundedYear', 'employees', 'updatedAt'] as const;
export type SortField = (typeof SORT_FIELDS)[number];

export interface ListFilters {
  industry?: string;
  country?: string;
  backingType?: string;
  minValuation?: number;
  maxValuation?: number;
  minFunding?: number;
  maxFunding?: number;
  minFoundedYear?: number;
  maxFoundedYear?: number;
  minEmployees?: number;
  maxEmployees?: number;
  updatedSince?: Date;
}

export interface Page {
  limit: number;
  offset: number;
}

const lowerEq = (column: PgColumn, value: string) => sql`lower(${column}) = ${value.toLowerCase()}`;

function filterWhere(f: ListFilters): SQL | undefined {
  return and(
    f.industry !== undefined ? lowerEq(companies.industry, f.industry) : undefined,
    f.country !== undefined ? lowerEq(companies.headquartersCountry, f.country) : undefined,
    f.backingType !== undefined ? lowerEq(companies.backingType, f.backingType) : undefined,
    f.minValuation !== undefined ? gte(companies.valuationUsd, f.minValuation) : undefined,
    f.maxValuation !== undefined ? lte(companies.valuationUsd, f.maxValuation) : undefined,
    f.minFunding !== undefined ? gte(companies.totalFundingUsd, f.minFunding) : undefined,
    f.maxFunding !== undefined ? lte(companies.totalFundingUsd, f.maxFunding) : undefined,
    f.minFoundedYear !== undefined ? gte(companies.foundedYear, f.minFoundedYear) : undefined,
    f.maxFoundedYear !== undefined ? lte(companies.foundedYear, f.maxFoundedYear) : undefined,
    f.minEmployees !== undefined ? gte(companies.employees, f.minEmployees) : undefined,
    f.maxEmployees !== undefined ? lte(companies.employees, f.maxEmployees) : undefined,
    f.updatedSince !== undefined ? gte(companies.updatedAt, f.updatedSince) : undefined,
  );
}

/** Sort with nulls last in both directions and id as the tie-break, so pages never overlap. */
function orderBy(sort: { field?: SortField; descending: boolean }): SQL[] {
  if (!sort.field) return [asc(companies.id)];
  const column = sort.field === 'name' ? sql`lower(${companies.name})` : companies[sort.field];
  return [sort.descending ? sql`${column} desc nulls last` : sql`${column} asc nulls last`, asc(companies.id)];
}

export async function listCompanies(db: Db, filters: ListFilters, sort: { field?: SortField; descending: boolean }, page: Page) {
  const where = filterWhere(filters);
  const [rows, [total]] = await Promise.all([
    db.select().from(companies).where(where).orderBy(...orderBy(sort)).limit(page.limit).offset(page.offset),
    db.select({ total: count() }).from(companies).where(where),
  ]);
  return { rows, total: total?.total ?? 0 };
}

/** LIKE pattern for a literal substring (escapes \, % and _). */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Search over name and registeredName, ranked: exact match, then prefix, then substring, then close
 * spellings (trigram similarity ≥ pg_trgm's threshold), then by name.
 */
export async function searchCompanies(db: Db, query: string, page: Page) {
  const q = query.toLowerCase();
  const name = sql`lower(${companies.name})`;
  const registered = sql`lower(coalesce(${companies.registeredName}, ''))`;
  const contains = `%${likeLiteral(q)}%`;
  const prefix = `${likeLiteral(q)}%`;
  const where = or(sql`${name} like ${contains}`, sql`${registered} like ${contains}`, sql`${name} % ${q}`, sql`${registered} % ${q}`);
  const rank = sql<number>`case
    when ${name} = ${q} or ${registered} = ${q} then 0
    when ${name} like ${prefix} or ${registered} like ${prefix} then 1
    when ${name} like ${contains} or ${registered} like ${contains} then 2
    else 3 end`;
  const similarity = sql<number>`greatest(similarity(${name}, ${q}), similarity(${registered}, ${q}))`;
  const [rows, [total]] = await Promise.all([
    db
      .select()
      .from(companies)
      .where(where)
      // Within a tier by name; close spellings by how close they are first.
      .orderBy(asc(rank), desc(sql`case when ${rank} = 3 then ${similarity} else 0 end`), asc(name), asc(companies.id))
      .limit(page.limit)
      .offset(page.offset),
    db.select({ total: count() }).from(companies).where(where),
  ]);
  return { rows, total: total?.total ?? 0 };
}

export async function companyById(db: Db, id: number): Promise<Company> {
  const [row] = await db.select().from(companies).where(eq(companies.id, id));
  if (!row) throw new ApiError('NOT_FOUND', `No company with id ${id}`);
  return row;
}

export async function companyBySourceId(db: Db, sourceId: string): Promise<Company> {
  const [row] = await db.select().from(companies).where(eq(companies.sourceId, sourceId));
  if (!row) throw new ApiError('NOT_FOUND', `No company with sourceId ${sourceId}`);
  return row;
}

/** Unique, non-empty values of a text column, sorted. */
async function distinctValues(db: Db, column: typeof companies.industry | typeof companies.headquartersCountry) {
  const rows = await db
    .selectDistinct({ value: column })
    .from(companies)
    .where(sql`${column} is not null and btrim(${column}) <> ''`)
    .orderBy(asc(column));
  return rows.map((r) => r.value!);
}

export const industries = (db: Db) => distinctValues(db, companies.industry);
export const countries = (db: Db) => distinctValues(db, companies.headquartersCountry);

/** Aggregates; valuation, funding and employee figures ignore null and 0. Averages are rounded. */
export async function companyStats(db: Db) {
  const positive = (column: PgColumn) => sql`case when ${column} > 0 then ${column} end`;
  const [row] = await db
    .select({
      totalCompanies: count(),
      totalWithValuation: count(positive(companies.valuationUsd)),
      totalWithFunding: count(positive(companies.totalFundingUsd)),
      avgValuationUsd: sql<string | null>`round(avg(${positive(companies.valuationUsd)}))`,
      maxValuationUsd: max(positive(companies.valuationUsd)),
      minValuationUsd: min(positive(companies.valuationUsd)),
      avgTotalFundingUsd: sql<string | null>`round(avg(${positive(companies.totalFundingUsd)}))`,
      maxTotalFundingUsd: max(positive(companies.totalFundingUsd)),
      totalFundingSum: sum(companies.totalFundingUsd),
      avgEmployees: sql<string | null>`round(avg(${positive(companies.employees)}))`,
      totalWithEmployees: count(positive(companies.employees)),
      distinctIndustries: countDistinct(sql`nullif(btrim(${companies.industry}), '')`),
      distinctCountries: countDistinct(sql`nullif(btrim(${companies.headquartersCountry}), '')`),
    })
    .from(companies);
  // Aggregates of bigint come back as numeric strings on both drivers.
  const num = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));
  return Object.fromEntries(Object.entries(row!).map(([k, v]) => [k, num(v)])) as { [K in keyof NonNullable<typeof row>]: number };
}

