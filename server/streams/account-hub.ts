/**
 * The private account stream: the outbox `account_events` (written in the same transaction as each
 * order, position, settlement or balance change; notifications/emit.ts) tailed by ONE query per
 * instance per poll period, whatever the number of subscribers, and fanned out in memory to the
 * streams of each event's account — every stream of the account for account-wide events (userId
 * null: balance.*, deposit.credited), only the streams of that trading user (x-user-id) otherwise.
 *
 * The outbox ordering trap: `seq` is assigned when a row is inserted, but transactions commit in
 * any order, so reading `seq > last` can pass over a row that commits later with a lower seq. The
 * tailer therefore remembers every seq it skipped below its high-water mark as *pending* and keeps
 * asking for those too (`seq > hwm or seq = any(pending)`), delivering a late row when it appears.
 * A seq still missing after GAP_GRACE_MS (and a few polls) is given up: its transaction rolled back,
 * or the insert hit `on conflict do nothing` — identities are consumed either way.
 *
 * Ids (ids.ts) carry that state: "every row ≤ hwm except the pending ones". A resume reads the
 * client's rows above its hwm or among its pending seqs, up to what this instance's tailer has
 * processed; the tailer delivers the rest live. Nothing is skipped and, where the pending list fits
 * in the id (MAX_LISTED), nothing is sent twice.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { resultRows } from '../../db/prepared.ts';
import type { AccountEventType } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import type { Logger } from '../lib/logger.ts';
import { accountId as cursorId, type AccountCursor } from './ids.ts';
import { StreamMessage, type Sink } from './sinks.ts';

/** How often the tailer reads the outbox. */
export const ACCOUNT_POLL_MS = 500;
/** How long a skipped seq is waited for before it is given up. */
export const GAP_GRACE_MS = 30_000;
/** Rows per tail read (the tailer reads again at once when a read was full). */
const TAIL_BATCH = 500;
/** Rows per catch-up page. */
const CATCH_UP_PAGE = 500;
/** A jump in seq wider than this is not tracked seq by seq (a sequence reset, not in-flight transactions). */
const MAX_GAP = 10_000;
/** Live messages held for one subscriber while its catch-up is sent. */
const MAX_HELD = 10_000;
/** The tailer stops polling after this long without subscribers (and starts afresh on the next). */
const IDLE_STOP_MS = 60_000;

export interface AccountEventMessageData {
  /** The outbox position of this event (ids and resumes are built from it). */
  seq: number;
  /** evt_…: the event's public id (webhook deliveries of the same event carry it too). */
  id: string;
  type: AccountEventType;
  /** The trading user it concerns, or null for the account as a whole. */
  userId: string | null;
  data: Record<string, unknown>;
  timestamp: string;
}

export interface ReadyData {
  type: 'ready';
  /** Resume from here: every event up to this point was sent (or came before the stream). */
  lastEventId: string;
}

interface Row {
  seq: number;
  id: string;
  accountId: string;
  userId: string | null;
  type: AccountEventType;
  data: Record<string, unknown>;
  createdAt: Date;
}

interface RawRow {
  seq: string | number | bigint;
  id: string;
  account_id: string;
  user_id: string | null;
  type: AccountEventType;
  data: Record<string, unknown> | string;
  created_at: Date | string;
}

const toRow = (r: RawRow): Row => ({
  seq: Number(r.seq),
  id: r.id,
  accountId: r.account_id,
  userId: r.user_id,
  type: r.type,
  data: typeof r.data === 'string' ? JSON.parse(r.data) : r.data,
  createdAt: r.created_at instanceof Date ? r.created_at : new Date(r.created_at),
});

const dataOf = (row: Row): AccountEventMessageData => ({
  seq: row.seq,
  id: row.id,
  type: row.type,
  userId: row.userId,
  data: row.data,
  timestamp: row.createdAt.toISOString(),
});

export interface AccountTiming {
  pollMs: number;
  gapGraceMs: number;
}

