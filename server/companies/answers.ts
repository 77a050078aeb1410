/** The API's two shapes of a company (docs/decisions.md §5): condensed for lists, full for detail. */
import { COMPANY_FIELDS, type CompanyRecord } from './company-schema.ts';
import type { Company } from './queries.ts';

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
  const fields = Object.fromEntries(COMPANY_FIELDS.map((f) => [f, c[f as keyof Company] ?? null])) as CompanyRecord;
  return {
    id: c.id,
    ...fields,
    extra: c.extra ?? {},
    employeeCount: c.employees,
    headquarters: headquartersOf(c),
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}
