/**
 * Backfill on the live venue, from Polymarket's price history: `GET /prices-history?market=<token>
 * &startTs=&endTs=&fidelity=<minutes>` on the CLOB answers `{history: [{t, p}]}` (t in Unix seconds,
 * p the token's price) per band token. What a backfilled candle can and cannot hold:
 *  - each point is one price per band (no book): the LONG/SHORT unit costs and the implied valuation
 *    are computed from those prices by the valuation module (docs/decisions.md §6, default floors), as if each
 *    price were the band's midpoint; each band's `close` is its last price in the candle; `bid` and
 *    `ask` are unknown (stored and answered as null);
 *  - open/high/low/close are over the history's points inside the candle (at `fidelity` spacing: at
 *    the default 1-minute fidelity a 1m candle has one point, so open = high = low = close);
 *  - a point needs a price for every band: the event's points begin at the first time every band's
 *    history has begun (a band's last price is carried forward between its points); a candle with no
 *    point is not written (a gap in the chart, not an invented price);
 *  - `samples` is 0 (the convention for a candle from the venue's history), `source` is `backfill`.
 * Polymarket keeps only 12-hour points (fidelity ≥ 720) for resolved markets: resolved and voided
 * events are backfilled at 1d only, at fidelity 720 (two points a day). A ladder event's histories are
 * its thresholds' Yes tokens ("above $X"), and its bands' prices their differences, P(>tᵢ) − P(>tᵢ₊₁)
 * (`ladderToBandProbabilities`), as its live quotes are (docs/trading.md "Ladders").
 * Requests are windowed (at most 1,440 points or 15 days each) and run one token at a time.
 */
import type { Db } from '../../db/client.ts';
import type { EventWithBands } from '../events/queries.ts';
import { usdToMicros } from '../lib/money.ts';
import { DEFAULT_FLOORS, ladderToBandProbabilities, ladderTokenId } from '../valuation/index.ts';
import { ClobError, type ClobHttp } from '../venues/polymarket/clob-http.ts';
import { TokenMap } from '../venues/polymarket/token-map.ts';
import { writeCandles } from './candle-store.ts';
import { CandleBuilder, pointOfPrices, type Candle, type CandleInterval } from './candles.ts';
import { candleSpan } from './backfill-paper.ts';

/** Default fidelity (minutes between points) per candle interval. */
export const DEFAULT_FIDELITY: Record<CandleInterval, number> = { '1m': 1, '1h': 1, '1d': 60 };
/** The finest fidelity Polymarket serves for a resolved market. */
export const RESOLVED_FIDELITY = 720;
const MAX_WINDOW_SECONDS = 15 * 86_400;
const POINTS_PER_WINDOW = 1_440;

export interface PricePoint {
  /** Unix seconds. */
  t: number;
  /** Price, 0 to 1. */
  p: number;
}

/** Where a token's price history comes from. */
export interface PriceHistorySource {
  /** Points with startSec ≤ t < endSec, ascending, without duplicates. */
  series(tokenId: string, startSec: number, endSec: number, fidelityMinutes: number): Promise<PricePoint[]>;
}

/** The CLOB's /prices-history, windowed. */
export class ClobPriceHistory implements PriceHistorySource {
  constructor(private http: ClobHttp) {}

  async series(tokenId: string, startSec: number, endSec: number, fidelity: number): Promise<PricePoint[]> {
    const window = Math.min(MAX_WINDOW_SECONDS, fidelity * 60 * POINTS_PER_WINDOW);
    const byTime = new Map<number, number>();
    for (let from = startSec; from < endSec; from += window) {
      const until = Math.min(endSec, from + window);
      const answer = await this.http.call<{ history?: unknown }>('GET', '/prices-history', {
        query: { market: tokenId, startTs: String(from), endTs: String(until), fidelity: String(fidelity) },
      });
      const history = Array.isArray(answer?.history) ? answer.history : [];
      for (const point of history as Array<Record<string, unknown>>) {
        const t = Number(point?.t);
        const p = Number(point?.p);
        if (Number.isFinite(t) && Number.isFinite(p) && p >= 0 && p <= 1 && t >= startSec && t < endSec) byTime.set(Math.floor(t), p);
      }
    }
    return [...byTime].sort((a, b) => a[0] - b[0]).map(([t, p]) => ({ t, p }));
  }
}

