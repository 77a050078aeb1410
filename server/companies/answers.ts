/** The API's two shapes of a company (docs/decisions.md §5): condensed for lists, full for detail. */
import { COMPANY_FIELDS, type CompanyRecord } from './company-schema.ts';
import type { FigureSource } from './history.ts';
import type { Company } from './queries.ts';

/** Record fields the detail does not answer as such: provenance is answered per field, as `sources`. */
const DETAIL_FIELDS = COMPANY_FIELDS.filter((f) => f !== 'provenance');

/** Fields whose figure has a date of its own, and the field that holds it. */
const DATED: Partial<Record<string, keyof Company>> = {
  valuationUsd: 'valuationAsOf',
  valuationAsOf: 'valuationAsOf',
  valuationStepUpMultiple: 'valuationAsOf',
  valuationStepUpDescription: 'valuationAsOf',
  employees: 'employeesAsOf',
  employeesAsOf: 'employeesAsOf',
  ipoDate: 'ipoDate',
  lastFundingAmountUsd: 'lastFundingDate',
  lastFundingDate: 'lastFundingDate',
  lastFundingRoundType: 'lastFundingDate',
  lastFundingPreMoneyValuationUsd: 'lastFundingDate',
  lastFundingEstPricePerShareUsd: 'lastFundingDate',
};

const isSet = (v: unknown) => v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0);

/** The source ids a record that names none is given: a file imported by an operator. */
export const IMPORT_SOURCE = 'import';

/**
 * Where each known field of the record comes from (docs/companies.md "Provenance"): the first
 * provenance entry that lists it, its page for the company, and the figure's own date where it has
 * one (a valuation's, a head count's, a round's), else the date the source holds for. A record with
 * no provenance (an operator's import file) names its referenceUrl, as of the day it was written.
 */
export function fieldSources(c: Company): Record<string, FigureSource> {
  const out: Record<string, FigureSource> = {};
  const entries = c.provenance ?? [];
  for (const field of DETAIL_FIELDS) {
    if (field === 'sourceId' || !isSet(c[field as keyof Company])) continue;
    const entry = entries.find((p) => p.fields.includes(field));
    const dated = DATED[field] ? (c[DATED[field]!] as string | null) : null;
    out[field] = entry
      ? { id: entry.id, url: entry.url ?? null, asOf: dated ?? entry.asOf }
      : { id: IMPORT_SOURCE, url: c.referenceUrl ?? null, asOf: dated ?? c.updatedAt.toISOString().slice(0, 10) };
  }
  return out;
}

/** Non-empty of city, region and country, joined by ", ". */
export function headquartersOf(c: Pick<Company, 'headquartersCity' | 'headquartersRegion' | 'headquartersCountry'>): string | null {
  const parts = [c.headquartersCity, c.headquartersRegion, c.headquartersCountry].filter((p): p is string => !!p && p.trim() !== '');
  return parts.length ? parts.join(', ') : null;
}

export function condensedCompany(c: Company) {
  return {
    id: c.id,
    name: c.name,
    industry: c.industry,
    valuationUsd: c.valuationUsd,
    totalFundingUsd: c.totalFundingUsd,
    employeeCount: c.employees,
    foundedYear: c.foundedYear,
    headquarters: headquartersOf(c),
  };
}

export function companyDetail(c: Company) {
  // Every record field, null when unknown (the output schema checks the shape).
  const fields = Object.fromEntries(DETAIL_FIELDS.map((f) => [f, c[f as keyof Company] ?? null])) as Omit<CompanyRecord, 'provenance'>;
  return {
    id: c.id,
    ...fields,
    extra: c.extra ?? {},
    sources: fieldSources(c),
    employeeCount: c.employees,
    headquarters: headquartersOf(c),
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}
