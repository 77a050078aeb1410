/**
 * Recognising IPO valuation events among Gamma's `ipo`-tagged events, and turning each one into an
 * EventRecord (event-schema.ts) with no band issue. Pure: raw JSON in, a record or a reason out.
 *
 * Two shapes qualify (docs/decisions.md §6): a neg-risk group of exclusive band markets ("<$500B",
 * "$500B-750B", "$1.5T+"), with or without a "No IPO" market; and a ladder of cumulative
 * "above $X" markets, stored as bands [t_i, t_i+1) under a bottom band "below t_1" that has no market.
 * Ranges and thresholds are read from each market's `groupItemTitle`, checked against its question,
 * never from a slug or `groupItemThreshold` (Gamma's ordering index within the group). Whatever cannot
 * be read with certainty is not listed: the answer is then a reason naming the event and the market.
 */
import { z } from 'zod';
import { bandIssues, eventRecordSchema, type EventRecord } from './event-schema.ts';
import { gammaEventSchema, gammaMarketSchema, type GammaMarket } from './gamma-client.ts';

export type Recognition = { ok: true; record: EventRecord } | { ok: false; reason: string };

/** A market's meaning: the No IPO outcome, or the valuation range it pays on, in billions (max null = open). */
export type MarketMeaning = { kind: 'noIpo' } | { kind: 'range'; min: number; max: number | null };

const UNITS: Record<string, number> = { k: 1e-6, m: 1e-3, mn: 1e-3, million: 1e-3, b: 1, bn: 1, billion: 1, t: 1000, tn: 1000, trillion: 1000 };
// An amount: "$1.25T", "750B", "$16 billion". `$` is optional in titles, required in questions (dates and days are numbers too).
const AMOUNT = String.raw`(\d+(?:\.\d+)?)\s*(trillion|billion|million|tn|bn|mn|[kmbt](?![a-z]))?`;
const DOLLAR = String.raw`\$\s*${AMOUNT}`;
const ANY = String.raw`\$?\s*${AMOUNT}`;
const BELOW = String.raw`(?:<=?|under|below|less than|lower than)`;
const ABOVE = String.raw`(?:>=?|above|over|more than|greater than|higher than|at least|exceeds?)`;
const OR_MORE = String.raw`(?:\+|or more|or greater|or higher|or above|and above|and up)`;
const TO = String.raw`(?:-|to|and)`;