/** One open account stream. */
export class AccountSubscriber {
  /** Live messages held back while the catch-up is being sent. */
  holding?: StreamMessage[] = [];
  /** The client's resume point, if it resumed: rows it has (≤ hwm, not pending) are never sent again. */
  private resumedHwm = 0;
  private resumedPending = new Set<number>();

  constructor(
    readonly accountId: string,
    readonly userId: string,
    readonly sink: Sink,
    resume: AccountCursor | undefined,
  ) {
    if (resume) {
      this.resumedHwm = resume.hwm;
      this.resumedPending = new Set(resume.pending);
    }
  }

  wants(row: Row): boolean {
    if (row.accountId !== this.accountId) return false;
    if (row.userId !== null && row.userId !== this.userId) return false;
    return !(row.seq <= this.resumedHwm && !this.resumedPending.has(row.seq));
  }

  /** The cursor after `state`: the tailer's, unless the client resumed from further ahead than this tailer has read. */
  cursor(state: AccountCursor): AccountCursor {
    if (this.resumedHwm <= state.hwm) return state;
    const pending = [...state.pending, ...[...this.resumedPending].filter((p) => p > state.hwm)].sort((a, b) => a - b);
    return { hwm: this.resumedHwm, pending };
  }

  deliver(message: StreamMessage) {
    if (!this.holding) this.sink.send(message);
    else if (this.holding.length < MAX_HELD) this.holding.push(message);
    else this.sink.close(new ApiError('SERVICE_UNAVAILABLE', 'Too many events arrived while this stream caught up; reconnect with Last-Event-ID'));
  }
}

export class AccountHub {
  private hwm = 0;
  /** seq → when it was first found missing, and in how many successful reads since. */
  private pending = new Map<number, { since: number; polls: number }>();
  private version = 0;
  private cached?: { version: number; cursor: AccountCursor; id: string };
  private subscribers = new Map<string, Set<AccountSubscriber>>();
  private count = 0;
  private started?: Promise<void>;
  private timer?: ReturnType<typeof setTimeout>;
  private idleSince = 0;
  private stopped = false;
  private lastWarning = 0;

  constructor(
    private readonly db: Db,
    private readonly timing: AccountTiming,
    private readonly logger: Logger,
  ) {}

  /** The tailer's state: every row ≤ hwm has been delivered, except the pending ones. */
  state(): { cursor: AccountCursor; id: string } {
    if (this.cached?.version !== this.version) {
      const cursor = { hwm: this.hwm, pending: [...this.pending.keys()].sort((a, b) => a - b) };
      this.cached = { version: this.version, cursor, id: cursorId(cursor) };
    }
    return this.cached;
  }

  /** Starts the tailer (once): the high-water mark is the newest row, and recent holes are pending. */
  ensureStarted(): Promise<void> {
    this.stopped = false;
    this.started ??= this.initialise().then(
      () => this.schedule(0),
      (error) => {
        this.started = undefined;
        throw error;
      },
    );
    return this.started;
  }

  /**
   * Subscribes a stream: the catch-up for `resume` (rows the client lacks, up to what the tailer has
   * processed) is sent first, then a `ready` message carrying the cursor, then the live rows held
   * meanwhile, then live rows as they come. The returned promise settles when the catch-up is sent.
   */
  async attach(subscriber: AccountSubscriber, resume: AccountCursor | undefined): Promise<void> {
    await this.ensureStarted();
    const { cursor: at } = this.state();
    let set = this.subscribers.get(subscriber.accountId);
    if (!set) this.subscribers.set(subscriber.accountId, (set = new Set()));
    set.add(subscriber);
    this.count++;
    subscriber.sink.onClose(() => {
      const current = this.subscribers.get(subscriber.accountId);
      current?.delete(subscriber);
      if (current?.size === 0) this.subscribers.delete(subscriber.accountId);
      this.count--;
      if (this.count === 0) this.idleSince = Date.now();
    });
    try {
      if (resume) await this.sendCatchUp(subscriber, resume, at);
      const ready = subscriber.cursor(at);
      const readyId = cursorId(ready);
      subscriber.sink.send(new StreamMessage<ReadyData>(readyId, { type: 'ready', lastEventId: readyId }, 'ready'));
      for (const message of subscriber.holding ?? []) subscriber.sink.send(message);
      subscriber.holding = undefined;
      subscriber.sink.flush();
    } catch (error) {
      subscriber.holding = undefined;
      throw error;
    }
  }

