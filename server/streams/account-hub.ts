/**
 * The private account stream: the outbox `account_events` (written in the same transaction as each
 * order, position, settlement or balance change; notifications/emit.ts) tailed by ONE query per
 * instance per poll period, whatever the number of subscribers, and fanned out in memory to the
 * streams of each event's account — every stream of the account for account-wide events (userId
 * null: balance.*, deposit.credited), only the streams of that trading user (x-user-id) otherwise.
 *
 * The outbox ordering trap: `seq` is assigned when a row is inserted, but transactions commit in
 * any order, so reading `seq > last` can pass over a row that commits later with a lower seq. The
 * tailer therefore remembers every seq it skipped below its high-water mark as a *hole* (ranges: a
 * jump of a million seqs is one entry) and keeps asking for those too (`seq > hwm or seq in holes`),
 * delivering a late row when it appears. When may a hole be given up (its transaction rolled back,
 * or the insert hit `on conflict do nothing`: identities are consumed either way)?
 *
 *  - PostgreSQL: once no transaction that could still insert it is running. The transaction holding
 *    a missing seq took it before the read that found the hole (seqs are handed out in order, and a
 *    higher one had committed), so it started before that read's `clock_timestamp()`. After
 *    GAP_GRACE_MS, a check of pg_stat_activity (checkHoles) finds the oldest open transaction that
 *    could insert a row — one holding a transaction id, or one still in the statement that may be
 *    inserting (the id is assigned just after the identity is drawn) — and a hole found missing
 *    before that one started is *cleared*: the next read, which begins after the check, sees its row
 *    if it committed; if it does not, nothing can ever insert it and it is given up. Sessions the
 *    role cannot see, and prepared transactions, count as transactions that could (nothing is
 *    cleared while they exist). As a last resort a hole still missing after GAP_MAX_WAIT_MS is given
 *    up anyway, with a warning: if its transaction commits later, live streams skip its row
 *    (webhooks still deliver it). docs/streams.md says so.
 *    (Why not compare transaction ids, `xmin` against the snapshot's xmin: a transaction gets its
 *    id only when it first writes, which for an emit that is its first write happens after the
 *    identity was drawn; a snapshot taken in between knows nothing of it.) This relies on the
 *    identity handing seqs out in order (CACHE 1, as the migration creates it) and on rows taking
 *    their seq from it when inserted (never `overriding system value` with a seq drawn earlier).
 *  - PGlite: one connection, and a transaction holds it to the end (PGlite's transaction mutex), so
 *    no transaction is ever open while the tailer reads: a hole it sees can never fill. It is given up
 *    after GAP_GRACE_MS (and a few reads), as on PostgreSQL when nothing runs.
 *
 * Ids (ids.ts) carry that state: "every row ≤ hwm except the pending ones". A resume reads the
 * client's rows above its hwm or among its pending seqs, up to what this instance's tailer has
 * processed; the tailer delivers the rest live. Nothing is skipped and, where the pending seqs fit
 * in the id (MAX_LISTED), nothing is sent twice.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { resultRows } from '../../db/prepared.ts';
import type { AccountEventType } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import type { Logger } from '../lib/logger.ts';
import { accountId as cursorId, inRanges, MAX_LISTED, rangesBelow, unionRanges, type AccountCursor, type SeqRange } from './ids.ts';
import { shuttingDown } from './refusals.ts';
import { StreamMessage, type Sink } from './sinks.ts';
import { errorMessage } from '../lib/error-message.ts';

/** How often the tailer reads the outbox. */
export const ACCOUNT_POLL_MS = 500;
/**
 * How long a skipped seq is waited for before anything is decided about it: on PostgreSQL, before
 * the tailer asks whether a transaction that could still insert it is running; on PGlite, before it
 * is given up.
 */
export const GAP_GRACE_MS = 5_000;
/**
 * PostgreSQL: the longest a skipped seq is waited for while a transaction that could still insert it
 * is running (or while sessions the role cannot see exist); then it is given up with a warning.
 */
