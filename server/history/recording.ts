/**
 * Candle recording: subscribes to the market recorder and turns every recording into
 * points of each listed event's 1m, 1h and 1d candles (builder in candles.ts). A recording past a
 * candle's end finishes it, and the finished candle is written once (`ON CONFLICT DO NOTHING`: with
 * several instances the first to write a candle keeps it). Also prunes 1-minute candles older than
 * CANDLE_MINUTE_RETENTION_DAYS, once at start and every hour, and finishes candles that ended 30 s
 * ago or more once a minute even when no recording comes (the venue is down).
 *
 *   const candles = startCandleRecording(services);   // before services.recorder.start(…)
 *   …
 *   await services.recorder.stop(); await candles.stop();
 *
 * The listener does its work in memory and never waits for the database: writes go through one
 * queue beside the recorder, so a slow or unreachable database delays no other listener (the live
 * streams). A write that fails stays queued and is retried on the next recording.
 *
 * Every event in a recording gets candles, whatever its status: resolved, voided and closed events
 * keep theirs and keep getting new ones while they are listed (their books are still quoted and
 * /valuation still answers for them).
 *
 * A 1h or 1d candle is the whole interval's even when this process started in its middle (after a
 * deploy or restart, or beside instances that were already running): before it is written, the
 * 1-minute candles stored for its span before the minute of this process's first point in it (written
 * by this service before the restart, or by another instance) are put in front of it (open, high, low
 * and samples; close and bands stay this process's latest). So the first instance to write it writes
 * the complete candle, as far as the stored 1-minute candles go. At start, the 1-minute candles of
 * the current hour and day are read too, so the current (unfinished) 1h and 1d candles shown by the
 * history route are whole from the first recording on.
 */
import type { Recording } from '../market/recorder.ts';
import { startJob } from '../lib/jobs.ts';
import type { HistoryHandles } from './handles.ts';
import type { Db } from '../../db/client.ts';
import { combinedMinuteSpans, pruneMinuteCandles, writeCandles } from './candle-store.ts';
import { alignStart, CandleBuilder, pointOfValuation, withEarlier, type Candle, type CandleInterval, type CandleSpan } from './candles.ts';
import { errorMessage } from '../lib/error-message.ts';

const DAY_MS = 86_400_000;
const PRUNE_EVERY_MS = 3_600_000;
/** How often ended candles are finished without waiting for a recording, and how long after their end. */
const FINISH_EVERY_MS = 60_000;
const FINISH_GRACE_MS = 30_000;
/** Finished candles kept in memory while the database does not take them (17 events × 3 intervals a minute: hours of outage). */
const MAX_QUEUED = 100_000;
/** At most one warning this often about failing writes. */
const WARN_EVERY_MS = 10_000;

export interface CandleRecording {
  /** The clock the recording and the history routes use (Date.now unless a test injects one). */
  now(): number;
  /** The unfinished candle of an event and interval (`final: false` in the history route). */
  current(eventId: string, interval: CandleInterval): Candle | undefined;
  /** Finished candles of an event and interval not yet in the database (queued or being written). */
  unwritten(eventId: string, interval: CandleInterval): Candle[];
  /** Finishes every candle whose end is at or before `now` (default: the clock) and writes all finished candles. */
  closeCandles(now?: number): Promise<void>;
  /** Writes the finished candles queued so far (never rejects; a failed write stays queued). */
  flush(): Promise<void>;
  /** Deletes 1-minute candles older than the retention (default cutoff: the clock − CANDLE_MINUTE_RETENTION_DAYS). */
  prune(now?: number): Promise<number>;
  /**
   * Unsubscribes, writes what has finished by now, stops pruning. Unfinished candles are dropped (the
   * 1-minute candles written so far let the next process, or another instance, rebuild the hour and the day).
   */
  stop(): Promise<void>;
}

const recordings = new WeakMap<HistoryHandles, CandleRecording>();

/** Where the 1-minute candles that complete a candle end: the minute of the builder's first point in it. */
const earlierUntil = (c: Candle) => (c.interval === '1m' || c.firstPointAt === undefined ? c.start : Math.max(c.start, alignStart(c.firstPointAt, '1m')));

/**
 * The candles to write, each 1h or 1d one completed with the stored 1-minute candles of its span before
 * its first point's minute (one read per start and minute, for all events at once; none for a candle
 * whose builder saw its beginning).
 */
export async function completeCandles(db: Db, candles: Candle[]): Promise<Candle[]> {
  const groups = new Map<string, { from: number; until: number; eventIds: string[] }>();
  for (const c of candles) {
    const until = earlierUntil(c);
    if (until <= c.start) continue;
    const key = `${c.start}/${until}`;
    const group = groups.get(key) ?? { from: c.start, until, eventIds: [] };
    group.eventIds.push(c.eventId);
    groups.set(key, group);
  }
  if (!groups.size) return candles;
  const earlier = new Map<string, Map<string, CandleSpan>>();
  for (const [key, group] of groups) earlier.set(key, await combinedMinuteSpans(db, group));
  return candles.map((c) => {
    const span = earlier.get(`${c.start}/${earlierUntil(c)}`)?.get(c.eventId);
    return span ? withEarlier(span, c) : c;
  });
}

/** The candle recording running on these services, if any (the history routes read its current candles). */
export const candleRecordingOf = (services: HistoryHandles) => recordings.get(services);

/** The history routes' clock: the recording's, else the system clock. */
export const historyNow = (services: HistoryHandles) => recordings.get(services)?.now() ?? Date.now();

