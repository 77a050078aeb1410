/**
 * The private-company dataset (docs/api.md "Private company record", docs/decisions.md §5). Column names are
 * the record's fields in snake_case. USD amounts are integer dollars in bigint columns read as JS
 * numbers (exact to 9e15 USD, so trillions fit). Dates that the sources give only to the month
 * (`2025-03`) are kept as text.
 */
import { sql } from 'drizzle-orm';
import { bigint, check, doublePrecision, index, integer, jsonb, pgTable, smallint, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

const usd = (name: string) => bigint(name, { mode: 'number' });

export interface Product {
  name: string;
  description?: string | null;
  metadata?: Record<string, unknown>;
  [extra: string]: unknown;
}
export interface FundingRound {
  date: string;
  roundType: string | null;
  amount?: number | null;
  valuation: number | null;
  pricePerShare: number | null;
  investors?: string[] | null;
  leadInvestors?: string[] | null;
  /** The provenance entry (source id) the round comes from. */
  source?: string | null;
}
export interface ValuationPoint {
  date: string;
  valuationUsd: number;
  basis: 'primary' | 'secondary' | 'tender' | 'ipo' | 'merger' | 'reported';
  source?: string | null;
}
/** Where a record's facts come from: one entry per source, with the fields it gave. */
export interface ProvenanceEntry {
  id: string;
  url?: string | null;
  asOf: string;
  fields: string[];
}
export interface SubsidiaryOrAcquisition {
  name: string;
  type: string | null;
  acquiredDate: string | null;
  amount: number | null;
}
export interface CompanyExtra {
  lastFundingRound?: string | null;
  lastFundingDate?: string | null;
  keyInvestors?: string[];
  [extra: string]: unknown;
}

export const companies = pgTable(
  'companies',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    sourceId: text('source_id').notNull(),
    name: text('name').notNull(),
    registeredName: text('registered_name'),
    companyType: text('company_type'),
    status: text('status'),
    operationalStatus: text('operational_status'),
    listingStatus: text('listing_status'),
    ipoDate: text('ipo_date'),
    website: text('website'),
    headquartersCity: text('headquarters_city'),
    headquartersRegion: text('headquarters_region'),
    headquartersCountry: text('headquarters_country'),
    headquartersAddress: text('headquarters_address'),
    industry: text('industry'),
    description: text('description'),
    foundedYear: integer('founded_year'),
    employees: integer('employees'),
    employeesAsOf: text('employees_as_of'),
    sicCode: text('sic_code'),
    sicDescription: text('sic_description'),
    ceo: text('ceo'),
    ceoTitle: text('ceo_title'),
    coo: text('coo'),
    cooTitle: text('coo_title'),
    cfo: text('cfo'),
    cfoTitle: text('cfo_title'),
    boardMembers: jsonb('board_members').$type<string[]>(),
    marketSegments: jsonb('market_segments').$type<string[]>(),
    addedSegments2026: text('added_segments_2026'),
    addedSegmentsNote: text('added_segments_note'),
    emergingMarket: text('emerging_market'),
    marketPeers: integer('market_peers'),
    backingType: text('backing_type'),
    valuationUsd: usd('valuation_usd'),
    valuationAsOf: text('valuation_as_of'),
    valuationStepUpMultiple: doublePrecision('valuation_step_up_multiple'),
    valuationStepUpDescription: text('valuation_step_up_description'),
    totalFundingUsd: usd('total_funding_usd'),
    lastFundingAmountUsd: usd('last_funding_amount_usd'),
    lastFundingDate: text('last_funding_date'),
    lastFundingRoundType: text('last_funding_round_type'),
    lastFundingRoundNumber: integer('last_funding_round_number'),
    lastFundingRoundStatus: text('last_funding_round_status'),
    lastFundingPreMoneyValuationUsd: usd('last_funding_pre_money_valuation_usd'),
    lastFundingRoundStructure: text('last_funding_round_structure'),
    lastFundingRoundStrategicPurpose: text('last_funding_round_strategic_purpose'),
    lastFundingRoundNewInvestor: text('last_funding_round_new_investor'),
    lastFundingEstPricePerShareUsd: doublePrecision('last_funding_est_price_per_share_usd'),
    totalFundingRounds: integer('total_funding_rounds'),
    numberDilutedShares: usd('number_diluted_shares'),
    knownDebtUsd: usd('known_debt_usd'),
    fy2025RevenueUsd: usd('fy2025_revenue_usd'),
    fy2025EbitdaNormalizedUsd: usd('fy2025_ebitda_normalized_usd'),
    fy2026RevenueUsd: usd('fy2026_revenue_usd'),
    fy2027RevenueUsd: usd('fy2027_revenue_usd'),
    products: jsonb('products').$type<Product[]>(),
    fundingHistory: jsonb('funding_history').$type<FundingRound[]>(),
    subsidiariesAndAcquisitions: jsonb('subsidiaries_and_acquisitions').$type<SubsidiaryOrAcquisition[]>(),
    extra: jsonb('extra').$type<CompanyExtra>(),
    referenceUrl: text('reference_url'),
    aliases: jsonb('aliases').$type<string[]>(),
    valuationHistory: jsonb('valuation_history').$type<ValuationPoint[]>(),
    provenance: jsonb('provenance').$type<ProvenanceEntry[]>(),
    // Filter keys: trimmed, lower-case copies kept by PostgreSQL itself. Plain columns (not lower()
    // expressions) so that counting a filtered list can be an index-only scan.
    industryKey: text('industry_key').generatedAlwaysAs(sql`lower(btrim(industry))`),
    countryKey: text('country_key').generatedAlwaysAs(sql`lower(btrim(headquarters_country))`),
    backingTypeKey: text('backing_type_key').generatedAlwaysAs(sql`lower(btrim(backing_type))`),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('companies_source_id_idx').on(t.sourceId),
    // Filters are exact and case-insensitive, on the key columns. The most common combination
    // (industry, country, valuation range) is one composite index; industry alone uses its prefix.
    index('companies_industry_country_valuation_idx').on(t.industryKey, t.countryKey, t.valuationUsd, t.id),
    index('companies_country_idx').on(t.countryKey, t.id),
    index('companies_backing_type_idx').on(t.backingTypeKey, t.id),
    index('companies_valuation_idx').on(t.valuationUsd, t.id),
    index('companies_total_funding_idx').on(t.totalFundingUsd, t.id),
    index('companies_founded_year_idx').on(t.foundedYear, t.id),
    index('companies_employees_idx').on(t.employees, t.id),
    index('companies_updated_at_idx').on(t.updatedAt, t.id),
    index('companies_name_idx').on(sql`lower(${t.name})`, t.id),
    // Descending sorts are `DESC NULLS LAST, id DESC`: one index each, so a sorted page is an index walk.
    index('companies_valuation_desc_idx').on(sql`${t.valuationUsd} desc nulls last`, sql`${t.id} desc`),
    index('companies_total_funding_desc_idx').on(sql`${t.totalFundingUsd} desc nulls last`, sql`${t.id} desc`),
    index('companies_founded_year_desc_idx').on(sql`${t.foundedYear} desc nulls last`, sql`${t.id} desc`),
    index('companies_employees_desc_idx').on(sql`${t.employees} desc nulls last`, sql`${t.id} desc`),
    index('companies_updated_at_desc_idx').on(sql`${t.updatedAt} desc nulls last`, sql`${t.id} desc`),
    index('companies_name_desc_idx').on(sql`lower(${t.name}) desc nulls last`, sql`${t.id} desc`),
    // Search goes through company_names (company-graph.ts): every name, alias and domain, folded.
  ],
);

/**
 * One row whose version every change to `companies` increments (in the same transaction), so each
 * instance can cache aggregates and know, with one indexed read, when they are stale; and which seed
 * build the dataset last took.
 */
export const companyDatasetState = pgTable(
  'company_dataset_state',
  {
    id: smallint('id').primaryKey().default(1),
    version: bigint('version', { mode: 'number' }).notNull().default(0),
    changedAt: timestamp('changed_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    /** The seed's mark (seeds/seed-mark.ts): the build of the company seed the dataset last took, and the version that left. */
    seedBuild: text('seed_build'),
    seededVersion: bigint('seeded_version', { mode: 'number' }),
  },
  (t) => [check('company_dataset_state_singleton', sql`${t.id} = 1`)],
);
