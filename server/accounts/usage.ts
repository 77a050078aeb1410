/**
 * Reading an account's usage: a page of its rows, newest first, and totals and summaries over any
 * range. None of it grows with the account's history: a page is one walk of the account's
 * (created_at, id) index from the range's end or the cursor (unfiltered pages read at the same
 * moment share one statement: lib/batched-reads.ts), the unfiltered total is the account's
 * running count (accounts.usage_count), and a filtered total or a summary adds up the account's day
 * cells (usage_days) for the whole days of the range, its hour cells (usage_hours) for the other whole
 * hours, and counts rows only in its partial first and last hours (docs/decisions.md §4, "Reads that
 * do not grow with history").
 */
import { and, eq, gte, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { resultRows } from '../../db/prepared.ts';
import { usageRecords } from '../../db/schema.ts';
import { batchedRead } from '../lib/batched-reads.ts';
import { cursorProblem, decodeCursor, keysetPage, type KeyPart } from '../lib/keyset-cursor.ts';

export interface UsageFilter {
  accountId: string;
  from?: Date;
  to?: Date;
  /** Only the requests of this key (of the account). */
  keyId?: string;
  /** Only the requests to this path (as recorded: `/api/…` or `/trpc/…`). */
  path?: string;
}

/** The one order of the list, named in its cursors; a cursor holds the last record's (created_at to the microsecond, id). */
const SORT = 'newest';
const CURSOR_PARTS: readonly KeyPart[] = ['instant', 'text'];

/** For the route's input rules (routers/params.ts `check`): the cursor's problem, or null. */
export const usageCursorProblem = (cursor: string | undefined) => cursorProblem(cursor, SORT, CURSOR_PARTS);

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

const matching = (f: UsageFilter) =>
  and(
    eq(usageRecords.accountId, f.accountId),
    f.from ? gte(usageRecords.createdAt, f.from) : undefined,
    f.to ? lte(usageRecords.createdAt, f.to) : undefined,
    f.keyId ? eq(usageRecords.apiKeyId, f.keyId) : undefined,
    f.path ? eq(usageRecords.path, f.path) : undefined,
  );

type Span = { from: Date | null; to: Date | null };
type Loose = [Date, Date, 'to-inclusive' | 'to-exclusive'];

const ceilTo = (d: Date, unit: number) => new Date(Math.ceil(d.getTime() / unit) * unit);
const floorTo = (d: Date, unit: number) => new Date(Math.floor(d.getTime() / unit) * unit);

/**
 * The range cut into what each kind of cell holds whole: its whole UTC days [days.from, days.to),
 * read from the day cells (when `byDay`); the whole hours of its partial first and last days, from
 * the hour cells; and its partial first and last hours, whose rows are counted one by one (`loose`).
 * An open end is whole up to the cells' own end. A range within one hour is all loose.
 */
function pieces(f: UsageFilter, byDay: boolean): { days: Span | null; hours: Span[]; loose: Loose[] } {
  const wholeFrom = f.from ? ceilTo(f.from, HOUR_MS) : null;
  // `to` is inclusive to the millisecond: the hour holding it is whole only if `to` is its last millisecond.
  const wholeTo = f.to ? floorTo(new Date(f.to.getTime() + 1), HOUR_MS) : null;
  if (f.from && f.to && wholeFrom! >= wholeTo!) return { days: null, hours: [], loose: [[f.from, f.to, 'to-inclusive']] };
  const loose: Loose[] = [];
  if (f.from && wholeFrom && f.from < wholeFrom) loose.push([f.from, wholeFrom, 'to-exclusive']);
  if (f.to && wholeTo && wholeTo <= f.to) loose.push([wholeTo, f.to, 'to-inclusive']);
  const hours: Span = { from: wholeFrom, to: wholeTo };
  if (!byDay) return { days: null, hours: [hours], loose };
  const dayFrom = wholeFrom && ceilTo(wholeFrom, DAY_MS);
  const dayTo = wholeTo && floorTo(wholeTo, DAY_MS);
  if (dayFrom && dayTo && dayFrom >= dayTo) return { days: null, hours: [hours], loose };
  const edges: Span[] = [];
  if (wholeFrom && dayFrom && wholeFrom < dayFrom) edges.push({ from: wholeFrom, to: dayFrom });
  if (wholeTo && dayTo && dayTo < wholeTo) edges.push({ from: dayTo, to: wholeTo });
  return { days: { from: dayFrom, to: dayTo }, hours: edges, loose };
}

/**
 * An instant as a timestamptz parameter. The hour after the latest instant the API accepts
 * (9999-12-31T23:59:59.999Z) is in year 10000, which toISOString writes as "+010000-…" and PostgreSQL
 * does not read: it is past every row, so it is `infinity`.
 */
const instant = (d: Date) => sql`${d.getUTCFullYear() > 9999 ? 'infinity' : d.toISOString()}::timestamptz`;

/** Stored cells of one span: `table` is usage_hours (its `hour`) or usage_days (its `day`, named hour here too). */
function storedCells(f: UsageFilter, table: 'usage_hours' | 'usage_days', span: Span): SQL {
  const at = sql.raw(table === 'usage_days' ? 'day' : 'hour');
  const where: SQL[] = [sql`account_id = ${f.accountId}`, sql`requests <> 0`];
  if (span.from) where.push(sql`${at} >= ${instant(span.from)}`);
  if (span.to) where.push(sql`${at} < ${instant(span.to)}`);
  if (f.keyId) where.push(sql`key_id = ${f.keyId}`);
  if (f.path) where.push(sql`path = ${f.path}`);
  return sql`select ${at} as hour, key_id, path, requests, cost_micros from ${sql.raw(table)} where ${sql.join(where, sql` and `)}`;
}

/**
 * The filtered usage as cells (hour, key, path, requests, cost): the day cells of the whole days (when
 * `byDay`: their `hour` is the day's start), the hour cells of the other whole hours, and the rows of
 * the partial hours summed the same way. Every total and summary is a sum over these.
 */
function cellsSql(f: UsageFilter, byDay: boolean): SQL {
  const { days, hours, loose } = pieces(f, byDay);
  const parts: SQL[] = [];
  if (days) parts.push(storedCells(f, 'usage_days', days));
  for (const span of hours) parts.push(storedCells(f, 'usage_hours', span));
  if (loose.length) {
    const within = or(...loose.map(([from, to, end]) => sql`(created_at >= ${instant(from)} and created_at ${sql.raw(end === 'to-inclusive' ? '<=' : '<')} ${instant(to)})`));
    parts.push(sql`
      select date_trunc('hour', created_at, 'UTC') as hour, coalesce(api_key_id, '') as key_id, path, count(*) as requests, sum(cost_micros) as cost_micros
        from usage_records
       where ${and(eq(usageRecords.accountId, f.accountId), f.keyId ? eq(usageRecords.apiKeyId, f.keyId) : undefined, f.path ? eq(usageRecords.path, f.path) : undefined, within)}
       group by 1, 2, 3`);
  }
  return sql`(${sql.join(parts, sql` union all `)})`;
}

const unfiltered = (f: UsageFilter) => !f.from && !f.to && !f.keyId && !f.path;

/**
 * Usage records of one account, newest first, `from`/`to` inclusive; total counts every match. Paged by
 * `offset`, or by `cursor` (the nextCursor of the page before: one index walk however deep).
 */
export async function listUsage(db: Db, input: UsageFilter & { limit: number; offset?: number; cursor?: string }) {
  const key = input.cursor === undefined ? undefined : decodeCursor(input.cursor, SORT, CURSOR_PARTS);
  if (unfiltered(input)) {
    // The hottest read of the usage routes: the page and the running total, in one statement shared
    // with the other unfiltered pages this process is reading at that moment.
    return pageOf(
      await usagePages.read(db, {
        account_id: input.accountId,
        lim: input.limit + 1,
        off: key ? 0 : (input.offset ?? 0),
        after_key: (key?.[0] as string | undefined) ?? null,
        after_id: (key?.[1] as string | undefined) ?? null,
      }),
      input.limit,
    );
  }
  // Filtered: the page and the total from the cells, again in one statement (not prepared: its shape follows the filters).
  const where = and(matching(input), key && sql`(${usageRecords.createdAt}, ${usageRecords.id}) < (${key[0] as string}::timestamptz, ${key[1] as string}::text)`);
  const rows = resultRows<UsageRow & { total: string | number; createdKey: string | null }>(
    await db.execute(sql`
      select t.total, p.id, p.path, p.method, p.api_key_id as "keyId", p.created_at as "createdAt", p.cost_micros as "costMicros",
             to_char(p.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "createdKey"
        from (select coalesce(sum(requests), 0) as total from ${cellsSql(input, true)} cells) t
        left join lateral (
          select id, path, method, api_key_id, created_at, cost_micros from usage_records
           where ${where}
           order by created_at desc, id desc
           limit ${input.limit + 1} offset ${key ? 0 : (input.offset ?? 0)}
        ) p on true
       order by p.created_at desc, p.id desc`),
  );
  return pageOf(rows, input.limit);
}

/** The statement's rows as a page: the records (none when the one row's id is null), the next cursor and the total. */
function pageOf(rows: Array<UsageRow & { total: string | number | null; createdKey: string | null }>, limit: number) {
  const found = rows.filter((r) => r.id !== null).map((r) => ({ ...r, createdAt: new Date(r.createdAt), costMicros: Number(r.costMicros) }));
  const { page, nextCursor } = keysetPage(found, limit, SORT, (r) => [r.createdKey!, r.id]);
  return { records: page, nextCursor, total: Number(rows[0]?.total ?? 0) };
}

interface UsageRow {
  id: string;
  path: string;
  method: string;
  keyId: string | null;
  createdAt: Date;
  costMicros: number;
}

/** One unfiltered page as the batch statement takes it. */
interface PageRequest {
  account_id: string;
  lim: number;
  off: number;
  after_key: string | null;
  after_id: string | null;
}

type PageRow = UsageRow & { ord: number; total: string | number | null; createdKey: string | null };

/**
 * Pages of accounts' rows (each from a cursor, or an offset) with their running totals: per request
 * (`ord`) its rows, newest first, or one row with a null id when its page is empty.
 */
const USAGE_PAGES_SQL = sql`
  select r.ord, a.usage_count as total, p.id, p.path, p.method, p.api_key_id as "keyId", p.created_at as "createdAt", p.cost_micros as "costMicros",
         to_char(p.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "createdKey"
    from jsonb_to_recordset(${sql.placeholder('pages')}::jsonb) as r(ord int, account_id text, lim int, off int, after_key text, after_id text)
    left join accounts a on a.id = r.account_id
    left join lateral (
      select u.id, u.path, u.method, u.api_key_id, u.created_at, u.cost_micros
        from usage_records u
       where u.account_id = r.account_id
         and (r.after_key is null or (u.created_at, u.id) < (r.after_key::timestamptz, r.after_id))
       order by u.created_at desc, u.id desc
       limit r.lim offset r.off
    ) p on true
   order by r.ord, p.created_at desc, p.id desc`;

/** Pages in one statement, at most 64 (a page of 10,000 rows is one of them). */
const usagePages = batchedRead<PageRequest, PageRow>('usage_pages', USAGE_PAGES_SQL, 64);

/**
 * Requests and cost of the filtered usage, per UTC hour or day, per path and per key (with its name):
 * what a usage chart and its breakdowns need, summed by the database from the cells, in integers.
 */
export async function summariseUsage(db: Db, input: UsageFilter & { bucket: 'hour' | 'day' }) {
  const unit = sql.raw(`'${input.bucket}'`);
  // One pass over the cells, three groupings (per bucket, per path, per key), the keys' names joined
  // in the same statement (an account's own keys only; '' is a signed-in session's calls).
  const rows = resultRows<{ bucket: string | null; path: string | null; keyId: string | null; keyName: string | null; byKey: boolean; requests: string | number; cost: string | number }>(
    await db.execute(sql`
      select g.*, k.name as "keyName"
        from (
          select to_char(date_trunc(${unit}, c.hour, 'UTC') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:00:00"Z"') as bucket, c.path, c.key_id as "keyId",
                 grouping(c.key_id) = 0 as "byKey", sum(c.requests) as requests, sum(c.cost_micros) as cost
            from ${cellsSql(input, input.bucket === 'day')} c
           group by grouping sets ((date_trunc(${unit}, c.hour, 'UTC')), (c.path), (c.key_id))
          having sum(c.requests) > 0
        ) g
        left join api_keys k on g."byKey" and k.id = g."keyId" and k.account_id = ${input.accountId}`),
  ).map((r) => ({ ...r, requests: Number(r.requests), costMicros: Number(r.cost) }));
  const buckets = rows.filter((r) => r.bucket !== null).sort((a, b) => (a.bucket! < b.bucket! ? -1 : 1));
  const byPath = rows.filter((r) => r.path !== null).sort((a, b) => b.requests - a.requests || (a.path! < b.path! ? -1 : 1));
  const keys = rows.filter((r) => r.byKey);
  const byKey = keys.sort((a, b) => b.requests - a.requests || (a.keyId! < b.keyId! ? -1 : 1));
  return {
    buckets: buckets.map((b) => ({ start: b.bucket!, requests: b.requests, costMicros: b.costMicros })),
    byPath: byPath.map((p) => ({ path: p.path!, requests: p.requests, costMicros: p.costMicros })),
    byKey: byKey.map((k) => ({ keyId: k.keyId || null, keyName: (k.keyId && k.keyName) || null, requests: k.requests, costMicros: k.costMicros })),
    totals: { requests: buckets.reduce((n, x) => n + x.requests, 0), costMicros: buckets.reduce((n, x) => n + x.costMicros, 0) },
  };
}
