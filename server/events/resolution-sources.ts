/**
 * Reading an event's outcome from its two sources on the live venue — Gamma's market objects and the
 * chain's payout vectors — and deciding whether `events:sync` may apply it.
 *
 * Each band's market gets a verdict per source: `yes` (its Yes outcome won), `no`, `split` (a 50-50,
 * Polymarket's answer for a cancelled market) or `pending` (not reported yet, or not readable). The
 * event's outcome follows from the verdicts of all its markets:
 *  - bands (a neg-risk group, one market per band): exactly one `yes` and every other `no` → that
 *    band won; every market `split` → voided; two winners, or no winner once all reported →
 *    inconsistent; anything else → pending;
 *  - ladder ("above $X" markets, band 0 has none): the winner is the band of the highest threshold
 *    that resolved `yes` (band 0 when none did), provided every lower threshold is `yes` and every
 *    higher one `no`; otherwise inconsistent (or pending while any is unreported).
 * The sync applies an outcome only when both sources report the same one. One source reporting and
 * the other silent waits (the event is closed, trading stopped); two sources reporting different
 * outcomes is a contradiction: reported, never applied. An outcome already applied is never changed
 * by a sync — only an operator corrects one (POST /api/events/{eventId}/resolution), and only until
 * its positions have settled.
 */
import type { ConditionPayouts } from '../chain/resolution-reader.ts';
import type { GammaMarket } from './gamma-client.ts';
import type { EventWithBands } from './queries.ts';

export type MarketVerdict = 'yes' | 'no' | 'split' | 'pending';

export type SourceOutcome =
  | { kind: 'resolved'; bandIndex: number }
  | { kind: 'voided' }
  | { kind: 'pending'; detail: string }
  | { kind: 'inconsistent'; detail: string };

/** Gamma's verdict on one market: closed, resolved by UMA (where Gamma says), and settled prices of exactly 1/0 or 0.5/0.5. */
export function gammaVerdict(market: GammaMarket | undefined): MarketVerdict {
  if (!market || market.closed !== true) return 'pending';
  if (market.umaResolutionStatus != null && market.umaResolutionStatus.toLowerCase() !== 'resolved') return 'pending';
  const outcomes = (market.outcomes ?? []).map((o) => o.toLowerCase());
  const prices = market.outcomePrices?.map(Number) ?? [];
  const yes = prices[outcomes.indexOf('yes')];
  const no = prices[outcomes.indexOf('no')];
  if (yes === 1 && no === 0) return 'yes';
  if (yes === 0 && no === 1) return 'no';
  if (yes === 0.5 && no === 0.5) return 'split';
  return 'pending';
}

/** The chain's verdict on one market from its condition's payout vector (`yesIndex`: the Yes outcome's position). */
export function chainVerdict(payouts: ConditionPayouts | null | undefined, yesIndex = 0): MarketVerdict {
  if (!payouts || payouts.denominator === 0n) return 'pending';
  const yes = payouts.numerators[yesIndex] ?? 0n;
  const no = payouts.numerators[1 - yesIndex] ?? 0n;
  if (yes > 0n && no === 0n) return 'yes';
  if (yes === 0n && no > 0n) return 'no';
  if (yes > 0n && yes === no) return 'split';
  return 'pending';
}

