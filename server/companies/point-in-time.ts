/**
 * A company as it stood on a day (GET /api/private-companies/{id}?asOf=YYYY-MM-DD, docs/companies.md
 * "Point in time"), computed from the record's own dated facts. Valid time, not transaction time: the
 * answer holds the facts dated on or before the day, as the record knows them now; nothing is looked
 * up in a past version of the dataset, and nothing is estimated.
 *
 * - A partial date counts from its first day: a round of `2025-03` is known on 2025-03-01, one of
 *   `2025` on 2025-01-01.
 * - Rounds (fundingHistory), valuationHistory and acquisitions (subsidiariesAndAcquisitions with an
 *   acquiredDate) dated after the day are dropped.
 * - valuationUsd/valuationAsOf: the latest valuation known on the day among the company's dated
 *   valuations (valuationsOf: rounds' post-money figures, valuationHistory, and the current valuation
 *   when its own date is on or before the day); null when none is. The record's current valuation,
 *   once known, is replaced only by a later, different figure (not by a same-day figure of another
 *   list). The step-up fields stay only while the valuation is the record's current one.
 * - lastFunding*: when a round was dropped, the date, round type and amount are the last remaining
 *   round's (if the record stated them), its number is its position when the record lists every round,
 *   and the other lastFunding* facts (pre-money, status, structure, …) are null: they were the dropped
 *   round's. totalFundingRounds and totalFundingUsd are null then, unless the record lists every round
 *   (and, for the amount, every round's amount adding up to the total): then they are recounted.
 * - employees/employeesAsOf are null when the head count is dated after the day; ipoDate is null when
 *   the listing came after it, and so are listingStatus and companyType when they describe the listing.
 * - Undated facts (name, aliases, website, people, products, segments, financial figures, status) are
 *   given as they are now.
 * - The provenance is kept, with the figures re-derived from a round or a dated valuation attributed
 *   to that round's or valuation's source, so the detail's `sources` name where each figure now comes from.
 *
 * A company founded in a later year than the day did not exist yet: companyAsOf answers null.
 */
import type { FundingRound, ProvenanceEntry } from '../../db/schema.ts';
import { dateKey, sourceOf, valuationsOf } from './history.ts';
import type { Company } from './queries.ts';

/** The first day a (partial) date names: `2025` → 2025-01-01, `2025-03` → 2025-03-01. */
export function firstDayOf(date: string): string {
  if (date.length === 4) return `${date}-01-01`;
  if (date.length === 7) return `${date}-01`;
  return date;
}

/** Whether a fact dated `date` (YYYY, YYYY-MM or YYYY-MM-DD) is known on `day` (YYYY-MM-DD). */
export const knownOn = (date: string, day: string) => firstDayOf(date) <= day;

/** Whether the company existed on `day`: founded in that year or before (or its founding is unknown). */
export const existedOn = (c: Pick<Company, 'foundedYear'>, day: string) => c.foundedYear == null || c.foundedYear <= Number(day.slice(0, 4));

/** A listing status or company type that says the company is listed (`Listed (NYSE: KLAR)`, `OTC (FNMA)`, `Public`). */
const LISTING = /^(listed|public|otc)\b/i;

const LAST_FUNDING_OTHER = [
  'lastFundingRoundStatus',
  'lastFundingPreMoneyValuationUsd',
  'lastFundingRoundStructure',
  'lastFundingRoundStrategicPurpose',
  'lastFundingRoundNewInvestor',
  'lastFundingEstPricePerShareUsd',
] as const satisfies ReadonlyArray<keyof Company>;

/** The provenance with `fields` given by the entry `sourceId` alone (unchanged when it lists no such entry). */
function attribute(provenance: ProvenanceEntry[] | null, fields: string[], sourceId: string | undefined): ProvenanceEntry[] | null {
  if (!provenance || !sourceId || !provenance.some((p) => p.id === sourceId)) return provenance;
  return provenance.map((p) =>
    p.id === sourceId ? { ...p, fields: [...new Set([...p.fields, ...fields])] } : { ...p, fields: p.fields.filter((f) => !fields.includes(f)) },
  );
}

/**
 * The record as it stood on `day` (YYYY-MM-DD), or null when the company did not exist yet. Pure: the
 * given record is not changed.
 */
