/**
 * Investors and their portfolios (db/tables/company-graph.ts `investors`, `company_investors`, kept by
 * graph.ts), paged by keyset like the rounds (round-queries.ts): each page is one index walk from the
 * cursor, and nothing counts the whole table.
 */
import { and, asc, desc, eq, gt, lt, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { companies, companyInvestors, investors } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import { decodeCursor, keysetPage, type KeyPart } from '../lib/keyset-cursor.ts';
import { listRounds } from './round-queries.ts';

export const INVESTOR_SORTS = ['-portfolioCount', 'name'] as const;
export type InvestorSort = (typeof INVESTOR_SORTS)[number];
/** The sort key an investors cursor holds: (lower(name), id) by name, else (portfolioCount, id). */
export const investorCursor = (sort: InvestorSort): readonly KeyPart[] => (sort === 'name' ? ['text', 'int'] : ['int', 'int']);
/** The sort key a portfolio cursor holds: (lower(company name), company id). */
export const PORTFOLIO_CURSOR: readonly KeyPart[] = ['text', 'int'];

export interface InvestorFilters {
  /** Name contains, case-insensitive. */
  q?: string;
  type?: string;
  country?: string;
}

export type Investor = Pick<typeof investors.$inferSelect, 'id' | 'name' | 'type' | 'country' | 'website' | 'portfolioCount' | 'source'>;

const investorColumns = {
  id: investors.id,
  name: investors.name,
  type: investors.type,
  country: investors.country,
  website: investors.website,
  portfolioCount: investors.portfolioCount,
  source: investors.source,
};

/** LIKE pattern for a literal substring (escapes \, % and _). */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
const lowerName = sql<string>`lower(${investors.name})`;
const folded = (value: string) => value.trim().toLowerCase();

function investorWhere(f: InvestorFilters): SQL | undefined {
  return and(
    f.q !== undefined ? sql`${lowerName} like ${`%${likeLiteral(folded(f.q))}%`}` : undefined,
    f.type !== undefined ? eq(sql`lower(${investors.type})`, folded(f.type)) : undefined,
    f.country !== undefined ? eq(sql`lower(btrim(${investors.country}))`, folded(f.country)) : undefined,
  );
}

/**
 * The sort's order and the rows after a cursor's key. Each order is one index: investors_portfolio_idx
 * (portfolio_count desc, id) — mixed directions, so the keyset is spelled out — or investors_name_idx
 * (lower(name), id).
 */
function investorOrder(sort: InvestorSort, after: Array<string | number> | undefined) {
  if (sort === 'name') {
    return { order: [asc(lowerName), asc(investors.id)], keyset: after && sql`(${lowerName}, ${investors.id}) > (${after[0]}, ${after[1]})` };
  }
  const [count, id] = (after ?? []) as number[];
  const keyset = after && or(lt(investors.portfolioCount, count!), and(eq(investors.portfolioCount, count!), gt(investors.id, id!)));
  return { order: [desc(investors.portfolioCount), asc(investors.id)], keyset };
}

/** A page of investors, most portfolio companies first by default; the cursor of the next page, or null. */
export async function listInvestors(db: Db, filters: InvestorFilters, page: { sort: InvestorSort; limit: number; cursor?: string }) {
  const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor, page.sort, investorCursor(page.sort));
  const { order, keyset } = investorOrder(page.sort, after);
  const rows = await db
    .select({ ...investorColumns, sortName: lowerName })
    .from(investors)
    .where(and(investorWhere(filters), keyset))
    .orderBy(...order)
    .limit(page.limit + 1);
  const { page: found, nextCursor } = keysetPage(rows, page.limit, page.sort, (r) => (page.sort === 'name' ? [r.sortName, r.id] : [r.portfolioCount, r.id]));
  return { investors: found.map(({ sortName: _, ...investor }) => investor), nextCursor };
}

/** How many of an investor's rounds its detail shows. */
export const RECENT_ROUNDS = 10;

async function investorRow(db: Db, id: number): Promise<Investor> {
  const [row] = await db.select(investorColumns).from(investors).where(eq(investors.id, id));
  if (!row) throw new ApiError('NOT_FOUND', `No investor with id ${id}`);
  return row;
}

/** One investor with its latest rounds (newest first). */
export async function investorById(db: Db, id: number) {
  const [investor, recent] = await Promise.all([investorRow(db, id), listRounds(db, { investor: id }, { sort: '-date', limit: RECENT_ROUNDS })]);
  return { ...investor, recentRounds: recent.rounds };
}

const companyName = sql<string>`lower(${companies.name})`;

/**
 * A page of the companies linked to an investor (a round naming it or a portfolio listing), by
 * company name then id; 404 for an unknown investor. The investor's links are read through the
 * primary key (investor_id, company_id), so a page costs the investor's portfolio, not the table.
 */
export async function investorPortfolio(db: Db, id: number, page: { limit: number; cursor?: string }) {
  const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor, 'name', PORTFOLIO_CURSOR);
  const [, rows] = await Promise.all([
    investorRow(db, id),
    db
      .select({
        companyId: companies.id,
        name: companies.name,
        industry: companies.industry,
        headquartersCountry: companies.headquartersCountry,
        firstDate: companyInvestors.firstDate,
        led: companyInvestors.led,
        sortName: companyName,
      })
      .from(companyInvestors)
      .innerJoin(companies, eq(companies.id, companyInvestors.companyId))
      .where(and(eq(companyInvestors.investorId, id), after && sql`(${companyName}, ${companies.id}) > (${after[0]}, ${after[1]})`))
      .orderBy(asc(companyName), asc(companies.id))
      .limit(page.limit + 1),
  ]);
  const { page: found, nextCursor } = keysetPage(rows, page.limit, 'name', (r) => [r.sortName, r.companyId]);
  return { companies: found.map(({ sortName: _, ...company }) => company), nextCursor };
}
