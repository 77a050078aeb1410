/**
 * Reading companies: the filtered list, search, lookups, and the aggregates. Every text filter is an
 * exact, case-insensitive match on an indexed lower() expression; ranges are inclusive. Search goes
 * through the folded names of company_names (names.ts).
 */
import { and, asc, count, countDistinct, desc, eq, gte, inArray, lte, max, min, not, notExists, sql, sum, type SQL } from 'drizzle-orm';
import { alias, type PgColumn } from 'drizzle-orm/pg-core';
import type { Db } from '../../db/client.ts';
import { prepared } from '../../db/prepared.ts';
import { companies, companyNames, events } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import type { Cached } from './aggregate-cache.ts';
import { domainOf, fold, nameForm } from './names.ts';

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
  /** Only companies with (true) or without (false) a listed event linked to them. */
  hasMarket?: boolean;
}

export interface Page {
  limit: number;
  offset: number;
}

/** Matches a *_key column (trimmed, lower-case). */
const keyEq = (column: PgColumn, value: string) => eq(column, value.trim().toLowerCase());

/** Inclusive numeric bounds: [lower parameter, upper parameter, column]. */
const RANGE_FILTERS = [
  ['minValuation', 'maxValuation', companies.valuationUsd],
  ['minFunding', 'maxFunding', companies.totalFundingUsd],
  ['minFoundedYear', 'maxFoundedYear', companies.foundedYear],
  ['minEmployees', 'maxEmployees', companies.employees],
] as const;

/** The [lower, upper] parameter pairs of the bounds: the routes check lower ≤ upper with their input. */
export const RANGE_PARAMETERS = RANGE_FILTERS.map(([low, high]) => [low, high] as const);

/**
 * The company has a listed event (it has markets, markets.ts): an EXISTS probe of events
 * (company_source_id, listing) per company row, so the list's cost does not grow with the events that
 * ever were.
 */
const hasListedEvent = (): SQL =>
  sql`exists (select 1 from ${events} where ${events.companySourceId} = ${companies.sourceId} and ${events.listing} = 'listed')`;

/** The filters as a condition. Bounds out of order (checked with the route's input) match nothing. */
function filterWhere(f: ListFilters): SQL | undefined {
  const bounds = RANGE_FILTERS.flatMap(([low, high, column]) => [f[low] !== undefined ? gte(column, f[low]!) : undefined, f[high] !== undefined ? lte(column, f[high]!) : undefined]);
  return and(
    f.industry !== undefined ? keyEq(companies.industryKey, f.industry) : undefined,
    f.country !== undefined ? keyEq(companies.countryKey, f.country) : undefined,
    f.backingType !== undefined ? keyEq(companies.backingTypeKey, f.backingType) : undefined,
    f.updatedSince !== undefined ? gte(companies.updatedAt, f.updatedSince) : undefined,
    f.hasMarket !== undefined ? (f.hasMarket ? hasListedEvent() : not(hasListedEvent())) : undefined,
    ...bounds,
  );
}

/**
 * Sort with nulls last in both directions; ties broken by id in the same direction, so pages never
 * overlap and every order is one index walk (see the *_desc_idx indexes).
 */
function orderBy(sort: { field?: SortField; descending: boolean }): SQL[] {
  if (!sort.field) return [asc(companies.id)];
  const column = sort.field === 'name' ? sql`lower(${companies.name})` : companies[sort.field];
  return sort.descending ? [sql`${column} desc nulls last`, desc(companies.id)] : [sql`${column} asc nulls last`, asc(companies.id)];
}

/**
 * Every ID_ANCHOR_STEP-th id of the id order (the unfiltered list's default order): the ids at
 * positions 0, STEP, 2·STEP, … A deep page of that order starts its index walk at the anchor at or
 * before its offset instead of at the first id, so it skips at most STEP - 1 index entries rather
 * than `offset` of them (500,000 entries took 30–40 ms at a million companies).
 */
export const ID_ANCHOR_STEP = 1000;

/** The anchors, in one walk of the primary key (cached with the unfiltered total, below). */
async function idAnchors(db: Db): Promise<number[]> {
  const numbered = db
    .select({ id: companies.id, position: sql<number>`row_number() over (order by ${companies.id}) - 1`.as('position') })
    .from(companies)
    .as('numbered');
  const rows = await db.select({ id: numbered.id }).from(numbered).where(sql`${numbered.position} % ${ID_ANCHOR_STEP} = 0`).orderBy(asc(numbered.id));
  return rows.map((r) => r.id);
}

