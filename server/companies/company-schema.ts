/**
 * The private-company record: one zod schema for what the dataset files, the import CLI and the API's
 * detail responses hold, plus the cross-field rules a curated row must satisfy. Dates the sources give
 * only to the year or month (`2025`, `2025-03`) are allowed wherever a date is.
 */
import { z } from 'zod';

/** How a valuation was set (docs/companies.md "Rounds and valuations"). */
export const VALUATION_BASES = ['primary', 'secondary', 'tender', 'ipo', 'merger', 'reported', 'estimate'] as const;
export type ValuationBasis = (typeof VALUATION_BASES)[number];

const PARTIAL_DATE = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/;

export function isPartialDate(value: string): boolean {
  const m = PARTIAL_DATE.exec(value);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), m[2] ? Number(m[2]) : 1, m[3] ? Number(m[3]) : 1];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/**
 * The record's fields. `strict` is for what comes in (dataset files, the import CLI): content is
 * checked (trimmed text, real dates, URLs, ranges). The API's detail output uses the same fields
 * without the content checks (`strict` false): stored rows were checked on the way in, and re-checking
 * ~60 fields on every response was a fifth of a billed company read. Types, nullability and
 * integers are the same in both.
 */
function recordShape(strict: boolean) {
  const text = () => (strict ? z.string().trim().min(1).max(10_000) : z.string()).nullish();
  const name = () => (strict ? z.string().trim().min(1) : z.string());
  const date = () => (strict ? z.string().refine(isPartialDate, 'must be a date: YYYY, YYYY-MM or YYYY-MM-DD') : z.string());
  const url = () => (strict ? z.url({ protocol: /^https?$/ }) : z.string()).nullish();
  /** USD and share counts: whole, non-negative, exact in a JS number (trillions fit easily). */
  const wholeUsd = () => (strict ? z.number().int().min(0).max(Number.MAX_SAFE_INTEGER) : z.number().int()).nullish();
  const signedUsd = () => (strict ? z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER) : z.number().int()).nullish();
  const wholeIn = (min: number, max: number) => (strict ? z.number().int().min(min).max(max) : z.number().int()).nullish();

  const product = z.looseObject({
    name: name(),
    description: z.string().nullish(),
    metadata: z.record(z.string(), z.unknown()).nullish(),
  });
  const investorNames = () => z.array(name()).nullish();
  const sourceRef = () => (strict ? z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'must be a source id (data/sources/<id>)') : z.string()).nullish();
  const fundingRound = z.object({
    date: date(),
    roundType: z.string().nullish(),
    amount: wholeUsd(),
    valuation: wholeUsd(),
    pricePerShare: (strict ? z.number().min(0) : z.number()).nullish(),
    /** Investors the source names for this round (not the company's key investors). */
    investors: investorNames(),
    leadInvestors: investorNames(),
    /** The provenance entry (by source id) the round comes from; the record's first one when absent. */
    source: sourceRef(),
  });
  const valuationPoint = z.object({
    date: date(),
    valuationUsd: strict ? z.number().int().min(1).max(Number.MAX_SAFE_INTEGER) : z.number().int(),
    basis: z.enum(VALUATION_BASES),
    source: sourceRef(),
  });
  const provenanceEntry = z.object({
    id: strict ? z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'must be a source id (data/sources/<id>)') : z.string(),
    url: url(),
    asOf: date(),
    fields: z.array(z.string()),
  });
  const subsidiary = z.object({
    name: name(),
    type: z.string().nullish(),
    acquiredDate: date().nullish(),
    amount: wholeUsd(),
  });
  const extra = z.looseObject({
    lastFundingRound: z.string().nullish(),
    lastFundingDate: date().nullish(),
    keyInvestors: z.array(z.string()).nullish(),
  });

  return {
    sourceId: strict ? z.string().regex(/^[a-z0-9][a-z0-9-]{0,127}$/, 'must be a lowercase slug: a-z, 0-9 and -') : z.string(),
    name: strict ? z.string().trim().min(1).max(200) : z.string(),
    registeredName: text(),
    companyType: text(),
    status: text(),
    operationalStatus: text(),
    listingStatus: text(),
    ipoDate: date().nullish(),
    website: url(),
    headquartersCity: text(),
    headquartersRegion: text(),
    headquartersCountry: text(),
    headquartersAddress: text(),
    industry: text(),
    description: text(),
    foundedYear: wholeIn(1800, new Date().getUTCFullYear()),
    employees: wholeIn(1, 10_000_000),
    employeesAsOf: date().nullish(),
    sicCode: (strict ? z.string().regex(/^\d{4}$/, 'must be a 4-digit SIC code') : z.string()).nullish(),
    sicDescription: text(),
    ceo: text(),
    ceoTitle: text(),
    coo: text(),
    cooTitle: text(),
    cfo: text(),
    cfoTitle: text(),
    boardMembers: z.array(name()).nullish(),
    marketSegments: z.array(name()).nullish(),
    addedSegments2026: text(),
    addedSegmentsNote: text(),
    emergingMarket: text(),
    marketPeers: wholeIn(0, 100_000_000),
    backingType: text(),
    valuationUsd: wholeUsd(),
    valuationAsOf: date().nullish(),
    valuationStepUpMultiple: (strict ? z.number().positive() : z.number()).nullish(),
    valuationStepUpDescription: text(),
    totalFundingUsd: wholeUsd(),
    lastFundingAmountUsd: wholeUsd(),
    lastFundingDate: date().nullish(),
    lastFundingRoundType: text(),
    lastFundingRoundNumber: wholeIn(1, 1000),
    lastFundingRoundStatus: text(),
    lastFundingPreMoneyValuationUsd: wholeUsd(),
    lastFundingRoundStructure: text(),
    lastFundingRoundStrategicPurpose: text(),
    lastFundingRoundNewInvestor: text(),
    lastFundingEstPricePerShareUsd: (strict ? z.number().min(0) : z.number()).nullish(),
    totalFundingRounds: wholeIn(0, 1000),
    numberDilutedShares: wholeUsd(),
    knownDebtUsd: wholeUsd(),
    fy2025RevenueUsd: wholeUsd(),
    fy2025EbitdaNormalizedUsd: signedUsd(),
    fy2026RevenueUsd: wholeUsd(),
    fy2027RevenueUsd: wholeUsd(),
    products: z.array(product).nullish(),
    fundingHistory: z.array(fundingRound).nullish(),
    subsidiariesAndAcquisitions: z.array(subsidiary).nullish(),
    extra: extra.nullish(),
    referenceUrl: url(),
    /** Other names the company is or was known by (former names, legal names); searched like the name. */
    aliases: z.array(name()).nullish(),
    /** Dated valuations that are not a round's (a list's reported figure, an exit), oldest first. */
    valuationHistory: z.array(valuationPoint).nullish(),
    /** Where the record's facts come from: per source, its page for this company, its date and the fields it gave. */
    provenance: z.array(provenanceEntry).nullish(),
  };
}

