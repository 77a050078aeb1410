/**
 * Portfolio history: the user's holdings at each point in time, rebuilt from their
 * trades (buys, sales, settlements), valued from the valuation candles; the last point is now,
 * valued at the current market-data snapshot exactly as GET /api/trading/positions values it.
 *
 * At a point T (every interval boundary in the range, then the range's end):
 *  - holdings: per position and band, shares bought − shares sold in the trades made at or before T;
 *    a SETTLE trade (or a `tokens-gone` closure by positions/sync, which writes no trade) empties the
 *    position;
 *  - costBasis: per position and band, what its buys paid (fees included) less the basis each sale
 *    released (its proceeds − fees − realised P&L), as server/trading/ledger-writes.ts moves it; 0 once settled;
 *  - realizedPnl: Σ realised P&L of those trades (what GET /api/trading/history sums up to T);
 *  - marketValue: Σ over holdings of floor(shares × price), where the price is the band's best bid at
 *    the close of the latest candle that closed at or before T (the interval's candles, and for 1h the
 *    1d candles too); a candle without a bid (backfilled from the live venue's price history) gives its
 *    close price; a band with no such candle is valued at its cost basis (no price known: no P&L shown),
 *    as is a ladder's threshold token (candles are per band; a token's bid is no sum of band bids);
 *  - unrealizedPnl = marketValue − costBasis.
 * At the last point, when the range ends now: every trade so far and the snapshot's best bids (0 for
 * a band without one), so it equals Σ currentValue, Σ cost and Σ realizedPnl of /positions?status=all.
 * Integers throughout (micro-USD, micro-shares); USD numbers only in the answer.
 */
import { and, asc, eq, lte } from 'drizzle-orm';
import { positions, trades } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import { INPUT_LIMITS } from '../lib/input-limits.ts';
import { microsToUsd } from '../lib/money.ts';
import type { HistoryHandles } from './handles.ts';
import type { TradingUser } from '../trading/settings.ts';
import { bestBids, valueOf } from '../trading/answers.ts';
import { candlesClosedBetween, latestClosedBy } from './candle-store.ts';
import { INTERVAL_MS, type Candle, type CandleInterval } from './candles.ts';
import { candleRecordingOf, historyNow } from './recording.ts';

export type PortfolioInterval = '1h' | '1d';

/** Points one answer may hold (the boundaries of the range and its end). */
export const MAX_PORTFOLIO_POINTS = 2_000;
/** The default range: a week of hours, a year of days. */
const DEFAULT_SPAN_MS: Record<PortfolioInterval, number> = { '1h': 7 * 86_400_000, '1d': 365 * 86_400_000 };
/** The candles a price is read from. */
const PRICE_INTERVALS: Record<PortfolioInterval, CandleInterval[]> = { '1h': ['1h', '1d'], '1d': ['1d'] };

/** The earliest point of a range: the earliest instant a date parameter may name (1970-01-01T00:00:00Z). */
const EARLIEST = Date.parse(`${INPUT_LIMITS.minDate}T00:00:00.000Z`);

interface Holding {
  positionId: string;
  eventId: string;
  bandId: string;
  sharesMicros: number;
  costMicros: number;
}

interface PointMicros {
  time: number;
  marketValue: number;
  costBasis: number;
  realizedPnl: number;
}

/** The candles of one event, by end, and the latest closed by the time being valued. */
class EventPrices {
  private index = -1;
  private byBand?: Map<string, number>;
  constructor(private candles: Candle[]) {}

  /** Moves to the latest candle that closed at or before `time` (times only increase). */
  advance(time: number) {
    let moved = false;
    while (this.index + 1 < this.candles.length && this.candles[this.index + 1]!.end <= time) {
      this.index++;
      moved = true;
    }
    if (moved) this.byBand = undefined;
  }

  /** The band's bid (its close when the candle has no bid) at that candle, or undefined when none is known. */
  price(bandId: string): number | undefined {
    if (this.index < 0) return undefined;
    this.byBand ??= new Map(this.candles[this.index]!.bands.map((b) => [b.bandId, b.bidMicros ?? b.closeMicros]));
    return this.byBand.get(bandId);
  }
}

