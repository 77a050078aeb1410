/**
 * The market recorder: takes a market-data snapshot every MARKET_RECORD_INTERVAL_MS and
 * hands it, with every event's valuation at the default floors computed once, to its listeners —
 * the candle builder (valuation history) and the live streams. Fan-out is computed once per
 * snapshot here, never per subscriber.
 *
 * Each recording says which events' valuations changed since the previous one (comparing the
 * /valuation object without its timestamp), so a stream sends one message per change, not per tick.
 * Tests drive it by hand (`record()`) with MARKET_RECORD_INTERVAL_MS=0.
 */
import { startJob, type Job, type JobRecorder } from '../lib/jobs.ts';
import type { Logger } from '../lib/logger.ts';
import { DEFAULT_FLOORS } from '../valuation/index.ts';
import type { MarketData, MarketSnapshot } from './market-data.ts';
import { eventValuation } from './valuation-view.ts';
import { errorMessage } from '../lib/error-message.ts';

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
  private job?: Job;
  private running?: Promise<Recording | undefined>;

  constructor(
    private marketData: MarketData,
    private logger: Logger,
    private jobs?: JobRecorder,
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
        this.logger.warn('event not valued in this recording', { eventId: event.id, error: errorMessage(error) });
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
        this.logger.error('market recording listener failed', { error: errorMessage(error) });
      }
    }
    return recording;
  }

  /**
   * Records at once, then every `intervalMs` until stop() (0: never), under the job runner's rules
   * (server/lib/jobs.ts): a failed recording is logged and retried with backoff.
   */
  start(intervalMs: number): this {
    this.job = startJob({ name: 'market_record', intervalMs, firstRunMs: 0, logger: this.logger, metrics: this.jobs, run: () => this.record() });
    return this;
  }

  /** Stops recording; resolves once the recording in flight (timed or asked for) has ended. */
  async stop(): Promise<void> {
    await this.job?.stop();
    await this.running?.catch(() => undefined);
  }
}