/** Every field of a record except the service's own (id, createdAt, updatedAt), content checked. */
export const companyRecordSchema = z.strictObject(recordShape(true));

/** The same fields as the API answers them: shapes and types, without re-checking stored content. */
export const companyRecordShape = recordShape(false);

export type CompanyRecord = z.infer<typeof companyRecordSchema>;
export const COMPANY_FIELDS = Object.keys(companyRecordSchema.shape) as Array<keyof CompanyRecord>;

export interface RecordIssue {
  field: string;
  reason: string;
}

/** Orders partial dates: `2025` < `2025-03` < `2025-03-01`. */
const dateKey = (d: string) => d.padEnd(10, ' ');

/** Rules across fields, for rows that already match the schema. */
export function consistencyIssues(r: CompanyRecord): RecordIssue[] {
  const issues: RecordIssue[] = [];
  const history = r.fundingHistory ?? [];
  for (let i = 1; i < history.length; i++) {
    if (dateKey(history[i]!.date) < dateKey(history[i - 1]!.date)) {
      issues.push({ field: `fundingHistory.${i}.date`, reason: `${history[i]!.date} is before the previous round (${history[i - 1]!.date}); sort ascending` });
    }
  }
  const last = history.at(-1);
  // The last-funding fields are all unknown (a source that lists some rounds, not necessarily the
  // latest) or all the last round's.
  const lastKnown = r.lastFundingDate != null || r.lastFundingRoundType != null || r.lastFundingAmountUsd != null;
  if (last && lastKnown) {
    const pairs: Array<[keyof CompanyRecord, unknown, unknown]> = [
      ['lastFundingDate', r.lastFundingDate, last.date],
      ['lastFundingRoundType', r.lastFundingRoundType, last.roundType],
      ['lastFundingAmountUsd', r.lastFundingAmountUsd, last.amount],
    ];
    for (const [field, value, expected] of pairs) {
      if ((value ?? null) !== (expected ?? null)) issues.push({ field, reason: `${JSON.stringify(value ?? null)} differs from the last fundingHistory entry (${JSON.stringify(expected ?? null)})` });
    }
    if (r.extra && r.extra.lastFundingDate != null && r.extra.lastFundingDate !== last.date) {
      issues.push({ field: 'extra.lastFundingDate', reason: `differs from the last fundingHistory entry (${last.date})` });
    }
  }
  if (r.totalFundingRounds != null && r.totalFundingRounds < history.length) {
    issues.push({ field: 'totalFundingRounds', reason: `${r.totalFundingRounds} is fewer than the ${history.length} rounds in fundingHistory` });
  }
  const raised = history.reduce((sum, round) => sum + (round.amount ?? 0), 0);
  if (r.totalFundingUsd != null && raised > r.totalFundingUsd) {
    issues.push({ field: 'totalFundingUsd', reason: `${r.totalFundingUsd} is less than the ${raised} raised in fundingHistory` });
  }
  if (r.lastFundingPreMoneyValuationUsd != null && last?.valuation != null && r.lastFundingPreMoneyValuationUsd > last.valuation) {
    issues.push({ field: 'lastFundingPreMoneyValuationUsd', reason: 'exceeds the last round\'s post-money valuation' });
  }
  const valuations = r.valuationHistory ?? [];
  for (let i = 1; i < valuations.length; i++) {
    if (dateKey(valuations[i]!.date) < dateKey(valuations[i - 1]!.date)) issues.push({ field: `valuationHistory.${i}.date`, reason: 'sort ascending by date' });
  }
  const sourceIds = new Set((r.provenance ?? []).map((p) => p.id));
  const refs = [...history.map((h, i) => [`fundingHistory.${i}.source`, h.source] as const), ...valuations.map((v, i) => [`valuationHistory.${i}.source`, v.source] as const)];
  for (const [field, ref] of refs) if (ref && !sourceIds.has(ref)) issues.push({ field, reason: `names source ${ref}, which the record's provenance does not list` });
  if (r.ipoDate && r.foundedYear && Number(r.ipoDate.slice(0, 4)) < r.foundedYear) {
    issues.push({ field: 'ipoDate', reason: `is before foundedYear ${r.foundedYear}` });
  }
  // Every figure names where it comes from (docs/data.md "Provenance"): a record without provenance
  // is cited by its referenceUrl, so one that states a figure must give it.
  if (!r.provenance?.length && !r.referenceUrl) {
    const figure = statedFigure(r);
    if (figure) issues.push({ field: 'referenceUrl', reason: `required with ${figure} when the record has no provenance: every figure names the page it comes from` });
  }
  return issues;
}