export const GAP_MAX_WAIT_MS = 10 * 60_000;
/** Slack on the database clock between the read that found a hole and pg_stat_activity's start times. */
const CLOCK_MARGIN_MS = 1_000;
/** Rows per tail read (the tailer reads again at once when a read was full). */
const TAIL_BATCH = 500;
/** Rows per catch-up page. */
const CATCH_UP_PAGE = 500;
/** Ranges of holes up to this size are asked for seq by seq (`= any(…)`), wider ones as a range. */
const LISTED_SPAN = 64;
/** Rows a starting tailer looks at for holes (newest first). */
const INIT_SCAN_ROWS = 10_000;
/** At most one warning per this period about sessions the tailer cannot see. */
const UNSEEN_WARNING_MS = 10 * 60_000;
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
  gapMaxWaitMs: number;
  /** On PGlite no transaction is open while the tailer reads (see above). */
  engine: 'postgres' | 'pglite';
}

/** Seqs the tailer has not seen committed below its high-water mark. */
interface Hole {
  lo: number;
  hi: number;
  /** When this process found them missing (its clock). */
  since: number;
  /** The database's clock (epoch ms) at the read that found them missing. */
  noticedAt: number;
  /** Successful reads since. */
  polls: number;
  /** A check found no transaction that could still insert them: the next read settles them. */
  cleared: boolean;
}

/** What the tailer did with holes (tests and diagnostics). */
export interface HoleStats {
  /** pg_stat_activity checks run. */
  checks: number;
  /** Times a hole due for a decision was kept because a transaction that could fill it was running (or unseen). */
  kept: number;
  /** Seqs given up because nothing could insert them any more (PostgreSQL), or after the grace (PGlite). */
  givenUp: number;
  /** Seqs given up after GAP_MAX_WAIT_MS while a transaction that could still insert them may be running. */
  givenUpUnsafely: number;
}

/**
 * Sessions that never insert rows (their transactions can be long: vacuuming a big table, logical
 * decoding); a parallel worker's leader is counted instead. Every other kind counts, custom
 * background workers included.
 */
const NEVER_INSERTING = ['autovacuum worker', 'walsender', 'parallel worker'];

/** The database's clock, epoch ms (clock_timestamp(): after the statement's snapshot was taken). */
const DB_NOW_MS = sql`(extract(epoch from clock_timestamp()) * 1000)::float8`;

/** `seq` is in the ranges (SQL): short ones listed in one array, wide ones as ranges. */
function seqIn(ranges: readonly SeqRange[]): SQL {
  const listed: number[] = [];
  const wide: SQL[] = [];
  for (const [lo, hi] of ranges) {
    if (hi - lo < LISTED_SPAN) for (let seq = lo; seq <= hi; seq++) listed.push(seq);
    else wide.push(sql`(seq >= ${lo} and seq <= ${hi})`);
  }
  return sql`(${sql.join([sql`seq = any(${sql.param(listed)}::bigint[])`, ...wide], sql` or `)})`;
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
      // A client's id lists at most MAX_LISTED seqs (ids.ts), so this stays small.
      for (const [lo, hi] of resume.pending) for (let seq = lo; seq <= hi && this.resumedPending.size < MAX_LISTED; seq++) this.resumedPending.add(seq);
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
    const beyond = [...this.resumedPending].filter((p) => p > state.hwm).sort((a, b) => a - b);
    return { hwm: this.resumedHwm, pending: [...state.pending, ...beyond.map((p): SeqRange => [p, p])] };
  }

  deliver(message: StreamMessage) {
    if (!this.holding) this.sink.send(message);
    else if (this.holding.length < MAX_HELD) this.holding.push(message);
    else this.sink.close(new ApiError('SERVICE_UNAVAILABLE', 'Too many events arrived while this stream caught up; reconnect with Last-Event-ID'));
  }
}