export async function portfolioHistory(services: HistoryHandles, user: TradingUser, q: { interval: PortfolioInterval; from?: Date; to?: Date }) {
  const db = services.database.db;
  const now = historyNow(services);
  const step = INTERVAL_MS[q.interval];
  const live = q.to === undefined || q.to.getTime() >= now;
  const to = live ? now : q.to!.getTime();
  // Never before 1970-01-01T00:00Z, the earliest instant a date parameter may name: a default range
  // ending early in 1970 is cut there, not answered with points in 1969 (docs/history.md).
  const from = Math.max(EARLIEST, q.from?.getTime() ?? to - DEFAULT_SPAN_MS[q.interval]);
  if (from > to) throw new ApiError('BAD_REQUEST', 'from: must not be after to');
  const first = Math.ceil(from / step) * step;
  const boundaries = first < to ? Math.floor((to - first - 1) / step) + 1 : 0;
  if (boundaries + 1 > MAX_PORTFOLIO_POINTS) {
    throw new ApiError('BAD_REQUEST', `from: at most ${MAX_PORTFOLIO_POINTS} points per answer (${q.interval} from ${new Date(from).toISOString()} to ${new Date(to).toISOString()} is ${boundaries + 1}); narrow the range or use 1d`);
  }
  const times: number[] = [];
  for (let i = 0; i < boundaries; i++) times.push(first + i * step);
  times.push(to);

  const mine = and(eq(trades.accountId, user.accountId), eq(trades.userId, user.userId));
  const [tradeRows, goneRows, snapshot] = await Promise.all([
    db
      .select({
        positionId: trades.positionId,
        eventId: trades.eventId,
        bandId: trades.bandId,
        action: trades.action,
        sharesMicros: trades.sharesMicros,
        amountMicros: trades.amountMicros,
        feesMicros: trades.feesMicros,
        realizedPnlMicros: trades.realizedPnlMicros,
        createdAt: trades.createdAt,
      })
      .from(trades)
      .where(live ? mine : and(mine, lte(trades.createdAt, new Date(to))))
      .orderBy(asc(trades.createdAt), asc(trades.id)),
    db
      .select({ id: positions.id, closedAt: positions.closedAt })
      .from(positions)
      .where(and(eq(positions.accountId, user.accountId), eq(positions.userId, user.userId), eq(positions.closeReason, 'tokens-gone'))),
    live ? services.marketData.snapshot() : undefined,
  ]);

  // The candles prices come from: those closed in the range, the last one closed before it, and the
  // ones this instance has finished but not written yet.
  const eventIds = [...new Set(tradeRows.map((t) => t.eventId))];
  const intervals = PRICE_INTERVALS[q.interval];
  const [inRange, before] = await Promise.all([
    candlesClosedBetween(db, { eventIds, intervals, fromEnd: from, toEnd: to }),
    latestClosedBy(db, { eventIds, intervals, at: from }),
  ]);
  const byEvent = new Map<string, Candle[]>(eventIds.map((id) => [id, []]));
  for (const c of [...before, ...inRange]) byEvent.get(c.eventId)!.push(c);
  const recording = candleRecordingOf(services);
  if (recording) {
    for (const eventId of eventIds) {
      for (const interval of intervals) {
        const current = recording.current(eventId, interval);
        const finished = [...recording.unwritten(eventId, interval), ...(current && current.end <= to ? [current] : [])];
        byEvent.get(eventId)!.push(...finished.filter((c) => c.end <= to));
      }
    }
  }
  const prices = new Map<string, EventPrices>();
  for (const [eventId, candles] of byEvent) prices.set(eventId, new EventPrices(candles.sort((a, b) => a.end - b.end || a.start - b.start)));

  const holdings = new Map<string, Holding>();
  const byPosition = new Map<string, Holding[]>();
  const holding = (positionId: string, eventId: string, bandId: string) => {
    const key = `${positionId}\u0000${bandId}`;
    let h = holdings.get(key);
    if (!h) {
      h = { positionId, eventId, bandId, sharesMicros: 0, costMicros: 0 };
      holdings.set(key, h);
      byPosition.set(positionId, [...(byPosition.get(positionId) ?? []), h]);
    }
    return h;
  };
  const empty = (positionId: string) => {
    for (const h of byPosition.get(positionId) ?? []) {
      h.sharesMicros = 0;
      h.costMicros = 0;
    }
  };
  const gone = goneRows.filter((g) => g.closedAt).map((g) => ({ id: g.id, at: g.closedAt!.getTime() })).sort((a, b) => a.at - b.at);

  let realized = 0;
  let nextTrade = 0;
  let nextGone = 0;
  const points: PointMicros[] = [];
  for (let i = 0; i < times.length; i++) {
    const time = times[i]!;
    const atNow = live && i === times.length - 1;
    while (nextTrade < tradeRows.length && (atNow || tradeRows[nextTrade]!.createdAt.getTime() <= time)) {
      const t = tradeRows[nextTrade++]!;
      if (t.action === 'BUY') {
        const h = holding(t.positionId, t.eventId, t.bandId);
        h.sharesMicros += t.sharesMicros;
        h.costMicros += t.amountMicros + t.feesMicros;
      } else if (t.action === 'SELL') {
        const h = holding(t.positionId, t.eventId, t.bandId);
        h.sharesMicros -= t.sharesMicros;
        h.costMicros -= t.amountMicros - t.feesMicros - t.realizedPnlMicros;
      } else {
        empty(t.positionId);
      }
      realized += t.realizedPnlMicros;
    }
    while (nextGone < gone.length && (atNow || gone[nextGone]!.at <= time)) empty(gone[nextGone++]!.id);

    let marketValue = 0;
    let costBasis = 0;
    if (atNow) {
      const bids = bestBids(snapshot!.books);
      for (const h of holdings.values()) {
        costBasis += h.costMicros;
        marketValue += valueOf(h.sharesMicros, bids.get(h.bandId) ?? 0);
      }
    } else {
      for (const p of prices.values()) p.advance(time);
      for (const h of holdings.values()) {
        costBasis += h.costMicros;
        if (h.sharesMicros <= 0) continue;
        const price = prices.get(h.eventId)?.price(h.bandId);
        marketValue += price === undefined ? h.costMicros : valueOf(h.sharesMicros, price);
      }
    }
    points.push({ time, marketValue, costBasis, realizedPnl: realized });
  }

  return {
    interval: q.interval,
    points: points.map((p) => ({
      time: new Date(p.time).toISOString(),
      marketValue: microsToUsd(p.marketValue),
      costBasis: microsToUsd(p.costBasis),
      realizedPnl: microsToUsd(p.realizedPnl),
      unrealizedPnl: microsToUsd(p.marketValue - p.costBasis),
    })),
  };
}