/** The first figure a record states (an amount in USD, a head count, a share count, a round or a dated valuation), if any. */
function statedFigure(r: CompanyRecord): string | undefined {
  if (r.fundingHistory?.length) return 'fundingHistory';
  if (r.valuationHistory?.length) return 'valuationHistory';
  for (const [field, value] of Object.entries(r)) {
    if (value != null && (field.endsWith('Usd') || field === 'employees' || field === 'numberDilutedShares')) return field;
  }
  return undefined;
}

export interface RowResult {
  /** 1-based position of the row in its file (the line for CSV, the array index + 1 for JSON). */
  line: number;
  record?: CompanyRecord;
  issues: RecordIssue[];
}

/** Validates rows of one file: the schema, the cross-field rules, and unique sourceIds. */
export function validateRows(rows: Array<{ line: number; value: unknown }>, knownSourceIds = new Map<string, string>(), origin = 'file'): RowResult[] {
  return rows.map(({ line, value }) => {
    const parsed = companyRecordSchema.safeParse(value);
    if (!parsed.success) {
      return {
        line,
        issues: parsed.error.issues.map((i) => ({
          field: i.path.join('.') || (i.code === 'unrecognized_keys' ? i.keys.join(',') : 'row'),
          reason: i.code === 'unrecognized_keys' ? 'unknown field' : i.message,
        })),
      };
    }
    const issues = consistencyIssues(parsed.data);
    const seen = knownSourceIds.get(parsed.data.sourceId);
    if (seen) issues.push({ field: 'sourceId', reason: `duplicate of ${seen}` });
    else knownSourceIds.set(parsed.data.sourceId, `${origin} row ${line}`);
    return { line, record: parsed.data, issues };
  });
}
