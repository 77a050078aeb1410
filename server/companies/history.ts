/**
 * A company's funding rounds and its valuation history as resources of their own
 * (docs/companies.md "Rounds and valuations"), read from its record: every figure carries the source
 * it was taken from and the date it holds for. Nothing is inferred: a round's investors are listed
 * only where the source names them per round (the record's `extra.keyInvestors` are the company's,
 * not a round's), and a valuation's basis is read from the round's own wording or given by the source.
 */
import type { FundingRound, ProvenanceEntry } from '../../db/schema.ts';
import type { ValuationBasis } from './company-schema.ts';
import type { Company } from './queries.ts';

/** Where a figure comes from: a source of data/sources/, its page for the company, and the figure's date. */
export interface FigureSource {
  /** The source (data/sources/<id>; `curated`: the service's hand-checked records). */
  id: string;
  /** The public page the figure was taken from; null when the source names none. */
  url: string | null;
  /** The date the figure holds for (`YYYY`, `YYYY-MM` or `YYYY-MM-DD`). */
  asOf: string;
}


type Sourced = Pick<Company, 'referenceUrl' | 'provenance'>;

/** The provenance entry a figure names (or the record's first), as the figure's source at `asOf`. */
export function sourceOf(company: Sourced, ref: string | null | undefined, asOf: string): FigureSource {
  const entries: ProvenanceEntry[] = company.provenance ?? [];
  const entry = (ref ? entries.find((p) => p.id === ref) : undefined) ?? entries[0];
  // A record that names no source (an operator's import file) is cited by its own reference.
  if (!entry) return { id: 'import', url: company.referenceUrl ?? null, asOf };
  return { id: entry.id, url: entry.url ?? null, asOf };
}

/**
 * A round type as the last part of its round id. Not names.ts `slug`: round ids are published and
 * stay as they were first given (this one keeps accents' letters apart and may end in '-' at the cut).
 */
const roundSlug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40) || 'round';

/** Orders partial dates: `2025` < `2025-03` < `2025-03-01`. */
export const dateKey = (d: string) => d.padEnd(10, ' ');
const byDate = <T extends { date: string }>(a: T, b: T) => (dateKey(a.date) < dateKey(b.date) ? -1 : dateKey(a.date) > dateKey(b.date) ? 1 : 0);

/** How a round's valuation was set, from its wording ("Tender offer (secondary)" → tender). */
export function basisOf(roundType: string | null): ValuationBasis {
  const t = (roundType ?? '').toLowerCase();
  if (/\btender\b/.test(t)) return 'tender';
  if (/\bsecondary\b/.test(t)) return 'secondary';
  // "Pre-IPO" names a private round before a listing, not the listing.
  if (/\bpre[- ]?ipo\b/.test(t)) return 'primary';
  if (/\bipo\b|\blisting\b/.test(t)) return 'ipo';
  if (/\bmerger\b|\bacquir/.test(t)) return 'merger';
  return 'primary';
}

type RoundSubject = Pick<Company, 'id' | 'sourceId' | 'fundingHistory' | 'lastFundingPreMoneyValuationUsd' | 'referenceUrl' | 'provenance'>;

/** The record's rounds, oldest first, each with a stable id (company, date and round type). */
export function roundsOf(company: RoundSubject) {
  const history: FundingRound[] = [...(company.fundingHistory ?? [])].sort(byDate);
  const seen = new Map<string, number>();
  return history.map((round, i) => {
    const base = `${company.sourceId}:${round.date}:${roundSlug(round.roundType ?? 'round')}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    const last = i === history.length - 1;
    return {
      id: n === 1 ? base : `${base}-${n}`,
      companyId: company.id,
      date: round.date,
      roundType: round.roundType,
      amountUsd: round.amount ?? null,
      // Only the latest round's pre-money is a field of the record.
      preMoneyValuationUsd: last ? (company.lastFundingPreMoneyValuationUsd ?? null) : null,
      postMoneyValuationUsd: round.valuation ?? null,
      pricePerShareUsd: round.pricePerShare ?? null,
      leadInvestors: round.leadInvestors ?? [],
      investors: round.investors ?? [],
      source: sourceOf(company, round.source, round.date),
    };
  });
}

type ValuationSubject = RoundSubject & Pick<Company, 'valuationUsd' | 'valuationAsOf' | 'valuationHistory'>;

const sameFigure = (a: { date: string; valuationUsd: number }, b: { date: string; valuationUsd: number }) =>
  a.valuationUsd === b.valuationUsd && (a.date.startsWith(b.date) || b.date.startsWith(a.date));

/**
 * Every dated valuation of the company, oldest first: each round's post-money valuation (its basis
 * from the round's wording), the dated figures the sources report outside rounds (valuationHistory),
 * and the record's current valuation when nothing else states it. A figure stated twice (a round and a
 * list giving the same value for the same date) is given once, by the round.
 */
export function valuationsOf(company: ValuationSubject) {
  type Point = { date: string; valuationUsd: number; basis: ValuationBasis; roundId: string | null; source: FigureSource };
  const points: Point[] = roundsOf(company)
    .filter((r) => r.postMoneyValuationUsd !== null)
    .map((r) => ({ date: r.date, valuationUsd: r.postMoneyValuationUsd!, basis: basisOf(r.roundType), roundId: r.id as string | null, source: r.source }));
  const add = (p: Point) => {
    if (!points.some((q) => sameFigure(p, q))) points.push(p);
  };
  for (const v of company.valuationHistory ?? []) add({ date: v.date, valuationUsd: v.valuationUsd, basis: v.basis, roundId: null, source: sourceOf(company, v.source, v.date) });
  if (company.valuationUsd !== null && company.valuationAsOf) {
    add({ date: company.valuationAsOf, valuationUsd: company.valuationUsd, basis: 'reported', roundId: null, source: sourceOf(company, fieldSourceId(company, 'valuationUsd'), company.valuationAsOf) });
  }
  return points.sort(byDate);
}

/** The source id that gave a field (the first provenance entry listing it). */
export function fieldSourceId(company: Pick<Company, 'provenance'>, field: string): string | undefined {
  return (company.provenance ?? []).find((p) => p.fields.includes(field))?.id;
}