  /** The catch-up as a page, for the JSON form of the route: at most `limit` rows, and the cursor after them. */
  async page(accountId: string, userId: string, resume: AccountCursor | undefined, limit: number): Promise<{ events: AccountEventMessageData[]; lastEventId: string }> {
    await this.ensureStarted();
    const { cursor: at } = this.state();
    const probe = new AccountSubscriber(accountId, userId, { send() {}, flush() {}, ping() {}, close() {}, onClose() {}, drained: async () => {}, closed: false, backedUp: false }, resume);
    if (!resume) return { events: [], lastEventId: cursorId(at) };
    const rows = await this.catchUpRows(probe, resume, at, resume.pending.length ? Math.min(...resume.pending) - 1 : resume.hwm, limit);
    const events = rows.map(dataOf);
    const last = rows.at(-1);
    const cursor = rows.length === limit && last ? this.catchUpCursor(resume, at, last.seq) : probe.cursor(at);
    return { events, lastEventId: cursorId(cursor) };
  }

  get subscriberCount(): number {
    return this.count;
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.started = undefined;
  }

  // --- the tailer ---------------------------------------------------------------------------------

  private async initialise() {
    // The newest rows, newest first: the high-water mark, and the holes among rows recent enough
    // that their transaction may still be open (older holes are given up already).
    const rows = await this.db
      .execute(sql`select seq, created_at from account_events order by seq desc limit 1000`)
      .then(resultRows<{ seq: string | number; created_at: Date | string }>);
    this.hwm = rows.length ? Number(rows[0]!.seq) : 0;
    this.pending.clear();
    const recent = Date.now() - this.timing.gapGraceMs;
    const seen = new Set<number>();
    let floor = rows.length ? Number(rows.at(-1)!.seq) : 0;
    for (const r of rows) {
      const seq = Number(r.seq);
      seen.add(seq);
      if (new Date(r.created_at).getTime() < recent) {
        floor = seq;
        break;
      }
    }
    for (let seq = floor + 1; seq < this.hwm; seq++) if (!seen.has(seq)) this.pending.set(seq, { since: Date.now(), polls: 0 });
    this.version++;
  }

