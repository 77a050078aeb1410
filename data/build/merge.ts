/**
 * One record per resolved company (resolve.ts), field by field (docs/data.md "Merge rules"):
 *  - the curated record's values stand; other fields come from the highest-priority source that has
 *    them (headquarters city, region and country together, from one source; a head count with its date);
 *  - the current valuation is the newest dated figure of any source (a tie goes to the higher
 *    priority); every other dated figure stays in valuationHistory (the curated one too, when it
 *    loses), so nothing a source said is lost;
 *  - rounds are every source's, oldest first; investor names are written as the investor facts name
 *    them (data/sources/investors/);
 *  - every field records the source it came from (`provenance`), which the API answers as `sources`.
 */
import type { CompanyRecord, ValuationBasis } from '../../server/companies/company-schema.ts';
import { fold } from '../../server/companies/names.ts';
import type { Entity, Part } from './resolve.ts';
import { nameKey } from './resolve.ts';
import type { InvestorRow } from './sources.ts';
import { CURATED } from './sources.ts';
import type { SourceRow } from './source-row.ts';

type FundingRound = NonNullable<CompanyRecord['fundingHistory']>[number];
type ValuationPoint = NonNullable<CompanyRecord['valuationHistory']>[number];

const dateKey = (d: string) => d.padEnd(10, ' ');
const sameFigure = (a: { date: string; valuationUsd: number }, b: { date: string; valuationUsd: number }) =>
  a.valuationUsd === b.valuationUsd && (a.date.startsWith(b.date) || b.date.startsWith(a.date));

/** Investor names as the investor facts spell them ("a16z" → "Andreessen Horowitz"). */
export function investorNamer(investors: InvestorRow[]) {
  const canonical = new Map<string, string>();
  for (const i of investors) for (const n of [i.name, ...(i.aliases ?? [])]) canonical.set(fold(n), i.name);
  return (name: string) => canonical.get(fold(name)) ?? name.trim();
}

const IDENTITY = ['registeredName', 'website', 'industry', 'foundedYear', 'status', 'companyType', 'ipoDate'] as const;

export interface MergeContext {
  curatedAsOf: string;
  investorName: (name: string) => string;
}

export function mergeEntity(entity: Entity, ctx: MergeContext): CompanyRecord {
  const curated = entity.curated;
  const parts = entity.parts;
  const record: Record<string, unknown> = curated ? { ...curated } : { sourceId: entity.sourceId };
  const origin = new Map<string, string>();
  if (curated) for (const [field, value] of Object.entries(curated)) if (value !== null && value !== undefined && field !== 'sourceId') origin.set(field, CURATED);
  const unset = (field: string) => record[field] === null || record[field] === undefined;
  const take = (field: string, value: unknown, sourceId: string) => {
    record[field] = value;
    origin.set(field, sourceId);
  };

  if (unset('name')) take('name', parts[0]!.row.name, parts[0]!.source.id);
  for (const field of IDENTITY) {
    if (!unset(field)) continue;
    const part = parts.find((p) => p.row[field] !== null && p.row[field] !== undefined);
    if (part) take(field, part.row[field], part.source.id);
  }
  if (unset('headquartersCountry') && unset('headquartersCity')) {
    const part = parts.find((p) => p.row.headquartersCountry);
    if (part) for (const f of ['headquartersCity', 'headquartersRegion', 'headquartersCountry'] as const) if (part.row[f]) take(f, part.row[f], part.source.id);
  }
  if (unset('employees')) {
    const part = parts.find((p) => p.row.employees && p.row.employeesAsOf);
    if (part) {
      take('employees', part.row.employees, part.source.id);
      take('employeesAsOf', part.row.employeesAsOf, part.source.id);
    }
  }
  if (unset('referenceUrl')) take('referenceUrl', parts[0]!.row.url, parts[0]!.source.id);

  mergeAliases(record, parts, origin);
  mergeValuations(record, curated, parts, origin);
  mergeRounds(record, curated, parts, origin, ctx);
  mergeInvestors(record, parts, origin, ctx);

  // Provenance: one entry per source that lists the company, curated first, then by priority.
  const provenance: NonNullable<CompanyRecord['provenance']> = [];
  const fieldsOf = (id: string) => [...origin].filter(([, s]) => s === id).map(([f]) => f).sort();
  if (curated) provenance.push({ id: CURATED, url: curated.referenceUrl ?? null, asOf: ctx.curatedAsOf, fields: fieldsOf(CURATED) });
  for (const p of parts) {
    if (provenance.some((e) => e.id === p.source.id)) continue;
    provenance.push({ id: p.source.id, url: p.row.url, asOf: p.row.asOf, fields: fieldsOf(p.source.id) });
  }
  record.provenance = provenance;
  return record as CompanyRecord;
}

const FORMERLY = /\b(fka|f\/k\/a|formerly|previously|aka)\b/i;