/**
 * A page of the filtered list. The page's ids come from an index walk (a deferred join), so a deep
 * offset skips index entries rather than whole rows; the unfiltered total comes from the cache (a
 * filtered one never does: `hasMarket` follows event listings, which the dataset version does not).
 * A deep page of the unfiltered list in id order starts its walk at a cached anchor (idAnchors):
 * like the total, the anchors are kept under the dataset version, which every write of companies
 * moves (aggregate-cache.ts); between writes an id's position in the id order does not change.
 */
export async function listCompanies(
  db: Db,
  { cache, version }: Cached,
  filters: ListFilters,
  sort: { field?: SortField; descending: boolean },
  page: Page,
) {
  const where = filterWhere(filters);
  const order = orderBy(sort);
  const countMatching = async () => (await db.select({ total: count() }).from(companies).where(where))[0]?.total ?? 0;
  const pageOf = (from: SQL | undefined, offset: number) => {
    const ids = db.select({ id: companies.id }).from(companies).where(from).orderBy(...order).limit(page.limit).offset(offset);
    return db.select().from(companies).where(inArray(companies.id, ids)).orderBy(...order);
  };
  const rows = async () => {
    if (where || sort.field || page.offset < ID_ANCHOR_STEP) return pageOf(where, page.offset);
    const anchors = await cache.aggregate(db, 'id-anchors', () => idAnchors(db), version);
    const at = Math.min(Math.floor(page.offset / ID_ANCHOR_STEP), anchors.length - 1);
    return at > 0 ? pageOf(gte(companies.id, anchors[at]!), page.offset - at * ID_ANCHOR_STEP) : pageOf(undefined, page.offset);
  };
  const [found, total] = await Promise.all([rows(), where ? countMatching() : cache.aggregate(db, 'count', countMatching, version)]);
  return { rows: found, total };
}

/** LIKE pattern for a literal substring (escapes \, % and _). */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** At most this many close-spelling matches follow the direct matches of a search. */
export const CLOSE_SPELLING_LIMIT = 100;
/** Close spelling: word similarity of the query to one of the names of at least 0.5 (`antropic` → Anthropic). */
export const CLOSE_SPELLING_MIN_WORD_SIMILARITY = 0.5;
/**
 * The close spellings are looked for at this similarity first: when at least CLOSE_SPELLING_LIMIT
 * companies reach it, they are the closest ones (every other company's best name is further), so the
 * answer is the same as at the minimum, found through far fewer trigram candidates (a million
 * synthetic names: 2× faster on average, and "systoro", close to every "… Systems", 635 → 65 ms).
 * Otherwise the search looks again at the minimum.
 */
export const CLOSE_SPELLING_FIRST_WORD_SIMILARITY = 0.6;

/**
 * The text a search looks for: folded as the stored names are (names.ts: case and accents ignored),
 * and a URL or a `www.` host searched as its domain (`https://www.stripe.com/about` → `stripe.com`).
 */
