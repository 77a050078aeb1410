/**
 * Candle recording (issue #19): subscribes to the market recorder and turns every recording into
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
 */
import type { Recording } from '../market/recorder.ts';
import type { Services } from '../services.ts';
import { pruneMinuteCandles, writeCandles } from './candle-store.ts';
import { CandleBuilder, pointOfValuation, type Candle, type CandleInterval } from './candles.ts';

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
  /** Unsubscribes, writes what has finished by now, stops pruning. Unfinished candles are dropped. */
  stop(): Promise<void>;
}

const recordings = new WeakMap<Services, CandleRecording>();

/** The candle recording running on these services, if any (the history routes read its current candles). */
export const candleRecordingOf = (services: Services) => recordings.get(services);

/** The history routes' clock: the recording's, else the system clock. */
export const historyNow = (services: Services) => recordings.get(services)?.now() ?? Date.now();

export function startCandleRecording(services: Services, options: { now?: () => number; pruneEveryMs?: number } = {}): CandleRecording {
  const now = options.now ?? Date.now;
  const { logger } = services;
  const db = services.database.db;
  const builder = new CandleBuilder('snapshots');
  let queued: Candle[] = [];
  let inFlight: Candle[] = [];
  let chain: Promise<void> = Promise.resolve();
  let lastWarning = 0;
  let dropped = 0;

  const enqueue = (candles: Candle[]) => {
    if (!candles.length) return;
    queued.push(...candles);
    if (queued.length > MAX_QUEUED) {
      dropped += queued.length - MAX_QUEUED;
      queued = queued.slice(queued.length - MAX_QUEUED);
    }
  };

  const writeQueued = async () => {
    if (!queued.length) return;
    inFlight = queued;
    queued = [];
    try {
      await writeCandles(db, inFlight);
      inFlight = [];
    } catch (error) {
      // Kept, ahead of anything queued meanwhile, for the next flush.
      queued = [...inFlight, ...queued];
      inFlight = [];
      if (Date.now() - lastWarning >= WARN_EVERY_MS) {
        lastWarning = Date.now();
        logger.warn('writing candles failed; kept for the next recording', { queued: queued.length, dropped, error: String((error as Error)?.message ?? error) });
      }
    }
  };

  const flush = () => (chain = chain.then(writeQueued));

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
  let pruning: Promise<unknown> | undefined;
  const prunePass = () => {
    if (pruning) return;
    pruning = prune()
      .then((deleted) => deleted && logger.info('pruned 1-minute candles', { deleted }))
      .catch((error) => logger.warn('pruning candles failed; the next pass retries', { error: String((error as Error)?.message ?? error) }))
      .finally(() => (pruning = undefined));
  };

  const unsubscribe = services.recorder.subscribe(onRecording);
  prunePass();
  const timer = setInterval(prunePass, options.pruneEveryMs ?? PRUNE_EVERY_MS);
  timer.unref?.();
  // Candles also finish by the clock, so a venue outage (no recordings) does not keep an ended candle
  // in memory, unwritten, until the venue is back; the grace lets a snapshot in flight land first.
  const finisher = setInterval(() => {
    enqueue(builder.finishBefore(now() - FINISH_GRACE_MS));
    void flush();
  }, FINISH_EVERY_MS);
  finisher.unref?.();

  const same = (eventId: string, interval: CandleInterval) => (c: Candle) => c.eventId === eventId && c.interval === interval;
  const handle: CandleRecording = {
    now,
    current: (eventId, interval) => builder.currentOf(eventId, interval),
    unwritten: (eventId, interval) => [...inFlight, ...queued].filter(same(eventId, interval)),
    closeCandles: async (at = now()) => {
      enqueue(builder.finishBefore(at));
      await flush();
    },
    flush,
    prune,
    stop: async () => {
      unsubscribe();
      clearInterval(timer);
      clearInterval(finisher);
      enqueue(builder.finishBefore(now()));
      await flush();
      await pruning;
      if (recordings.get(services) === handle) recordings.delete(services);
    },
  };
  recordings.set(services, handle);
  return handle;
}
