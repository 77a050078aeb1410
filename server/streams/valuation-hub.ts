/**
 * The public valuation stream's fan-out: one listener on the market recorder per process. For each
 * recording, every changed event's message (its /valuation object, with an id) is built once and
 * the same message (the same encoded bytes, for SSE) is handed to each subscriber of that event; each
 * touched subscriber is flushed once per recording. Work per recording is one JSON serialization per
 * changed event plus one write per (subscriber, changed event), never a computation per subscriber.
 *
 * Resume (ids.ts): the hub keeps each event's latest message and the position it changed at. A
 * client that comes back with a Last-Event-ID of this hub gets the current message of every event
 * that changed after that position, in position order, each once: its view ends at the current state
 * with the changes it missed coalesced (an event that changed three times while it was away is sent
 * once, at its latest value). An id from another hub (another instance, or before a restart) is
 * compared by time with RESUME_MARGIN_MS of slack for clock skew: some events may come again with a
 * value the client has, none is missed. Replays of every intermediate value are the valuation
 * history's job (GET /api/trading/valuation/history), not the stream's.
 */
import { resolveEvent } from '../events/resolve.ts';
import type { EventValuation, MarketRecorder, Recording } from '../market/recorder.ts';
import { parseValuationId, valuationId, type ValuationPosition } from './ids.ts';
import { shuttingDown } from './refusals.ts';
import { StreamMessage, type Sink } from './sinks.ts';

/** Clock skew tolerated between instances when resuming from another hub's id. */
export const RESUME_MARGIN_MS = 5_000;

export class ValuationMessage extends StreamMessage<EventValuation> {
  constructor(
    readonly position: ValuationPosition,
    data: EventValuation,
  ) {
    super(valuationId(position), data);
  }
}

interface Channel {
  latest?: ValuationMessage;
  subscribers: Set<Sink>;
}

const after = (a: ValuationPosition, b: ValuationPosition) => a.ms > b.ms || (a.ms === b.ms && a.n > b.n);

export class ValuationHub {
  /** Names this hub in its ids: a resume with this tag is exact. */
  readonly tag = Math.floor(Math.random() * 36 ** 6).toString(36).padStart(6, '0');
  private channels = new Map<string, Channel>();
  private lastMs = 0;
  private unsubscribe?: () => void;
  private subscribers = 0;
  /** Stopped for good (shutdown): nothing subscribes to the recorder again. */
  private closed = false;

  constructor(
    private readonly recorder: MarketRecorder,
    private readonly resumeMarginMs = RESUME_MARGIN_MS,
  ) {}

  /** The latest recording (taking one first if the recorder has none yet), after the hub has seen it. 503 once stopped. */
  async ready(): Promise<Recording> {
    if (this.closed) throw shuttingDown();
    this.start();
    const latest = this.recorder.latest() ?? (await this.recorder.record());
    if (!latest) throw new Error('the market recorder has no recording');
    if (this.lastMs === 0) this.onRecording(latest, true);
    return latest;
  }

  /** Our event ids for the requested slugs (ids, venue slugs or aliases), deduplicated; 404 for an unknown one. */
  resolve(recording: Recording, slugs: string[]): string[] {
    return [...new Set(slugs.map((slug) => resolveEvent(recording.snapshot.events, slug, 'eventSlug').id))];
  }

  /** What a client with `lastEventId` (none: everything) lacks now, in id order. */
  catchUp(eventIds: string[], lastEventId: string | null | undefined): ValuationMessage[] {
    const from = parseValuationId(lastEventId);
    const wanted = (m: ValuationMessage) => {
      if (!from) return true;
      if (from.tag === this.tag) return after(m.position, from);
      return m.position.ms > from.ms - this.resumeMarginMs;
    };
    const messages: ValuationMessage[] = [];
    for (const id of eventIds) {
      const latest = this.channels.get(id)?.latest;
      if (latest && wanted(latest)) messages.push(latest);
    }
    return messages.sort((a, b) => (after(a.position, b.position) ? 1 : -1));
  }

  /**
   * Sends the catch-up to `sink` and subscribes it to the events, in one synchronous step: no
   * recording can fall between the two. `lastEventId` is checked before anything is sent (400).
   */
  attach(eventIds: string[], sink: Sink, lastEventId: string | null | undefined): void {
    const catchUp = this.catchUp(eventIds, lastEventId);
    for (const message of catchUp) sink.send(message);
    sink.flush();
    for (const id of eventIds) this.channel(id).subscribers.add(sink);
    this.subscribers++;
    sink.onClose(() => {
      for (const id of eventIds) this.channels.get(id)?.subscribers.delete(sink);
      this.subscribers--;
    });
  }

  get subscriberCount(): number {
    return this.subscribers;
  }

  /** Stops for good (shutdown). */
  stop() {
    this.closed = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  private start() {
    this.unsubscribe ??= this.recorder.subscribe((recording) => this.onRecording(recording, false));
  }

  private channel(eventId: string): Channel {
    let channel = this.channels.get(eventId);
    if (!channel) this.channels.set(eventId, (channel = { subscribers: new Set() }));
    return channel;
  }

  /**
   * One recording: a message per changed event, built once, to each of its subscribers; then one
   * flush per touched subscriber. The first recording the hub sees counts every event as changed.
   */
  private onRecording(recording: Recording, first: boolean) {
    if (!first && this.lastMs === 0) first = true;
    const ms = Math.max(recording.takenAt.getTime(), this.lastMs + 1);
    this.lastMs = ms;
    const touched = new Set<Sink>();
    let n = 0;
    for (const [eventId, valuation] of recording.valuations) {
      if (!first && !recording.changed.has(eventId)) continue;
      const message = new ValuationMessage({ ms, n: n++, tag: this.tag }, valuation);
      const channel = this.channel(eventId);
      channel.latest = message;
      for (const sink of channel.subscribers) {
        sink.send(message);
        touched.add(sink);
      }
    }
    for (const sink of touched) sink.flush();
  }
}