export class AccountHub {
  private hwm = 0;
  /** Ascending, disjoint. */
  private holes: Hole[] = [];
  private version = 0;
  private cached?: { version: number; cursor: AccountCursor; id: string };
  private subscribers = new Map<string, Set<AccountSubscriber>>();
  private count = 0;
  private started?: Promise<void>;
  private timer?: ReturnType<typeof setTimeout>;
  private idleSince = 0;
  /** Stopped for good (shutdown): nothing starts it again. */
  private closed = false;
  private lastWarning = 0;
  private lastUnseenWarning = 0;
  private lastCheckWarning = 0;
  readonly holeStats: HoleStats = { checks: 0, kept: 0, givenUp: 0, givenUpUnsafely: 0 };

  constructor(
    private readonly db: Db,
    private readonly timing: AccountTiming,
    private readonly logger: Logger,
  ) {}

  /** The tailer's state: every row ≤ hwm has been delivered, except the pending ones. */
  state(): { cursor: AccountCursor; id: string } {
    if (this.cached?.version !== this.version) {
      const cursor: AccountCursor = { hwm: this.hwm, pending: this.holes.map((h): SeqRange => [h.lo, h.hi]) };
      this.cached = { version: this.version, cursor, id: cursorId(cursor) };
    }
    return this.cached;
  }

  /** Starts the tailer (once): the high-water mark is the newest row, and recent holes are pending. 503 once stopped. */
  ensureStarted(): Promise<void> {
    if (this.closed) return Promise.reject(shuttingDown());
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
    const rows = await this.catchUpRows(probe, resume, at, resume.pending.length ? resume.pending[0]![0] - 1 : resume.hwm, limit);
    const events = rows.map(dataOf);
    const last = rows.at(-1);
    const cursor = rows.length === limit && last ? this.catchUpCursor(resume, at, last.seq) : probe.cursor(at);
    return { events, lastEventId: cursorId(cursor) };
  }

  get subscriberCount(): number {
    return this.count;
  }

  /** Stops for good (shutdown): later opens are refused (503), the tailer never restarts. */
  stop() {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.started = undefined;
  }

  // --- the tailer ---------------------------------------------------------------------------------

  private async initialise() {
    // The high-water mark is the newest row. Holes among the newest rows may still fill: on
    // PostgreSQL those below a row younger than GAP_MAX_WAIT_MS (older ones were given up by whoever
    // tailed then), on PGlite below a row younger than the grace. Gaps come back as ranges (a wide
    // jump is one row here, never a loop over its seqs), in one statement: one snapshot.
    const window = this.timing.engine === 'postgres' ? this.timing.gapMaxWaitMs : this.timing.gapGraceMs;
    const since = new Date(Date.now() - window).toISOString();
    const rows = await this.db
      .execute(sql`
        with recent as materialized (select seq, created_at from account_events order by seq desc limit ${INIT_SCAN_ROWS})
        select true as top, max(seq) as lo, null::bigint as hi, ${DB_NOW_MS} as now_ms from recent
        union all
        select false, lo, hi, ${DB_NOW_MS} from (
          select lag(seq) over (order by seq) + 1 as lo, seq - 1 as hi, created_at from recent) gaps
         where hi >= lo and created_at >= ${since}::timestamptz`)
      .then(resultRows<{ top: boolean; lo: string | number | null; hi: string | number | null; now_ms: string | number }>);
    const now = Date.now();
    const top = rows.find((r) => r.top);
    this.hwm = top?.lo == null ? 0 : Number(top.lo);
    this.holes = rows
      .filter((r) => !r.top)
      .map((r): Hole => ({ lo: Number(r.lo), hi: Number(r.hi), since: now, noticedAt: Number(r.now_ms), polls: 0, cleared: false }))
      .sort((x, y) => x.lo - y.lo);
    this.version++;
  }