  private schedule(delayMs: number) {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.poll(), delayMs);
    this.timer.unref?.();
  }

  private async poll() {
    this.timer = undefined;
    if (this.stopped) return;
    if (this.count === 0 && Date.now() - this.idleSince > IDLE_STOP_MS) {
      // Nobody listens: stop reading; the next subscriber starts afresh.
      this.started = undefined;
      return;
    }
    let full = false;
    try {
      const pending = [...this.pending.keys()];
      const rows = await this.db
        .execute(sql`
          select seq, id, account_id, user_id, type, data, created_at from account_events
           where seq > ${this.hwm} or seq = any(${sql.param(pending)}::bigint[])
           order by seq limit ${TAIL_BATCH}`)
        .then(resultRows<RawRow>);
      full = rows.length === TAIL_BATCH;
      this.process(rows.map(toRow));
    } catch (error) {
      if (Date.now() - this.lastWarning > 10_000) {
        this.lastWarning = Date.now();
        this.logger.warn('account stream tail read failed; retrying', { error: String((error as Error)?.message ?? error) });
      }
    }
    this.schedule(full ? 0 : this.timing.pollMs);
  }

  /** One read's rows, in seq order: state first, then each row to its subscribers (one flush each). */
  private process(rows: Row[]) {
    const now = Date.now();
    const touched = new Set<Sink>();
    for (const row of rows) {
      if (this.pending.delete(row.seq)) {
        // A late commit: delivered now.
      } else if (row.seq > this.hwm) {
        if (row.seq - this.hwm <= MAX_GAP) for (let seq = this.hwm + 1; seq < row.seq; seq++) this.pending.set(seq, { since: now, polls: 0 });
        this.hwm = row.seq;
      } else {
        continue;
      }
      this.version++;
      this.dispatch(row, touched);
    }
    // Holes waited for long enough are given up (counted in successful reads, so an outage of ours never expires them).
    const minPolls = Math.max(2, Math.ceil(this.timing.gapGraceMs / this.timing.pollMs));
    for (const [seq, hole] of this.pending) {
      hole.polls++;
      if (now - hole.since >= this.timing.gapGraceMs && hole.polls >= minPolls) {
        this.pending.delete(seq);
        this.version++;
      }
    }
    for (const sink of touched) sink.flush();
  }

  private dispatch(row: Row, touched: Set<Sink>) {
    const subscribers = this.subscribers.get(row.accountId);
    if (!subscribers) return;
    const data = dataOf(row);
    const shared = this.state();
    let sharedMessage: StreamMessage | undefined;
    for (const subscriber of subscribers) {
      if (!subscriber.wants(row)) continue;
      const cursor = subscriber.cursor(shared.cursor);
      const message = cursor === shared.cursor ? (sharedMessage ??= new StreamMessage(shared.id, data)) : new StreamMessage(cursorId(cursor), data);
      subscriber.deliver(message);
      touched.add(subscriber.sink);
    }
  }

  // --- catch-up -----------------------------------------------------------------------------------

  /** Sends the rows the client lacks (≤ the tailer's hwm at attach, not pending there), page by page. */
  private async sendCatchUp(subscriber: AccountSubscriber, resume: AccountCursor, at: AccountCursor) {
    let after = resume.pending.length ? Math.min(resume.pending[0]!, resume.hwm + 1) - 1 : resume.hwm;
    for (;;) {
      if (subscriber.sink.closed) return;
      const rows = await this.catchUpRows(subscriber, resume, at, after, CATCH_UP_PAGE);
      for (const row of rows) {
        // A long catch-up waits for the client instead of filling its queue (which would drop it).
        if (subscriber.sink.backedUp) {
          subscriber.sink.flush();
          await subscriber.sink.drained();
          if (subscriber.sink.closed) return;
        }
        subscriber.sink.send(new StreamMessage(cursorId(this.catchUpCursor(resume, at, row.seq)), dataOf(row)));
      }
      subscriber.sink.flush();
      if (rows.length < CATCH_UP_PAGE) return;
      after = rows.at(-1)!.seq;
    }
  }

  private async catchUpRows(subscriber: AccountSubscriber, resume: AccountCursor, at: AccountCursor, after: number, limit: number): Promise<Row[]> {
    const rows = await this.db
      .execute(sql`
        select seq, id, account_id, user_id, type, data, created_at from account_events
         where account_id = ${subscriber.accountId} and (user_id is null or user_id = ${subscriber.userId})
           and seq > ${after} and seq <= ${at.hwm} and not (seq = any(${sql.param(at.pending)}::bigint[]))
           and (seq > ${resume.hwm} or seq = any(${sql.param(resume.pending)}::bigint[]))
         order by seq limit ${limit}`)
      .then(resultRows<RawRow>);
    return rows.map(toRow);
  }

  /**
   * What a client has after the catch-up row `seq`: everything ≤ max(its hwm, seq) except its pending
   * rows not reached yet, the tailer's pending rows (they come live), and its pending rows beyond
   * the tailer's hwm (they come live too).
   */
  private catchUpCursor(resume: AccountCursor, at: AccountCursor, seq: number): AccountCursor {
    const hwm = Math.max(resume.hwm, seq);
    const tailerPending = new Set(at.pending);
    const pending = new Set<number>();
    for (const p of resume.pending) if (p > seq || p > at.hwm || tailerPending.has(p)) pending.add(p);
    for (const p of at.pending) if (p < hwm) pending.add(p);
    return { hwm, pending: [...pending].filter((p) => p < hwm).sort((a, b) => a - b) };
  }
}
