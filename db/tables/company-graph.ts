/**
 * What the company records hold, as things of their own (docs/companies.md "Rounds and investors"):
 * funding rounds across companies, investors with their portfolios, and the names a company is found
 * by. All of it is derived from the records by the import (server/companies/graph.ts) in the same
 * transaction that writes them, so it is never out of step with `companies`.
 */
import { sql } from 'drizzle-orm';
import { bigint, boolean, doublePrecision, index, integer, jsonb, pgTable, primaryKey, smallint, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { companies } from './companies.ts';

const usd = (name: string) => bigint(name, { mode: 'number' });

export interface StoredFigureSource {
  id: string;
  url: string | null;
  asOf: string;
}

export const fundingRounds = pgTable(
  'funding_rounds',
  {
    /** Stable: `<company sourceId>:<date>:<round type slug>` (server/companies/history.ts). */
    id: text('id').primaryKey(),
    companyId: integer('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    date: text('date').notNull(),
    /** The date padded to sort partial dates (`2025` < `2025-03` < `2025-03-01`) and to compare with a day. */
    dateKey: text('date_key').notNull(),
    roundType: text('round_type'),
    roundTypeKey: text('round_type_key'),
    amountUsd: usd('amount_usd'),
    preMoneyValuationUsd: usd('pre_money_valuation_usd'),
    postMoneyValuationUsd: usd('post_money_valuation_usd'),
    pricePerShareUsd: doublePrecision('price_per_share_usd'),
    leadInvestors: jsonb('lead_investors').$type<string[]>().notNull(),
    investors: jsonb('investors').$type<string[]>().notNull(),
    /** Ids of the investors (lead or not), for the investor filter (GIN). */
    investorIds: integer('investor_ids').array().notNull(),
    source: jsonb('source').$type<StoredFigureSource>().notNull(),
    /** The company's industry and country keys, copied so the filters are one index each. */
    industryKey: text('industry_key'),
    countryKey: text('country_key'),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    index('funding_rounds_date_idx').on(t.dateKey, t.id),
    index('funding_rounds_company_idx').on(t.companyId, t.dateKey),
    index('funding_rounds_type_idx').on(t.roundTypeKey, t.dateKey, t.id),
    index('funding_rounds_amount_idx').on(t.amountUsd, t.id),
    index('funding_rounds_industry_idx').on(t.industryKey, t.dateKey, t.id),
    index('funding_rounds_country_idx').on(t.countryKey, t.dateKey, t.id),
    index('funding_rounds_updated_idx').on(t.updatedAt, t.id),
    index('funding_rounds_investor_ids_idx').using('gin', t.investorIds),
  ],
);

export const investors = pgTable(
  'investors',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    /** Stable: the investor's name as a slug (`sequoia-capital`). */
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    /** vc, corporate, angel, government, pe, accelerator, …; null when no source says. */
    type: text('type'),
    country: text('country'),
    website: text('website'),
    /** Companies linked to the investor (by a round or a portfolio listing), kept by the import. */
    portfolioCount: integer('portfolio_count').notNull().default(0),
    /** Where the type, country and website come from; null for an investor known only by name. */
    source: jsonb('source').$type<StoredFigureSource>(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('investors_slug_idx').on(t.slug),
    index('investors_name_idx').on(sql`lower(${t.name})`, t.id),
    index('investors_portfolio_idx').on(sql`${t.portfolioCount} desc`, t.id),
    index('investors_type_idx').on(t.type, t.id),
  ],
);

/** A company in an investor's portfolio: from a round that names the investor or a portfolio listing. */
export const companyInvestors = pgTable(
  'company_investors',
  {
    investorId: integer('investor_id')
      .notNull()
      .references(() => investors.id, { onDelete: 'cascade' }),
    companyId: integer('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    /** The earliest dated round with the investor; null for an undated listing. */
    firstDate: text('first_date'),
    /** Whether the investor led any of the company's rounds. */
    led: boolean('led').notNull().default(false),
  },
  (t) => [primaryKey({ columns: [t.investorId, t.companyId] }), index('company_investors_company_idx').on(t.companyId)],
);

/**
 * Every name a company is found by: its name, registered name, aliases and web domain, folded
 * (lower case, accents removed; server/companies/names.ts) so search is one trigram index.
 */
export const companyNames = pgTable(
  'company_names',
  {
    companyId: integer('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    folded: text('folded').notNull(),
    /** 0 name, 1 registered name, 2 alias, 3 domain: ties in rank go to the name. */
    kind: smallint('kind').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.companyId, t.folded] }),
    index('company_names_folded_idx').on(t.folded),
    // fastupdate off: a bulk import's entries go straight into the index instead of a pending list
    // that the planner prices as a scan until the next vacuum (search stayed sequential after a seed).
    index('company_names_trgm_idx').using('gin', sql`${t.folded} gin_trgm_ops`).with({ fastupdate: 'off' }),
  ],
);