  private schedule(delayMs: number) {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.poll(), delayMs);
    this.timer.unref?.();
  }

  private async poll() {
    this.timer = undefined;
    if (this.closed) return;
    if (this.count === 0 && Date.now() - this.idleSince > IDLE_STOP_MS) {
      // Nobody listens: stop reading; the next subscriber starts afresh.
      this.started = undefined;
      return;
    }
    let full = false;
    try {
      // The check first: what it clears is settled by this read, which begins after it. A check that
      // fails clears nothing (its holes wait, at worst GAP_MAX_WAIT_MS) and never holds up the read.
      if (this.timing.engine === 'postgres') {
        await this.checkHoles().catch((error) => {
          if (Date.now() - this.lastCheckWarning > 60_000) {
            this.lastCheckWarning = Date.now();
            this.logger.warn('account stream: the check for transactions that may fill missing outbox seqs failed; they wait longer', { error: errorMessage(error) });
          }
        });
      }
      const rows = await this.db
        .execute(sql`
          select seq, id, account_id, user_id, type, data, created_at, ${DB_NOW_MS} as now_ms from account_events
           where seq > ${this.hwm}${this.holes.length ? sql` or ${seqIn(this.holes.map((h): SeqRange => [h.lo, h.hi]))}` : sql``}
           order by seq limit ${TAIL_BATCH}`)
        .then(resultRows<RawRow & { now_ms: string | number }>);
      full = rows.length === TAIL_BATCH;
      this.process(rows.map(toRow), rows.length ? Number(rows[0]!.now_ms) : 0, full);
    } catch (error) {
      if (Date.now() - this.lastWarning > 10_000) {
        this.lastWarning = Date.now();
        this.logger.warn('account stream tail read failed; retrying', { error: errorMessage(error) });
      }
    }
    this.schedule(full ? 0 : this.timing.pollMs);
  }

  /**
   * PostgreSQL: clears the holes found missing before the oldest open transaction that could still
   * insert a row started (with CLOCK_MARGIN_MS of slack). Asked only about holes older than the grace.
   */
  private async checkHoles() {
    const now = Date.now();
    const due = this.holes.filter((h) => !h.cleared && now - h.since >= this.timing.gapGraceMs);
    if (due.length === 0) return;
    // A session could still insert a row if it is in a transaction that holds a transaction id, or
    // (no id yet) is running a statement that may be drawing one right now; such a session holds
    // seqs drawn since, respectively, its transaction's or its statement's start. A transaction
    // that is idle without an id, or failed, can insert nothing. Sessions whose details the role may
    // not see (backend_type is hidden with them) and prepared transactions are unknowns.
    const rows = await this.db
      .execute(sql`
        select
          (select (extract(epoch from min(case when a.backend_xid is not null then a.xact_start else a.query_start end)) * 1000)::float8
             from pg_stat_activity a
            where a.datname = current_database() and a.pid <> pg_backend_pid()
              and a.backend_type not in (${sql.join(NEVER_INSERTING.map((t) => sql`${t}`), sql`, `)})
              and a.xact_start is not null
              and a.state is distinct from 'idle in transaction (aborted)'
              and (a.backend_xid is not null or a.state is distinct from 'idle in transaction')) as oldest_ms,
          (select count(*) from pg_stat_activity a
            where a.datname = current_database() and a.pid <> pg_backend_pid()
              and (a.backend_type is null or (a.state = 'disabled' and a.backend_type not in (${sql.join(NEVER_INSERTING.map((t) => sql`${t}`), sql`, `)})))) as unseen,
          (select count(*) from pg_prepared_xacts p where p.database = current_database()) as prepared`)
      .then(resultRows<{ oldest_ms: string | number | null; unseen: string | number; prepared: string | number }>);
    this.holeStats.checks++;
    const row = rows[0];
    const unseen = Number(row?.unseen ?? 0);
    const prepared = Number(row?.prepared ?? 0);
    if (unseen > 0 || prepared > 0) {
      this.holeStats.kept += due.length;
      if (now - this.lastUnseenWarning > UNSEEN_WARNING_MS) {
        this.lastUnseenWarning = now;
        this.logger.warn(
          'account stream: missing outbox seqs cannot be settled while sessions of this database are hidden from this role (grant it pg_read_all_stats) or transactions are prepared; they are waited for up to GAP_MAX_WAIT_MS',
          { hiddenSessions: unseen, preparedTransactions: prepared },
        );
      }
      return;
    }
    const oldest = row?.oldest_ms == null ? Infinity : Number(row.oldest_ms);
    for (const hole of due) {
      if (hole.noticedAt + CLOCK_MARGIN_MS < oldest) hole.cleared = true;
      else this.holeStats.kept++;
    }
  }

  /** One read's rows, in seq order: state first, then each row to its subscribers (one flush each). */
  private process(rows: Row[], readAt: number, full: boolean) {
    const now = Date.now();
    const touched = new Set<Sink>();
    for (const row of rows) {
      if (this.fill(row.seq)) {
        // A late commit: delivered now.
      } else if (row.seq > this.hwm) {
        if (row.seq > this.hwm + 1) this.holes.push({ lo: this.hwm + 1, hi: row.seq - 1, since: now, noticedAt: readAt, polls: 0, cleared: false });
        this.hwm = row.seq;
      } else {
        continue;
      }
      this.version++;
      this.dispatch(row, touched);
    }
    // A full read covered the holes up to its last row only (the next read comes at once).
    this.settleHoles(now, full ? rows.at(-1)!.seq : Infinity);
    for (const sink of touched) sink.flush();
  }

  /** Takes `seq` out of the holes; whether it was one. */
  private fill(seq: number): boolean {
    let low = 0;
    let high = this.holes.length - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      const hole = this.holes[mid]!;
      if (seq < hole.lo) high = mid - 1;
      else if (seq > hole.hi) low = mid + 1;
      else {
        if (hole.lo === hole.hi) this.holes.splice(mid, 1);
        else if (seq === hole.lo) hole.lo++;
        else if (seq === hole.hi) hole.hi--;
        else {
          // Inside: split in two, both keeping what is known about the hole.
          this.holes.splice(mid + 1, 0, { ...hole, lo: seq + 1 });
          hole.hi = seq - 1;
        }
        return true;
      }
    }
    return false;
  }

  /**
   * After a successful read: gives up the holes it settled. Waits are counted in successful reads
   * too, so an outage of ours never expires a hole on time alone.
   */
  private settleHoles(now: number, coveredTo: number) {
    const { engine, gapGraceMs, gapMaxWaitMs, pollMs } = this.timing;
    const graceReads = Math.max(2, Math.ceil(gapGraceMs / pollMs));
    const maxWaitReads = Math.max(2, Math.ceil(gapMaxWaitMs / pollMs));
    const kept: Hole[] = [];
    for (const hole of this.holes) {
      if (hole.hi >= coveredTo) {
        kept.push(hole);
        continue;
      }
      hole.polls++;
      const waited = now - hole.since;
      const count = hole.hi - hole.lo + 1;
      if (engine === 'pglite' ? waited >= gapGraceMs && hole.polls >= graceReads : hole.cleared) {
        this.holeStats.givenUp += count;
        this.logger.debug('account stream: missing outbox seqs given up (nothing can insert them any more)', { fromSeq: hole.lo, toSeq: hole.hi });
      } else if (engine === 'postgres' && waited >= gapMaxWaitMs && hole.polls >= maxWaitReads) {
        this.holeStats.givenUpUnsafely += count;
        this.logger.warn(
          'account stream gave up missing outbox seqs while a transaction that may still insert them is open: if it commits, live streams skip these events (webhooks still deliver them)',
          { fromSeq: hole.lo, toSeq: hole.hi, seqs: count, waitedMs: waited },
        );
      } else {
        kept.push(hole);
        continue;
      }
      this.version++;
    }
    this.holes = kept;
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
    let after = resume.pending.length ? Math.min(resume.pending[0]![0], resume.hwm + 1) - 1 : resume.hwm;
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
           and seq > ${after} and seq <= ${at.hwm}${at.pending.length ? sql` and not ${seqIn(at.pending)}` : sql``}
           and (seq > ${resume.hwm}${resume.pending.length ? sql` or ${seqIn(resume.pending)}` : sql``})
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
    const theirs: SeqRange[] = [];
    for (const [lo, hi] of resume.pending) for (let p = lo; p <= hi; p++) if (p > seq || p > at.hwm || inRanges(at.pending, p)) theirs.push([p, p]);
    return { hwm, pending: rangesBelow(unionRanges(at.pending, theirs), hwm) };
  }
}