export function companyAsOf(c: Company, day: string): Company | null {
  if (!existedOn(c, day)) return null;
  const out: Company = { ...c };
  let provenance = c.provenance ?? null;

  // Rounds, oldest first (a stable sort keeps the record's order among rounds of the same date).
  const history: FundingRound[] = [...(c.fundingHistory ?? [])].sort((a, b) => (dateKey(a.date) < dateKey(b.date) ? -1 : dateKey(a.date) > dateKey(b.date) ? 1 : 0));
  const rounds = history.filter((r) => knownOn(r.date, day));
  // A last round the record states without listing it (no fundingHistory) is dropped by its own date.
  const unlistedLastDropped = history.length === 0 && c.lastFundingDate != null && !knownOn(c.lastFundingDate, day);
  const roundDropped = rounds.length < history.length || unlistedLastDropped;
  if (c.fundingHistory) out.fundingHistory = c.fundingHistory.filter((r) => knownOn(r.date, day));

  if (roundDropped) {
    const last = rounds.at(-1);
    const lastStated = c.lastFundingDate != null || c.lastFundingRoundType != null || c.lastFundingAmountUsd != null;
    const complete = history.length > 0 && c.totalFundingRounds === history.length;
    out.lastFundingDate = lastStated && last ? last.date : null;
    out.lastFundingRoundType = lastStated && last ? (last.roundType ?? null) : null;
    out.lastFundingAmountUsd = lastStated && last ? (last.amount ?? null) : null;
    out.lastFundingRoundNumber = last && c.lastFundingRoundNumber != null && c.lastFundingRoundNumber === history.length ? rounds.length : null;
    for (const field of LAST_FUNDING_OTHER) out[field] = null;
    if (c.extra && (c.extra.lastFundingRound != null || c.extra.lastFundingDate != null)) {
      out.extra = { ...c.extra, lastFundingRound: last ? (last.roundType ?? null) : null, lastFundingDate: last ? last.date : null };
    }
    out.totalFundingRounds = complete ? rounds.length : null;
    const amountsAddUp = complete && history.every((r) => r.amount != null) && history.reduce((sum, r) => sum + r.amount!, 0) === c.totalFundingUsd;
    out.totalFundingUsd = amountsAddUp ? rounds.reduce((sum, r) => sum + r.amount!, 0) : null;
    if (last && lastStated) {
      provenance = attribute(provenance, ['lastFundingDate', 'lastFundingRoundType', 'lastFundingAmountUsd'], sourceOf(c, last.source, last.date).id);
    }
  }

  if (c.valuationHistory) out.valuationHistory = c.valuationHistory.filter((v) => knownOn(v.date, day));

  // The valuation: the latest of the dated valuations known on the day (valuationsOf over the rounds,
  // reported figures and current valuation known then, so a figure is dated as it was known then).
  // The record's current one, when known by then and not superseded by a later, different figure,
  // is answered as the record states it, with its step-up.
  const current = c.valuationUsd != null && c.valuationAsOf ? { date: c.valuationAsOf, valuationUsd: c.valuationUsd } : null;
  const currentKnown = current !== null && knownOn(current.date, day);
  const known = valuationsOf({
    ...c,
    fundingHistory: rounds,
    valuationHistory: out.valuationHistory ?? null,
    valuationUsd: currentKnown ? c.valuationUsd : null,
    valuationAsOf: currentKnown ? c.valuationAsOf : null,
  });
  const latest = known.at(-1);
  // Figures of the same date as the current one that disagree with it (two lists) do not supersede it.
  const holds = currentKnown && known.every((v) => v.valuationUsd === current!.valuationUsd || dateKey(v.date) <= dateKey(current!.date));
  const valuationUsd = holds ? c.valuationUsd : (latest?.valuationUsd ?? null);
  const valuationAsOf = holds ? c.valuationAsOf : (latest?.date ?? null);
  if (valuationUsd !== c.valuationUsd || valuationAsOf !== c.valuationAsOf) {
    out.valuationUsd = valuationUsd;
    out.valuationAsOf = valuationAsOf;
    out.valuationStepUpMultiple = null;
    out.valuationStepUpDescription = null;
    if (latest && !holds) provenance = attribute(provenance, ['valuationUsd', 'valuationAsOf'], latest.source.id);
  }

  if (c.employeesAsOf && !knownOn(c.employeesAsOf, day)) {
    out.employees = null;
    out.employeesAsOf = null;
  }

  if (c.ipoDate && !knownOn(c.ipoDate, day)) {
    out.ipoDate = null;
    if (c.listingStatus && LISTING.test(c.listingStatus)) out.listingStatus = null;
    if (c.companyType && LISTING.test(c.companyType)) out.companyType = null;
  }

  if (c.subsidiariesAndAcquisitions) out.subsidiariesAndAcquisitions = c.subsidiariesAndAcquisitions.filter((s) => !s.acquiredDate || knownOn(s.acquiredDate, day));

  out.provenance = provenance;
  return out;
}