export interface LiveBackfillRange {
  interval: CandleInterval;
  from: number;
  until: number;
  fidelity?: number;
}

export type LiveBackfillResult = { candles: number; written: number; points: number; fidelity: number } | { skipped: string };

/** Backfills one event's candles from its tokens' price histories (a band event's bands, a ladder's thresholds). */
export async function backfillPolymarketEvent(db: Db, event: EventWithBands, source: PriceHistorySource, range: LiveBackfillRange, tokens = new TokenMap(db)): Promise<LiveBackfillResult> {
  const resolved = event.status === 'resolved' || event.status === 'voided';
  if (resolved && range.interval !== '1d') {
    return { skipped: `${event.id} is ${event.status}: Polymarket keeps only 12-hour points for resolved markets; backfill it at 1d` };
  }
  const fidelity = Math.max(range.fidelity ?? DEFAULT_FIDELITY[range.interval], resolved ? RESOLVED_FIDELITY : 1);
  const byBand = await tokens.byBand();
  // The tokens whose histories price the bands: the bands' own, or a ladder's thresholds' Yes.
  const ladder = event.venue.structure === 'ladder';
  const priced = ladder ? event.bands.slice(1).map((b) => ladderTokenId(b.id, 'yes')) : event.bands.map((b) => b.id);
  const missing = priced.filter((id) => !byBand.has(id));
  if (missing.length) return { skipped: `${event.id}: ${ladder ? 'threshold token' : 'band'} ${missing[0]} has no venue token (run npm run events:sync)` };
  const { start, end } = candleSpan(range.interval, range.from, range.until);
  if (end <= start) return { candles: 0, written: 0, points: 0, fidelity };
  const series: PricePoint[][] = [];
  for (const id of priced) {
    try {
      series.push(await source.series(byBand.get(id)!.tokenId, Math.floor(start / 1000), Math.ceil(end / 1000), fidelity));
    } catch (error) {
      if (error instanceof ClobError) return { skipped: `${event.id}: the CLOB refused the price history of ${id} (${error.message})` };
      throw error;
    }
  }
  const empty = priced.findIndex((_, i) => series[i]!.length === 0);
  if (empty >= 0) return { skipped: `${event.id}: no price history for ${priced[empty]} in the range` };

  // Every time any token has a point; at each, every token's latest price (carried forward).
  const times = [...new Set(series.flatMap((s) => s.map((p) => p.t)))].sort((a, b) => a - b);
  const cursor = priced.map(() => -1);
  const builder = new CandleBuilder('backfill', [range.interval]);
  const bands = event.bands.map((b) => ({ bandId: b.id, label: b.label, minValuation: b.minValuation, maxValuation: b.maxValuation }));
  const finished: Candle[] = [];
  let points = 0;
  for (const t of times) {
    const latest: number[] = [];
    for (let i = 0; i < series.length; i++) {
      const s = series[i]!;
      while (cursor[i]! + 1 < s.length && s[cursor[i]! + 1]!.t <= t) cursor[i]!++;
      if (cursor[i]! >= 0) latest.push(s[cursor[i]!]!.p);
    }
    if (latest.length < series.length) continue;
    points++;
    const prices = (ladder ? ladderToBandProbabilities(latest) : latest).map(usdToMicros);
    finished.push(...builder.add(event.id, pointOfPrices(bands, prices, t * 1000, DEFAULT_FLOORS)));
  }
  finished.push(...builder.finishBefore(end));
  const candles = finished.filter((c) => c.end <= end).map((c) => ({ ...c, samples: 0 }));
  return { candles: candles.length, written: await writeCandles(db, candles), points, fidelity };
}