/** En and em dashes, ≤/≥, curly quotes and thousands separators, as plain ASCII. */
function normalize(text: string) {
  return text
    .replace(/[\u2013\u2014\u2212]/g, '-')
    .replace(/\u2264/g, '<=')
    .replace(/\u2265/g, '>=')
    .replace(/(\d),(?=\d{3}(?!\d))/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Billions, rounded to shed binary noise (1.1 × 1000 is 1100.0000000000002); the unit may be borrowed ("$500-750B"). */
function billions(value: string, unit: string | undefined, borrowed?: string): number | null {
  const scale = UNITS[(unit ?? borrowed ?? '').toLowerCase()];
  return scale === undefined ? null : Math.round(Number(value) * scale * 1e9) / 1e9;
}

type Reading = MarketMeaning | { kind: 'amount'; value: number };

function read(text: string, patterns: [RegExp, (m: RegExpExecArray) => Reading | null][]): Reading | null {
  for (const [pattern, build] of patterns) {
    const m = pattern.exec(text);
    if (m) return build(m);
  }
  return null;
}

const below = (m: RegExpExecArray): Reading | null => {
  const max = billions(m[1]!, m[2]);
  return max === null ? null : { kind: 'range', min: 0, max };
};
const open = (m: RegExpExecArray): Reading | null => {
  const min = billions(m[1]!, m[2]);
  return min === null ? null : { kind: 'range', min, max: null };
};
const between = (m: RegExpExecArray): Reading | null => {
  const min = billions(m[1]!, m[2], m[4]);
  const max = billions(m[3]!, m[4]);
  return min === null || max === null ? null : { kind: 'range', min, max };
};

/** A short band title, read whole: "<$500B", "$500B-750B", "$1.5T+", "≥$600B", ">$1T", or a bare "$16B". */
function readTitle(title: string): Reading | null {
  const amount = (m: RegExpExecArray): Reading | null => {
    const value = billions(m[1]!, m[2]);
    return value === null ? null : { kind: 'amount', value };
  };
  return read(normalize(title), [
    [new RegExp(`^${BELOW}\\s*${ANY}$`, 'i'), below],
    [new RegExp(`^${ABOVE}\\s*${ANY}$`, 'i'), open],
    [new RegExp(`^${ANY}\\s*${OR_MORE}$`, 'i'), open],
    [new RegExp(`^(?:between\\s+)?${ANY}\\s*${TO}\\s*${ANY}$`, 'i'), between],
    [new RegExp(`^${ANY}$`, 'i'), amount],
  ]);
}

/** A question, searched: "between $100B and $200B", "less than $500B", "$1.5T or greater", "above $1.4T", "<$100B". */
function readQuestion(question: string): Reading | null {
  return read(normalize(question), [
    [new RegExp(`between\\s+${DOLLAR}\\s+and\\s+${ANY}`, 'i'), between],
    [new RegExp(`${DOLLAR}\\s*(?:-|to)\\s*${ANY}`, 'i'), between],
    [new RegExp(`${BELOW}\\s*${DOLLAR}`, 'i'), below],
    [new RegExp(`${DOLLAR}\\s*${OR_MORE}`, 'i'), open],
    [new RegExp(`${ABOVE}\\s*${DOLLAR}`, 'i'), open],
  ]);
}

const isNoIpo = (text: string) => /\b(?:no|not|never|doesn't|does not|won't|will not) ipo\b/i.test(normalize(text).replace(/\u2019/g, "'"));

/** What a market pays on, from its title checked against its question; a string says why it cannot be read. */
export function marketMeaning(m: Pick<GammaMarket, 'groupItemTitle' | 'question'>): MarketMeaning | string {
  const title = m.groupItemTitle?.trim() ?? '';
  const question = m.question?.trim() ?? '';
  if (isNoIpo(title) || (!title && isNoIpo(question))) return { kind: 'noIpo' };
  const t = title ? readTitle(title) : null;
  const q = question ? readQuestion(question) : null;
  // A bare amount ("$16B") says where, the question says which side.
  if (t?.kind === 'amount') return q?.kind === 'range' && (q.min === t.value || q.max === t.value) ? q : `its title "${title}" names no range the question confirms`;
  if (t && q && JSON.stringify(t) !== JSON.stringify(q)) return `its title "${title}" and its question disagree`;
  const meaning = t ?? q;
  return meaning && meaning.kind !== 'amount' ? meaning : `no valuation range in "${title || question}"`;
}

/** The X of an "above $X" ladder market, in billions: from its title (">$1T", "$16B", "above $1.4T"), else its question. */
export function ladderThreshold(m: Pick<GammaMarket, 'groupItemTitle' | 'question'>): number | null {
  const title = m.groupItemTitle?.trim() ? readTitle(m.groupItemTitle) : null;
  const reading = title ?? (m.question ? readQuestion(m.question) : null);
  if (reading?.kind === 'amount') return reading.value;
  return reading?.kind === 'range' && reading.max === null ? reading.min : null;
}

/** Our id for a venue slug: Polymarket's trailing numeric suffixes dropped (`…-cap-119`, `…-above-2t-649-783` → `…-above-2t`). */
export function baseEventId(slug: string): string {
  const clean = slug.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/-+/g, '-').replace(/^-|-$/g, '');
  const base = clean.replace(/(?:-\d+)+$/, '') || clean;
  // Ids are at most 64 characters (event-schema.ts); room is left for uniqueEventId's "-N".
  if (base.length <= 60) return base;
  const cut = base.slice(0, 61).replace(/-[^-]*$/, '');
  return cut.length <= 60 ? cut : base.slice(0, 60);
}

/** `base`, else `base-2`, `base-3`, … : the first not in `taken` (which the caller updates). */
export function uniqueEventId(base: string, taken: Set<string>): string {
  if (!taken.has(base)) return base;
  let n = 2;
  while (taken.has(`${base}-${n}`)) n++;
  return `${base}-${n}`;
}

/** "$500B", "$1.25T", "$800M". */
export function formatValuation(b: number): string {
  const trim = (x: number) => String(Number(x.toFixed(6)));
  return b >= 1000 ? `$${trim(b / 1000)}T` : b >= 1 ? `$${trim(b)}B` : `$${trim(b * 1000)}M`;
}

const bandLabel = (min: number, max: number | null) => (max === null ? `${formatValuation(min)}+` : min === 0 ? `Below ${formatValuation(max)}` : `${formatValuation(min)}–${formatValuation(max)}`);
const price = (p: number) => Math.round(Math.min(1, Math.max(0, p)) * 1e6) / 1e6;

interface ReadMarket {
  market: GammaMarket;
  meaning: MarketMeaning;
  yesToken: string;
  yesPrice: number;
}
type RangedMarket = ReadMarket & { meaning: { kind: 'range' } };

/** The Yes token (v1: clobTokenIds, v2: positionIds) and Yes price of a market, or why not. */
function yesOf(m: GammaMarket): { token: string; price: number } | string {
  if (m.version !== 'v1' && m.version !== 'v2') return `unknown market version ${JSON.stringify(m.version ?? null)}`;
  const ids = m.version === 'v2' ? m.positionIds : m.clobTokenIds;
  if (!ids?.length) return `no token ids (${m.version === 'v2' ? 'positionIds' : 'clobTokenIds'})`;
  const yes = (m.outcomes ?? []).findIndex((o) => o.toLowerCase() === 'yes');
  if (yes < 0 || !ids[yes]) return 'no Yes outcome with a token';
  const p = Number(m.outcomePrices?.[yes]);
  if (m.outcomePrices?.[yes] === undefined || !Number.isFinite(p)) return 'no Yes price';
  return { token: ids[yes]!, price: p };
}

const eventShell = gammaEventSchema.extend({ markets: z.array(z.unknown()).default([]) });
const firstIssue = (error: z.ZodError) => {
  const issue = error.issues[0]!;
  return `${issue.path.join('.') || 'value'}: ${issue.message}`;
};
const marketName = (m: { id?: unknown; groupItemTitle?: unknown; question?: unknown }) => `market ${String(m.id ?? '?')} (${JSON.stringify(m.groupItemTitle || m.question || '')})`;

/** The record for an IPO valuation event on Gamma, or why it is not one (or not one we can read). */
export function recognizeIpoEvent(input: unknown): Recognition {
  const shell = eventShell.safeParse(input);
  if (!shell.success) return { ok: false, reason: `not a Gamma event: ${firstIssue(shell.error)}` };
  const gamma = shell.data;
  const no = (why: string): Recognition => ({ ok: false, reason: `${gamma.slug}: ${why}` });
  const title = normalize(gamma.title ?? '');
  const company = /^(?:will\s+)?(.+?)\s+IPO\b/i.exec(title)?.[1]?.trim();
  if (!company || !/market cap|valuation/i.test(title)) return no(`not an IPO valuation event (title "${title}")`);
  if (gamma.markets.length < 2) return no(`fewer than 2 markets (${gamma.markets.length})`);

  const markets: ReadMarket[] = [];
  for (const raw of gamma.markets) {
    const parsed = gammaMarketSchema.safeParse(raw);
    if (!parsed.success) return no(`${marketName(raw && typeof raw === 'object' ? raw : {})}: ${firstIssue(parsed.error)}`);
    const market = parsed.data;
    const name = marketName(market);
    const yes = yesOf(market);
    if (typeof yes === 'string') return no(`${name}: ${yes}`);
    const meaning = marketMeaning(market);
    if (typeof meaning === 'string') return no(`${name}: ${meaning}`);
    markets.push({ market, meaning, yesToken: yes.token, yesPrice: yes.price });
  }

  const noIpo = markets.filter((m) => m.meaning.kind === 'noIpo');
  const ranged = markets.filter((m): m is RangedMarket => m.meaning.kind === 'range');
  const openEnded = ranged.filter((m) => m.meaning.max === null);
  const built = openEnded.length === markets.length ? ladderBands(ranged, gamma.negRisk) : openEnded.length > 1 ? `mixes ${openEnded.length} cumulative "above" markets with band markets` : exclusiveBands(noIpo, ranged, gamma.negRisk);
  if (typeof built === 'string') return no(built);

  const tradeable = markets.some(({ market: m }) => m.active !== false && !m.closed && m.acceptingOrders !== false);
  const endDate = gamma.endDate && !Number.isNaN(Date.parse(gamma.endDate)) ? new Date(gamma.endDate).toISOString() : null;
  const record: EventRecord = {
    id: baseEventId(gamma.slug),
    name: title.replace(/_{2,}/g, ' ').replace(/[\s?]+$/, '').replace(/\s+(?:above|over|below)$/i, '').replace(/\s+/g, ' '),
    company,
    companySourceId: null,
    // A resolution is never taken from discovery: the sync reads it from both sources (resolution-sources.ts).
    status: gamma.closed === true || !tradeable ? 'closed' : 'open',
    resolvedBandIndex: null,
    endDate,
    volumeUsd: Number.isFinite(gamma.volume) && gamma.volume! >= 0 ? gamma.volume! : null,
    venue: {
      name: 'polymarket',
      eventSlug: gamma.slug,
      gammaEventId: Number.isInteger(gamma.id) && gamma.id > 0 ? gamma.id : null,
      negRisk: gamma.negRisk ?? null,
      structure: built.structure,
    },
    bands: built.bands,
  };
  const valid = eventRecordSchema.safeParse(record);
  if (!valid.success) return no(`the record fails the event schema: ${firstIssue(valid.error)}`);
  const issues = bandIssues(valid.data);
  return issues.length ? no(`band issues: ${issues.join('; ')}`) : { ok: true, record: valid.data };
}

type Built = { structure: 'bands' | 'ladder'; bands: EventRecord['bands'] } | string;

const venueOf = (r: ReadMarket, threshold: number | null) => ({ tokenId: r.yesToken, conditionId: r.market.conditionId ?? null, question: r.market.question ?? null, threshold });

/** Cumulative "above t_i" markets as bands [t_i, t_i+1): P(band i) = P(>t_i) − P(>t_i+1), the bottom 1 − P(>t_1). */
function ladderBands(rungs: RangedMarket[], negRisk: boolean | null | undefined): Built {
  if (negRisk === true) return 'a neg-risk group whose markets are all "above $X": cumulative markets cannot be exclusive';
  const sorted = [...rungs].sort((a, b) => a.meaning.min - b.meaning.min);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.meaning.min === sorted[i - 1]!.meaning.min) return `markets ${sorted[i - 1]!.market.id} and ${sorted[i]!.market.id} are both above ${formatValuation(sorted[i]!.meaning.min)}`;
  }
  if (sorted[0]!.meaning.min <= 0) return `market ${sorted[0]!.market.id} is above $0, which leaves no bottom band`;
  const thresholds = sorted.map((r) => r.meaning.min);
  const bottom = { label: bandLabel(0, thresholds[0]!), minValuation: 0, maxValuation: thresholds[0]!, seedPrice: price(1 - sorted[0]!.yesPrice), venue: { tokenId: null, conditionId: null, question: null, threshold: null } };
  return {
    structure: 'ladder',
    bands: [
      bottom,
      ...sorted.map((r, i) => {
        const max = thresholds[i + 1] ?? null;
        return { label: bandLabel(r.meaning.min, max), minValuation: r.meaning.min, maxValuation: max, seedPrice: price(r.yesPrice - (sorted[i + 1]?.yesPrice ?? 0)), venue: venueOf(r, r.meaning.min) };
      }),
    ],
  };
}