/** The event's outcome from one source's verdicts, keyed by band index (a band without a market is absent). */
export function eventOutcome(event: Pick<EventWithBands, 'bands' | 'venue'>, verdicts: Map<number, MarketVerdict>): SourceOutcome {
  const ladder = event.venue.structure === 'ladder';
  const indexes = event.bands.map((_, i) => i).filter((i) => !(ladder && i === 0));
  const missing = indexes.filter((i) => !verdicts.has(i));
  const of = (i: number) => verdicts.get(i) ?? 'pending';
  const all = indexes.map(of);
  if (all.length && all.every((v) => v === 'split')) return { kind: 'voided' };
  if (all.some((v) => v === 'split')) return { kind: 'inconsistent', detail: 'some markets settled 50-50 and others did not' };
  const pending = indexes.filter((i) => of(i) === 'pending');
  if (!ladder) {
    const winners = indexes.filter((i) => of(i) === 'yes');
    if (winners.length > 1) return { kind: 'inconsistent', detail: `bands ${winners.join(', ')} all resolved Yes` };
    if (winners.length === 1 && !pending.length) return { kind: 'resolved', bandIndex: winners[0]! };
    if (!pending.length) return { kind: 'inconsistent', detail: 'every band resolved No' };
    return { kind: 'pending', detail: missing.length ? `bands ${missing.join(', ')} have no market` : `${pending.length} of ${indexes.length} markets not resolved` };
  }
  if (pending.length) return { kind: 'pending', detail: missing.length ? `bands ${missing.join(', ')} have no market` : `${pending.length} of ${indexes.length} markets not resolved` };
  const yes = indexes.filter((i) => of(i) === 'yes');
  const winner = yes.length ? Math.max(...yes) : 0;
  const monotone = indexes.every((i) => (i <= winner ? of(i) === 'yes' : of(i) === 'no'));
  if (!monotone) return { kind: 'inconsistent', detail: `"above" markets resolved out of order (Yes: ${yes.join(', ') || 'none'})` };
  return { kind: 'resolved', bandIndex: winner };
}

export const describeOutcome = (event: Pick<EventWithBands, 'bands'>, outcome: SourceOutcome) =>
  outcome.kind === 'resolved' ? `band ${event.bands[outcome.bandIndex]?.id} (${event.bands[outcome.bandIndex]?.label})` : outcome.kind === 'voided' ? 'voided (50-50)' : `${outcome.kind}: ${outcome.detail}`;

const sameOutcome = (a: SourceOutcome, b: SourceOutcome) => a.kind === b.kind && (a.kind !== 'resolved' || a.bandIndex === (b as { bandIndex: number }).bandIndex);
const reports = (o: SourceOutcome) => o.kind === 'resolved' || o.kind === 'voided';

export type ResolutionDecision =
  | { action: 'apply'; outcome: { winningBandId: string } | { voided: true } }
  | { action: 'none' | 'wait' | 'contradiction'; reason: string };

/**
 * What the sync does with the two sources' outcomes, given the event as stored. `chain` is null when
 * no chain reader is configured (POLYGON_RPC_URL unset): then nothing is applied automatically.
 */
export function decideResolution(event: Pick<EventWithBands, 'bands' | 'status' | 'resolvedBandIndex'>, gamma: SourceOutcome, chain: SourceOutcome | null): ResolutionDecision {
  const stored: SourceOutcome | null = event.status === 'voided' ? { kind: 'voided' } : event.status === 'resolved' && event.resolvedBandIndex !== null ? { kind: 'resolved', bandIndex: event.resolvedBandIndex } : null;
  const sources = [['Gamma', gamma], ...(chain ? [['the chain', chain] as const] : [])] as const;
  if (stored) {
    const disagreeing = sources.filter(([, o]) => reports(o) && !sameOutcome(o, stored));
    if (disagreeing.length) {
      return { action: 'contradiction', reason: `${event.status} as ${describeOutcome(event, stored)}, but ${disagreeing.map(([name, o]) => `${name} reports ${describeOutcome(event, o)}`).join(' and ')}; left as it is (an operator corrects an outcome)` };
    }
    return { action: 'none', reason: `already ${event.status}` };
  }
  for (const [name, o] of sources) if (o.kind === 'inconsistent') return { action: 'contradiction', reason: `${name}: ${o.detail}; not applied` };
  if (chain && reports(gamma) && reports(chain)) {
    if (!sameOutcome(gamma, chain)) return { action: 'contradiction', reason: `Gamma reports ${describeOutcome(event, gamma)} but the chain reports ${describeOutcome(event, chain)}; not applied` };
    return { action: 'apply', outcome: gamma.kind === 'voided' ? { voided: true } : { winningBandId: event.bands[(gamma as { bandIndex: number }).bandIndex]!.id } };
  }
  const reported = sources.find(([, o]) => reports(o));
  if (!reported) return { action: 'none', reason: 'not resolved' };
  const silent = chain ? (reported[0] === 'Gamma' ? 'the chain' : 'Gamma') : 'the chain (POLYGON_RPC_URL is not set)';
  return { action: 'wait', reason: `${reported[0]} reports ${describeOutcome(event, reported[1])}; waiting for ${silent} to confirm it` };
}
