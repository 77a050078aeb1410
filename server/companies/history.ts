/**
 * A company's funding rounds and its valuation history as resources of their own
 * (docs/companies.md "Rounds and valuations"), read from its record: every figure carries the source
 * it was taken from and the date it holds for. Nothing is inferred: a round's investors are listed
 * only where the source names them per round (the record's `extra.keyInvestors` are the company's,
 * not a round's), and a valuation's basis is read from the round's own wording.
 */
import type { FundingRound } from '../../db/schema.ts';
import type { Company } from './queries.ts';

/** Where a figure comes from: the record's public reference, as of the figure's own date. */
export interface FigureSource {
  /** The dataset the record belongs to. */
  id: string;
  /** The public page the record's facts were taken from (its `referenceUrl`); null when it has none. */
  url: string | null;
  /** The date the figure holds for (`YYYY`, `YYYY-MM` or `YYYY-MM-DD`). */
  asOf: string;
}

/** The curated dataset shipped with the service (seeds/companies/). */
export const CURATED_SOURCE = 'curated';

export type ValuationBasis = 'primary' | 'secondary' | 'tender' | 'ipo' | 'merger' | 'reported';

const sourceOf = (company: Company, asOf: string): FigureSource => ({ id: CURATED_SOURCE, url: company.referenceUrl ?? null, asOf });

const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40) || 'round';

/** How a round's valuation was set, from its wording ("Tender offer (secondary)" → tender). */
export function basisOf(roundType: string | null): ValuationBasis {
  const t = (roundType ?? '').toLowerCase();
  if (/\btender\b/.test(t)) return 'tender';
  if (/\bsecondary\b/.test(t)) return 'secondary';
  if (/\bipo\b|\blisting\b/.test(t)) return 'ipo';
  if (/\bmerger\b|\bacquir/.test(t)) return 'merger';
  return 'primary';
}

/** The record's rounds, oldest first, each with a stable id (company, date and round type). */
export function roundsOf(company: Company) {
  const history: FundingRound[] = [...(company.fundingHistory ?? [])].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
  const seen = new Map<string, number>();
  return history.map((round, i) => {
    const base = `${company.sourceId}:${round.date}:${slug(round.roundType ?? 'round')}`;
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
      leadInvestors: [] as string[],
      investors: [] as string[],
      source: sourceOf(company, round.date),
    };
  });
}

/**
 * Every dated valuation of the company, oldest first: each round's post-money valuation (its basis
 * from the round's wording), and the record's current valuation when no round already states it.
 */
export function valuationsOf(company: Company) {
  const fromRounds = roundsOf(company)
    .filter((r) => r.postMoneyValuationUsd !== null)
    .map((r) => ({ date: r.date, valuationUsd: r.postMoneyValuationUsd!, basis: basisOf(r.roundType), roundId: r.id as string | null, source: r.source }));
  const current = company.valuationUsd !== null && company.valuationAsOf ? { date: company.valuationAsOf, valuationUsd: company.valuationUsd } : null;
  const stated = current && fromRounds.some((v) => v.valuationUsd === current.valuationUsd && (v.date.startsWith(current.date) || current.date.startsWith(v.date)));
  const all = current && !stated ? [...fromRounds, { ...current, basis: 'reported' as ValuationBasis, roundId: null, source: sourceOf(company, current.date) }] : fromRounds;
  return all.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
}
