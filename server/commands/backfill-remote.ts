/**
 * `history:backfill` through a running server (remote.ts): the command asks the server that holds the
 * embedded database to backfill, with the operator route POST /api/trading/valuation/history/backfill. A paper range longer than one call may compute (MAX_POINTS_PER_CALL per
 * event) is split into consecutive calls; the lines printed are the same as when the command writes
 * to the database itself, one per event, summed over its calls.
 */
import { MAX_POINTS_PER_CALL, type BackfillLine } from '../history/backfill.ts';
import { INTERVAL_MS, type CandleInterval } from '../history/candles.ts';
import { PAPER_STEP_MS } from '../history/backfill-paper.ts';
import { callServer as call, type RemoteServer } from './remote.ts';

export interface RemoteBackfill extends RemoteServer {
  interval: CandleInterval;
  from: Date;
  to: Date;
  events?: string[];
  stepMs?: number;
  fidelity?: number;
}

/**
 * [from, to] cut at candle boundaries so that no piece needs more than MAX_POINTS_PER_CALL paper
 * points. A piece's end is the next one's start: a backfill writes the candles that end by its `to`,
 * and the next piece's first candle starts there, so no candle is computed twice or left out.
 */
export function pieces(interval: CandleInterval, from: number, to: number, stepMs = PAPER_STEP_MS[interval]): Array<[number, number]> {
  const span = Math.max(INTERVAL_MS[interval], Math.floor((MAX_POINTS_PER_CALL * stepMs) / INTERVAL_MS[interval]) * INTERVAL_MS[interval]);
  const out: Array<[number, number]> = [];
  for (let start = from; start < to; start += span) out.push([start, Math.min(to, start + span)]);
  return out.length ? out : [[from, to]];
}

export async function backfillThroughServer(options: RemoteBackfill): Promise<BackfillLine[]> {
  const ids: string[] = options.events?.length
    ? options.events
    : (await call(options, 'GET', '/events/listings?listing=listed')).events.map((e: { eventId: string }) => e.eventId);
  const lines: BackfillLine[] = [];
  for (const event of ids) {
    const total: BackfillLine = { event, interval: options.interval, venue: 'paper', problems: [] };
    for (const [from, to] of pieces(options.interval, options.from.getTime(), options.to.getTime(), options.stepMs)) {
      const { lines: [line] } = await call(options, 'POST', '/trading/valuation/history/backfill', {
        interval: options.interval,
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        events: [event],
        ...(options.stepMs ? { stepSeconds: options.stepMs / 1000 } : {}),
        ...(options.fidelity ? { fidelity: options.fidelity } : {}),
      });
      total.event = line.event;
      total.venue = line.venue;
      for (const key of ['candles', 'written', 'points'] as const) if (line[key] !== undefined) total[key] = (total[key] ?? 0) + line[key];
      if (line.fidelity !== undefined) total.fidelity = line.fidelity;
      if (line.skipped !== undefined) total.skipped = line.skipped;
      total.problems.push(...line.problems);
      if (line.skipped !== undefined || line.problems.length) break;
    }
    lines.push(total);
  }
  return lines;
}