/** A neg-risk group's markets as bands: No IPO first, then ranges covering [0, ∞) without gap or overlap. */
function exclusiveBands(noIpo: ReadMarket[], ranged: RangedMarket[], negRisk: boolean | null | undefined): Built {
  if (negRisk !== true) return `band markets outside a neg-risk group (negRisk ${JSON.stringify(negRisk ?? null)}) are not exclusive`;
  if (noIpo.length > 1) return `markets ${noIpo.map((m) => m.market.id).join(' and ')} are both "No IPO"`;
  if (ranged.length < 2) return `fewer than 2 valuation bands (${ranged.length})`;
  const span = (r: RangedMarket) => bandLabel(r.meaning.min, r.meaning.max);
  for (const r of ranged) if (r.meaning.max !== null && r.meaning.max <= r.meaning.min) return `market ${r.market.id} has a range that runs backwards (${formatValuation(r.meaning.min)} to ${formatValuation(r.meaning.max)})`;
  const sorted = [...ranged].sort((a, b) => a.meaning.min - b.meaning.min || (a.meaning.max ?? Infinity) - (b.meaning.max ?? Infinity));
  if (sorted[0]!.meaning.min !== 0) return `no market covers below ${formatValuation(sorted[0]!.meaning.min)}`;
  for (let i = 1; i < sorted.length; i++) {
    const [prev, next] = [sorted[i - 1]!, sorted[i]!];
    const end = prev.meaning.max ?? Infinity;
    if (next.meaning.min < end) return `markets ${prev.market.id} (${span(prev)}) and ${next.market.id} (${span(next)}) overlap`;
    if (next.meaning.min > end) return `no market covers ${formatValuation(end)} to ${formatValuation(next.meaning.min)}`;
  }
  if (sorted.at(-1)!.meaning.max !== null) return `no market covers above ${formatValuation(sorted.at(-1)!.meaning.max!)}`;
  const none = noIpo.map((r) => ({ label: 'No IPO', minValuation: 0, maxValuation: 0, seedPrice: price(r.yesPrice), venue: venueOf(r, null) }));
  const bands = sorted.map((r) => ({ label: span(r), minValuation: r.meaning.min, maxValuation: r.meaning.max, seedPrice: price(r.yesPrice), venue: venueOf(r, null) }));
  return { structure: 'bands', bands: [...none, ...bands] };
}