function mergeAliases(record: Record<string, unknown>, parts: Part[], origin: Map<string, string>) {
  const own = new Set([nameKey(record.name as string), record.registeredName ? nameKey(record.registeredName as string) : '']);
  const aliases = new Map<string, string>();
  for (const a of (record.aliases as string[] | undefined) ?? []) aliases.set(nameKey(a), a);
  let from: string | undefined;
  for (const p of parts) {
    for (const n of [p.row.name, ...(p.row.aliases ?? [])]) {
      // "Assembled (fka Circle)" is a remark about a name, not a name.
      if (FORMERLY.test(n)) continue;
      const key = nameKey(n);
      if (!key || own.has(key) || aliases.has(key)) continue;
      aliases.set(key, n.trim());
      from ??= p.source.id;
    }
  }
  if (aliases.size && !origin.has('aliases') && from) {
    record.aliases = [...aliases.values()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    origin.set('aliases', from);
  }
}

function mergeValuations(record: Record<string, unknown>, curated: CompanyRecord | undefined, parts: Part[], origin: Map<string, string>) {
  const points: ValuationPoint[] = [];
  const rounds = (curated?.fundingHistory ?? []).filter((r) => r.valuation != null).map((r) => ({ date: r.date, valuationUsd: r.valuation! }));
  const stated = [...rounds];
  // The curated current figure, when it is no round's post-money: a point of its own should it lose.
  const own =
    curated?.valuationUsd != null && curated.valuationAsOf
      ? { date: curated.valuationAsOf, valuationUsd: curated.valuationUsd, basis: 'reported' as ValuationBasis, source: CURATED }
      : undefined;
  if (own) stated.push(own);
  for (const p of parts) {
    for (const v of p.row.valuations ?? []) {
      const point = { date: v.date, valuationUsd: v.valuationUsd, basis: v.basis as ValuationBasis, source: p.source.id };
      if (stated.some((s) => sameFigure(s, point)) || points.some((q) => sameFigure(q, point))) continue;
      points.push(point);
    }
  }
  if (!points.length) return;
  const byDate = (a: ValuationPoint, b: ValuationPoint) => (dateKey(a.date) < dateKey(b.date) ? -1 : dateKey(a.date) > dateKey(b.date) ? 1 : 0);
  points.sort(byDate);
  const keep = () => {
    record.valuationHistory = points;
    origin.set('valuationHistory', points[0]!.source!);
  };
  // Newest dated figure wins; a curated figure of the same date stands.
  const newest = points.reduce((best, p) => (dateKey(p.date) > dateKey(best.date) ? p : best));
  const current = record.valuationAsOf as string | undefined;
  if (record.valuationUsd != null && current && dateKey(current) >= dateKey(newest.date)) return keep();
  // The figure it replaces stays in the history (docs/data.md rule 4), unless a curated round states it.
  if (own && !rounds.some((r) => sameFigure(r, own))) {
    const at = points.findIndex((p) => dateKey(p.date) >= dateKey(own.date));
    points.splice(at < 0 ? points.length : at, 0, own);
  }
  keep();
  record.valuationUsd = newest.valuationUsd;
  record.valuationAsOf = newest.date;
  origin.set('valuationUsd', newest.source!);
  origin.set('valuationAsOf', newest.source!);
  // The step-up described the figure it replaces.
  for (const f of ['valuationStepUpMultiple', 'valuationStepUpDescription']) {
    delete record[f];
    origin.delete(f);
  }
}

function mergeRounds(record: Record<string, unknown>, curated: CompanyRecord | undefined, parts: Part[], origin: Map<string, string>, ctx: MergeContext) {
  const history: FundingRound[] = [...(curated?.fundingHistory ?? [])];
  const lastCurated = history.at(-1)?.date;
  const roundsKnown = curated?.totalFundingRounds;
  const keyInvestors: string[] = [];
  for (const p of parts) {
    for (const r of p.row.rounds ?? []) {
      const round: FundingRound = {
        date: r.date,
        roundType: r.roundType,
        amount: r.amountUsd,
        valuation: null,
        pricePerShare: null,
        investors: r.investors.map(ctx.investorName),
        leadInvestors: r.leadInvestors.map(ctx.investorName),
        source: p.source.id,
      };
      // A curated history is complete up to its last round (its last-funding fields say so): a source's
      // round fits in only before that, and only while the stated round count still holds.
      const fits = !curated || ((!lastCurated || dateKey(r.date) <= dateKey(lastCurated)) && (roundsKnown == null || history.length < roundsKnown));
      if (fits) history.push(round);
      else keyInvestors.push(...round.investors!, ...round.leadInvestors!);
      origin.set('fundingHistory', origin.get('fundingHistory') ?? p.source.id);
    }
  }
  if (keyInvestors.length) (record as { _roundInvestors?: string[] })._roundInvestors = keyInvestors;
  if (!history.length) return;
  // Stable: equal dates keep curated rounds first, then sources by priority.
  record.fundingHistory = history
    .map((h, i) => [h, i] as const)
    .sort(([a, i], [b, j]) => (dateKey(a.date) < dateKey(b.date) ? -1 : dateKey(a.date) > dateKey(b.date) ? 1 : i - j))
    .map(([h]) => h);
}

function mergeInvestors(record: Record<string, unknown>, parts: Part[], origin: Map<string, string>, ctx: MergeContext) {
  const extra = { ...((record.extra as Record<string, unknown> | undefined) ?? {}) };
  const names: string[] = [];
  const add = (n: string) => {
    if (!names.some((m) => fold(m) === fold(n))) names.push(n);
  };
  // Two spellings of one investor ("HongShan", "Sequoia Capital China") are one name.
  for (const n of (extra.keyInvestors as string[] | undefined) ?? []) add(ctx.investorName(n));
  const leftover = (record as { _roundInvestors?: string[] })._roundInvestors ?? [];
  delete (record as { _roundInvestors?: string[] })._roundInvestors;
  let from: string | undefined;
  for (const p of parts) {
    for (const n of [...(p.row.investors ?? []).map(ctx.investorName)]) {
      add(n);
      from ??= p.source.id;
    }
  }
  for (const n of leftover) add(n);
  if (!names.length) return;
  extra.keyInvestors = names;
  record.extra = extra;
  if (!origin.has('extra')) origin.set('extra', from ?? parts[0]?.source.id ?? CURATED);
}

/** The rows a source gave one company, for reports. */
export type { SourceRow };
