/**
 * The market recorder (issue #19): takes a market-data snapshot every MARKET_RECORD_INTERVAL_MS and
 * hands it, with every event's valuation at the default floors computed once, to its listeners —
 * the candle builder (valuation history) and the live streams. Fan-out is computed once per
 * snapshot here, never per subscriber.
 *
 * Each recording says which events' valuations changed since the previous one (comparing the
 * /valuation object without its timestamp), so a stream sends one message per change, not per tick.
 * Tests drive it by hand (`record()`) with MARKET_RECORD_INTERVAL_MS=0.
 */
import type { Logger } from '../lib/logger.ts';
import type { JobMetrics } from '../metrics/jobs.ts';
import { DEFAULT_FLOORS } from '../valuation/index.ts';
import type { MarketData, MarketSnapshot } from './market-data.ts';
import { eventValuation } from './valuation-view.ts';

export type EventValuation = ReturnType<typeof eventValuation>;

export interface Recording {
  /** Increases by one per recording of this process (streams use it to order their messages). */
  sequence: number;
  snapshot: MarketSnapshot;
  /** When the snapshot was taken (its `fetchedAt`). */
  takenAt: Date;
  /** Every event's /valuation object at the default floors, by our event id. */
  valuations: Map<string, EventValuation>;
  /** The events whose valuation differs from the previous recording's (all of them on the first). */
  changed: Set<string>;
}

export type RecordingListener = (recording: Recording) => void | Promise<void>;

/** The valuation without its timestamp, as text: two snapshots with the same prices compare equal. */
const fingerprint = (v: EventValuation) => JSON.stringify({ ...v, timestamp: undefined });

export class MarketRecorder {
  private listeners = new Set<RecordingListener>();
  private last?: Recording;
  private fingerprints = new Map<string, string>();
  private timer?: ReturnType<typeof setTimeout>;
  private running?: Promise<Recording | undefined>;
  private stopped = false;

  constructor(
    private marketData: MarketData,
    private logger: Logger,
    private jobs?: JobMetrics,
  ) {}

  /** Called with every recording from now on; returns the unsubscribe. */
  subscribe(listener: RecordingListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The latest recording, if any. */
  latest(): Recording | undefined {
    return this.last;
  }

  /**
   * Takes a snapshot now (a fresh one, not the cached one), computes the valuations once and tells the
   * listeners; one recording at a time (a call while one runs waits for it and answers it).
   */
  record(): Promise<Recording | undefined> {
    this.running ??= this.recordOnce().finally(() => (this.running = undefined));
    return this.running;
  }

  private async recordOnce(): Promise<Recording | undefined> {
    const snapshot = await this.marketData.refreshed();
    if (this.last && snapshot === this.last.snapshot) return this.last;
    const valuations = new Map<string, EventValuation>();
    const changed = new Set<string>();
    for (const event of snapshot.events) {
      let valuation: EventValuation;
      try {
        valuation = eventValuation(event, snapshot, DEFAULT_FLOORS);
      } catch (error) {
        this.logger.warn('event not valued in this recording', { eventId: event.id, error: String((error as Error).message) });
        continue;
      }
      valuations.set(event.id, valuation);
      const print = fingerprint(valuation);
      if (this.fingerprints.get(event.id) !== print) changed.add(event.id);
      this.fingerprints.set(event.id, print);
    }
    const recording: Recording = { sequence: (this.last?.sequence ?? 0) + 1, snapshot, takenAt: snapshot.fetchedAt, valuations, changed };
    this.last = recording;
    for (const listener of this.listeners) {
      try {
        await listener(recording);
      } catch (error) {
        this.logger.error('market recording listener failed', { error: String((error as Error).message) });
      }
    }
    return recording;
  }

  /** Records every `intervalMs` until stop() (0: never). A failed recording is logged and retried next period. */
  start(intervalMs: number): this {
    if (intervalMs <= 0) return this;
    const job = this.jobs?.register('market_record', intervalMs);
    const tick = async () => {
      if (this.stopped) return;
      await this.record().then(
        () => job?.ran(true),
        (error) => {
          job?.ran(false);
          this.logger.warn('market recording failed', { error: String(error?.message ?? error) });
        },
      );
      if (!this.stopped) this.timer = setTimeout(tick, intervalMs);
    };
    this.timer = setTimeout(tick, 0);
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }
}
