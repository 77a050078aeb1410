/**
 * Refreshing an event's venue mapping from Gamma (docs/decisions.md §6, §8). Band ids never change (positions
 * refer to them): a sync only fills each band's venue token, market version and trading parameters,
 * and the event's status, end date and volume.
 *
 * Matching is by meaning, not by position in Gamma's list: the "No IPO" market goes to the band
 * [0, 0]; a band market to the band with the same valuation range (parsed from its title, else its
 * question); a ladder market ("above $X") to the band that starts at X, X read from its title or
 * question (discovery.ts), never from `groupItemThreshold`, which is Gamma's ordering index within the
 * group (">$1T" carries "15"). Anything that does not match is reported and left as it was.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { eventBands, events, type BandVenueMapping, type EventVenueMapping } from '../../db/schema.ts';
import { ladderThreshold, marketMeaning } from './discovery.ts';
import type { GammaEvent, GammaMarket } from './gamma-client.ts';
import type { EventWithBands } from './queries.ts';

export interface EventSyncPlan {
  eventId: string;
  /** The Gamma market matched to each band index (resolution-sources.ts reads their outcomes). */
  markets: Map<number, GammaMarket>;
  bands: { bandIndex: number; venue: BandVenueMapping }[];
  event: { venue: EventVenueMapping; status: EventWithBands['status']; endDate: Date | null; volumeUsd: number | null };
  problems: string[];
}

function tokensOf(m: GammaMarket): { yes: string | null; no: string | null; version: 'v1' | 'v2' | null; problem?: string } {
  const version = m.version === 'v1' || m.version === 'v2' ? m.version : null;
  if (!version) return { yes: null, no: null, version, problem: `market ${m.id}: unknown market version ${JSON.stringify(m.version ?? null)}` };
  const outcomes = (m.outcomes ?? []).map((o) => o.toLowerCase());
  const ids = version === 'v2' ? m.positionIds : m.clobTokenIds;
  const yes = outcomes.indexOf('yes');
  const no = outcomes.indexOf('no');
  if (!ids || yes < 0 || !ids[yes]) return { yes: null, no: null, version, problem: `market ${m.id}: no Yes token` };
  return { yes: ids[yes]!, no: no >= 0 ? (ids[no] ?? null) : null, version };
}

export function planEventSync(event: EventWithBands, gamma: GammaEvent, now = new Date()): EventSyncPlan {
  const problems: string[] = [];
  const ladder = event.venue.structure === 'ladder';
  const assigned = new Map<number, GammaMarket>();
  for (const market of gamma.markets) {
    let index = -1;
    // The same reading of titles and questions as discovery (discovery.ts), so what it listed the sync finds again.
    const meaning = marketMeaning(market);
    if (typeof meaning !== 'string' && meaning.kind === 'noIpo') index = event.bands.findIndex((b) => b.minValuation === 0 && b.maxValuation === 0);
    else if (ladder) {
      const threshold = ladderThreshold(market);
      if (threshold !== null) index = event.bands.findIndex((b) => b.minValuation === threshold && b.minValuation > 0);
    } else if (typeof meaning !== 'string') {
      const { min, max } = meaning;
      index = event.bands.findIndex((b) => !(b.minValuation === 0 && b.maxValuation === 0) && b.minValuation === min && b.maxValuation === max);
    }
    if (index < 0) problems.push(`market ${market.id} (${market.groupItemTitle ?? market.question ?? '?'}) matches no band of ${event.id}`);
    else if (assigned.has(index)) problems.push(`markets ${assigned.get(index)!.id} and ${market.id} both match band ${index} of ${event.id}`);
    else assigned.set(index, market);
  }

  const bands: EventSyncPlan['bands'] = [];
  event.bands.forEach((band, index) => {
    const market = assigned.get(index);
    // A ladder's bottom band has no market of its own (it is "not above the first threshold").
    if (!market) {
      if (!(ladder && index === 0)) problems.push(`band ${index} (${band.label}) of ${event.id} has no market`);
      return;
    }
    const tokens = tokensOf(market);
    if (tokens.problem) {
      problems.push(tokens.problem);
      return;
    }
    bands.push({
      bandIndex: index,
      venue: {
        ...band.venue,
        tokenId: tokens.yes,
        noTokenId: tokens.no,
        conditionId: market.conditionId ?? null,
        question: market.question ?? band.venue.question,
        threshold: ladder ? band.minValuation : band.venue.threshold,
        version: tokens.version,
        negRisk: market.negRisk ?? gamma.negRisk ?? null,
        tickSize: market.orderPriceMinTickSize ?? null,
        minOrderSize: market.orderMinSize ?? null,
        acceptingOrders: market.acceptingOrders ?? null,
      },
    });
  });

  const tradeable = gamma.markets.some((m) => m.active !== false && !m.closed && m.acceptingOrders !== false);
  // A resolution (or a void) is final here: settlements have been paid on it; only an operator changes it.
  const final = event.status === 'resolved' || event.status === 'voided';
  const status = final ? event.status : gamma.closed ? 'closed' : tradeable ? 'open' : event.status;
  return {
    eventId: event.id,
    markets: assigned,
    bands,
    event: {
      venue: { ...event.venue, eventSlug: gamma.slug, gammaEventId: gamma.id, negRisk: gamma.negRisk ?? event.venue.negRisk, syncedAt: now.toISOString() },
      status,
      endDate: gamma.endDate ? new Date(gamma.endDate) : event.endDate,
      volumeUsd: gamma.volume ?? event.volumeUsd,
    },
    problems,
  };
}

/**
 * Writes a plan in one transaction. Band ids and everything the plan does not name stay as they are,
 * and a resolution or void is never undone: the event row is locked and a `resolved`/`voided` status
 * stays whatever the plan says (an operator may have resolved the event while this sync was reading
 * Gamma; only an operator changes an outcome).
 */
export async function applyEventSync(db: Db, plan: EventSyncPlan) {
  await db.transaction(async (tx) => {
    await tx.select({ id: events.id }).from(events).where(eq(events.id, plan.eventId)).for('update');
    await tx
      .update(events)
      .set({
        venue: plan.event.venue,
        status: sql`case when ${events.status} in ('resolved', 'voided') then ${events.status} else ${plan.event.status} end`,
        endDate: plan.event.endDate,
        volumeUsd: plan.event.volumeUsd,
        updatedAt: sql`now()`,
      })
      .where(eq(events.id, plan.eventId));
    for (const band of plan.bands) {
      await tx
        .update(eventBands)
        .set({ venue: band.venue })
        .where(and(eq(eventBands.eventId, plan.eventId), eq(eventBands.bandIndex, band.bandIndex)));
    }
  });
}