export function searchKey(query: string): string {
  const text = query.trim();
  if (/^(https?:\/\/|www\d?\.)\S+$/i.test(text)) {
    const domain = domainOf(/^https?:\/\//i.test(text) ? text : `https://${text}`);
    if (domain) return fold(domain);
  }
  return nameForm(text);
}

/**
 * Search over every name a company is found by (company_names: its name, registered name, aliases
 * and web domain, folded). Direct matches come first, one row per company at its best name: exact,
 * then prefix, then substring; within a tier by the kind of name matched (name, registered name,
 * alias, domain), then by name. Then up to CLOSE_SPELLING_LIMIT companies with a close spelling of
 * one of their names, closest first. `total` counts both. Both kinds are found through the GIN
 * trigram index on company_names.folded (an exact match also through its btree).
 *
 * One statement answers the count, the page's direct matches and the close spellings (at the first
 * similarity; a second looks again at the minimum when they are too few), so the direct matches are
 * read once; another reads the page's rows by id. The page is positions [offset, offset + limit) of
 * the direct matches followed by the close spellings.
 */
export async function searchCompanies(db: Db, query: string, page: Page) {
  const q = searchKey(query);
  if (!q) return { rows: [] as Company[], total: 0 };
  const n = companyNames;
  const contains = `%${likeLiteral(q)}%`;
  const prefix = `${likeLiteral(q)}%`;
  const direct = sql`${n.folded} like ${contains}`;
  // The best (tier, kind) of a company's matching names as one number: tier (exact 0, prefix 1,
  // substring 2) times 4, plus the kind (0 name, 1 registered name, 2 alias, 3 domain).
  const rank = sql<number>`min(case when ${n.folded} = ${q} then 0 when ${n.folded} like ${prefix} then 4 else 8 end + ${n.kind})`;

  return db.transaction(async (tx) => {
    // `<%` is indexable but reads its threshold from a setting, so set it for this transaction only.
    const threshold = (similarity: number) => tx.execute(sql.raw(`set local pg_trgm.word_similarity_threshold = ${similarity}`));
    await threshold(CLOSE_SPELLING_FIRST_WORD_SIMILARITY);
    const matches = tx
      .select({ companyId: n.companyId, rank: rank.as('rank'), sortName: sql<string>`lower(${companies.name})`.as('sort_name') })
      .from(n)
      .innerJoin(companies, eq(companies.id, n.companyId))
      .where(direct)
      .groupBy(n.companyId, companies.id)
      .as('matches');
    // Close spellings: companies none of whose names is a direct match (that is, not in `matches`).
    const other = alias(companyNames, 'other');
    const closest = tx
      .select({ companyId: n.companyId, distance: sql<number>`min(${q} <<-> ${n.folded})`.as('distance') })
      .from(n)
      .where(and(sql`${q} <% ${n.folded}`, notExists(tx.select({ one: sql`1` }).from(other).where(and(eq(other.companyId, n.companyId), sql`${other.folded} like ${contains}`)))))
      .groupBy(n.companyId)
      .orderBy(sql`min(${q} <<-> ${n.folded})`, asc(n.companyId))
      .limit(CLOSE_SPELLING_LIMIT)
      .as('closest');
    const ids = (expression: SQL) => sql<number[]>`coalesce(${expression}, '[]')`.mapWith((v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v) as number[]);
    const [found] = await tx
      .select({
        directTotal: sql<number>`count(*)`.mapWith(Number),
        // The page's direct matches: their positions offset + 1 .. offset + limit in search order.
        pageIds: ids(
          sql`to_json((array_agg(${matches.companyId} order by ${matches.rank}, ${matches.sortName}, ${matches.companyId}))[${page.offset + 1}::int:${page.offset + page.limit}::int])`,
        ),
        closeIds: ids(sql`(select json_agg(${closest.companyId} order by ${closest.distance}, ${closest.companyId}) from ${closest})`),
      })
      .from(matches);
    const directTotal = found?.directTotal ?? 0;
    let close = found?.closeIds ?? [];
    if (close.length < CLOSE_SPELLING_LIMIT) {
      await threshold(CLOSE_SPELLING_MIN_WORD_SIMILARITY);
      close = (await tx.select({ id: closest.companyId }).from(closest).orderBy(asc(closest.distance), asc(closest.companyId))).map((r) => r.id);
    }
    // The close spellings are positions directTotal.. of the whole result: the page holds those it
    // overlaps (none while it ends among the direct matches).
    const pageIds = [...(found?.pageIds ?? []), ...close.slice(Math.max(0, page.offset - directTotal), Math.max(0, page.offset + page.limit - directTotal))];
    const byId = new Map(pageIds.length ? (await tx.select().from(companies).where(inArray(companies.id, pageIds))).map((r) => [r.id, r]) : []);
    return { rows: pageIds.flatMap((id) => byId.get(id) ?? []), total: directTotal + close.length };
  });
}

export async function companyById(db: Db, id: number): Promise<Company> {
  const byId = prepared(db, 'company_by_id', (d) => d.select().from(companies).where(eq(companies.id, sql.placeholder('id'))).prepare('company_by_id'));
  const [row] = await byId.execute({ id });
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

/** The list's filters as SQL, for the export (server/companies/export.ts), which reads the same companies. */
export { filterWhere };