export function startCandleRecording(services: HistoryHandles, options: { now?: () => number; pruneEveryMs?: number } = {}): CandleRecording {
  const now = options.now ?? Date.now;
  const { logger } = services;
  const db = services.database.db;
  const builder = new CandleBuilder('snapshots');
  let queued: Candle[] = [];
  let inFlight: Candle[] = [];
  let chain: Promise<unknown> = Promise.resolve();
  let lastWarning = 0;
  let dropped = 0;
  /**
   * Per event and interval (1h, 1d): the 1-minute candles stored at start for the current hour and
   * day, before the minute this process started in, combined (`until`: the end of what they cover).
   */
  const seeds = new Map<string, { start: number; until: number; span: CandleSpan }>();
  const seedKey = (eventId: string, interval: CandleInterval) => `${eventId}\u0000${interval}`;
  const warn = (message: string, error: unknown) => {
    if (Date.now() - lastWarning < WARN_EVERY_MS) return;
    lastWarning = Date.now();
    logger.warn(message, { queued: queued.length, dropped, error: errorMessage(error) });
  };

  const enqueue = (candles: Candle[]) => {
    if (!candles.length) return;
    queued.push(...candles);
    if (queued.length > MAX_QUEUED) {
      dropped += queued.length - MAX_QUEUED;
      queued = queued.slice(queued.length - MAX_QUEUED);
    }
  };

  /** Writes the queue; answers the error of a failed write (the candles stay queued), never rejects. */
  const writeQueued = async (): Promise<unknown> => {
    if (!queued.length) return undefined;
    inFlight = queued;
    queued = [];
    try {
      await writeCandles(db, await completeCandles(db, inFlight));
      inFlight = [];
      return undefined;
    } catch (error) {
      // Kept (as built, completed again on the next try), ahead of anything queued meanwhile, for the next flush.
      queued = [...inFlight, ...queued];
      inFlight = [];
      warn('writing candles failed; kept for the next recording', error);
      return error;
    }
  };

  // Writes are queued one after the other (with every recording, and by the finisher job below).
  const write = () => (chain = chain.then(writeQueued));
  const flush = async () => void (await write());

  // The current hour's and day's 1-minute candles, read once at start (before any write: first on the queue).
  const seed = async () => {
    const at = now();
    const until = alignStart(at, '1m');
    const starts = { '1h': alignStart(at, '1h'), '1d': alignStart(at, '1d') } as const;
    try {
      for (const interval of ['1h', '1d'] as const) {
        for (const [eventId, span] of await combinedMinuteSpans(db, { from: starts[interval], until })) {
          seeds.set(seedKey(eventId, interval), { start: starts[interval], until, span });
        }
      }
    } catch (error) {
      // Only the current candles shown meanwhile are partial: a candle is completed again when written.
      warn('reading the current hour\'s and day\'s 1-minute candles failed', error);
    }
  };
  chain = chain.then(seed);
  /** A current or unwritten 1h/1d candle with the start's seed in front, when the seed covers what it lacks. */
  const seeded = (c: Candle): Candle => {
    const s = seeds.get(seedKey(c.eventId, c.interval));
    return s && s.start === c.start && earlierUntil(c) >= s.until ? withEarlier(s.span, c) : c;
  };

  const onRecording = (recording: Recording) => {
    const at = recording.takenAt.getTime();
    for (const [eventId, valuation] of recording.valuations) enqueue(builder.add(eventId, pointOfValuation(valuation, at)));
    // Events no longer listed (or not valued this time) finish their candles once these have ended.
    enqueue(builder.finishBefore(at));
    void flush();
  };

  const prune = async (at = now()) => {
    const cutoff = at - services.config.marketRecord.oneMinuteRetentionDays * DAY_MS;
    return pruneMinuteCandles(db, cutoff);
  };
  const unsubscribe = services.recorder.subscribe(onRecording);
  const jobs = { logger, metrics: services.metrics.jobs };
  const pruner = startJob({
    ...jobs,
    name: 'candle_prune',
    intervalMs: options.pruneEveryMs ?? PRUNE_EVERY_MS,
    firstRunMs: 0,
    run: async () => {
      const deleted = await prune();
      if (deleted) logger.info('pruned 1-minute candles', { deleted });
    },
  });
  // Candles also finish by the clock, so a venue outage (no recordings) does not keep an ended candle
  // in memory, unwritten, until the venue is back; the grace lets a snapshot in flight land first.
  // Its runs are what candle_write's metrics count: a failing write makes that job's lag grow.
  const finisher = startJob({
    ...jobs,
    name: 'candle_write',
    intervalMs: FINISH_EVERY_MS,
    run: async () => {
      enqueue(builder.finishBefore(now() - FINISH_GRACE_MS));
      const error = await write();
      if (error !== undefined) throw error;
    },
  });

  const same = (eventId: string, interval: CandleInterval) => (c: Candle) => c.eventId === eventId && c.interval === interval;
  const handle: CandleRecording = {
    now,
    current: (eventId, interval) => {
      const c = builder.currentOf(eventId, interval);
      return c && seeded(c);
    },
    unwritten: (eventId, interval) => [...inFlight, ...queued].filter(same(eventId, interval)).map(seeded),
    closeCandles: async (at = now()) => {
      enqueue(builder.finishBefore(at));
      await flush();
    },
    flush,
    prune,
    stop: async () => {
      unsubscribe();
      await Promise.all([finisher.stop(), pruner.stop()]);
      enqueue(builder.finishBefore(now()));
      await flush();
      if (recordings.get(services) === handle) recordings.delete(services);
    },
  };
  recordings.set(services, handle);
  return handle;
}
