/**
 * Reading an account's usage: a page of its rows, newest first, and totals and summaries over any
 * range. None of it grows with the account's history: a page is one walk of the account's
 * (created_at, id) index from the range's end or the cursor, the unfiltered total is the account's
 * running count (accounts.usage_count), and a filtered total or a summary adds up the account's hourly
 * cells (usage_hours) for the whole hours of the range and counts rows only in its partial first and
 * last hours (docs/decisions.md §4, "Reads that do not grow with history").
 */
import { and, desc, eq, gte, lt, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { resultRows } from '../../db/prepared.ts';
import { accounts, usageRecords } from '../../db/schema.ts';
import { cursorProblem, decodeCursor, instantKey, keysetPage, type KeyPart } from '../lib/keyset-cursor.ts';

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

const matching = (f: UsageFilter) =>
  and(
    eq(usageRecords.accountId, f.accountId),
    f.from ? gte(usageRecords.createdAt, f.from) : undefined,
    f.to ? lte(usageRecords.createdAt, f.to) : undefined,
    f.keyId ? eq(usageRecords.apiKeyId, f.keyId) : undefined,
    f.path ? eq(usageRecords.path, f.path) : undefined,
  );

/**
 * The range cut into its whole hours, [wholeFrom, wholeTo), read from the cells, and its partial
 * first and last hours, whose rows are counted one by one (`loose`). An open end is whole up to the
 * cells' own end. A range within one hour is all loose.
 */
function pieces(f: UsageFilter): { stored: { from: Date | null; to: Date | null } | null; loose: Array<[Date, Date, 'to-inclusive' | 'to-exclusive']> } {
  const wholeFrom = f.from ? new Date(Math.ceil(f.from.getTime() / HOUR_MS) * HOUR_MS) : null;
  // `to` is inclusive to the millisecond: the hour holding it is whole only if `to` is its last millisecond.
  const wholeTo = f.to ? new Date(Math.floor((f.to.getTime() + 1) / HOUR_MS) * HOUR_MS) : null;
  if (f.from && f.to && wholeFrom! >= wholeTo!) return { stored: null, loose: [[f.from, f.to, 'to-inclusive']] };
  const loose: Array<[Date, Date, 'to-inclusive' | 'to-exclusive']> = [];
  if (f.from && wholeFrom && f.from < wholeFrom) loose.push([f.from, wholeFrom, 'to-exclusive']);
  if (f.to && wholeTo && wholeTo <= f.to) loose.push([wholeTo, f.to, 'to-inclusive']);
  return { stored: { from: wholeFrom, to: wholeTo }, loose };
}

/**
 * The filtered usage as cells (hour, key, path, requests, cost): the stored cells of the whole hours,
 * and the rows of the partial ones summed the same way. Every total and summary is a sum over these.
 */
function cellsSql(f: UsageFilter): SQL {
  const { stored, loose } = pieces(f);
  const parts: SQL[] = [];
  if (stored) {
    const where: SQL[] = [sql`account_id = ${f.accountId}`, sql`requests <> 0`];
    if (stored.from) where.push(sql`hour >= ${stored.from.toISOString()}::timestamptz`);
    if (stored.to) where.push(sql`hour < ${stored.to.toISOString()}::timestamptz`);
    if (f.keyId) where.push(sql`key_id = ${f.keyId}`);
    if (f.path) where.push(sql`path = ${f.path}`);
    parts.push(sql`select hour, key_id, path, requests, cost_micros from usage_hours where ${sql.join(where, sql` and `)}`);
  }
  if (loose.length) {
    const within = or(...loose.map(([from, to, end]) => and(gte(usageRecords.createdAt, from), end === 'to-inclusive' ? lte(usageRecords.createdAt, to) : lt(usageRecords.createdAt, to))));
    parts.push(sql`
      select date_trunc('hour', created_at, 'UTC') as hour, coalesce(api_key_id, '') as key_id, path, count(*) as requests, sum(cost_micros) as cost_micros
        from usage_records
       where ${and(eq(usageRecords.accountId, f.accountId), f.keyId ? eq(usageRecords.apiKeyId, f.keyId) : undefined, f.path ? eq(usageRecords.path, f.path) : undefined, within)}
       group by 1, 2, 3`);
  }
  return sql`(${sql.join(parts, sql` union all `)})`;
}

const unfiltered = (f: UsageFilter) => !f.from && !f.to && !f.keyId && !f.path;

/** How many usage rows match: the account's running count when nothing filters, else the cells' sum. */
async function totalOf(db: Db, f: UsageFilter): Promise<number> {
  if (unfiltered(f)) {
    const [row] = await db.select({ count: accounts.usageCount }).from(accounts).where(eq(accounts.id, f.accountId));
    return row?.count ?? 0;
  }
  const [row] = resultRows<{ total: string | number }>(await db.execute(sql`select coalesce(sum(requests), 0) as total from ${cellsSql(f)} cells`));
  return Number(row?.total ?? 0);
}

/**
 * Usage records of one account, newest first, `from`/`to` inclusive; total counts every match. Paged by
 * `offset`, or by `cursor` (the nextCursor of the page before: one index walk however deep).
 */
export async function listUsage(db: Db, input: UsageFilter & { limit: number; offset?: number; cursor?: string }) {
  const key = input.cursor === undefined ? undefined : decodeCursor(input.cursor, SORT, CURSOR_PARTS);
  const where = and(matching(input), key && sql`(${usageRecords.createdAt}, ${usageRecords.id}) < (${key[0] as string}::timestamptz, ${key[1] as string}::text)`);
  const [rows, total] = await Promise.all([
    db
      .select({
        id: usageRecords.id,
        path: usageRecords.path,
        method: usageRecords.method,
        keyId: usageRecords.apiKeyId,
        createdAt: usageRecords.createdAt,
        createdKey: instantKey(usageRecords.createdAt),
        costMicros: usageRecords.costMicros,
      })
      .from(usageRecords)
      .where(where)
      .orderBy(desc(usageRecords.createdAt), desc(usageRecords.id))
      .limit(input.limit + 1)
      .offset(key ? 0 : (input.offset ?? 0)),
    totalOf(db, input),
  ]);
  const { page, nextCursor } = keysetPage(rows, input.limit, SORT, (r) => [r.createdKey, r.id]);
  return { records: page, nextCursor, total };
}

/**
 * Requests and cost of the filtered usage, per UTC hour or day, per path and per key (with its name):
 * what a usage chart and its breakdowns need, summed by the database from the cells, in integers.
 */
export async function summariseUsage(db: Db, input: UsageFilter & { bucket: 'hour' | 'day' }) {
  const cells = cellsSql(input);
  const unit = sql.raw(`'${input.bucket}'`);
  const [buckets, byPath, byKey] = await Promise.all([
    db.execute(sql`
      select to_char(date_trunc(${unit}, hour, 'UTC') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:00:00"Z"') as start, sum(requests) as requests, sum(cost_micros) as cost
        from ${cells} c group by 1 having sum(requests) > 0 order by 1`),
    db.execute(sql`
      select path, sum(requests) as requests, sum(cost_micros) as cost
        from ${cells} c group by path having sum(requests) > 0 order by sum(requests) desc, path`),
    db.execute(sql`
      select nullif(c.key_id, '') as "keyId", k.name as "keyName", sum(c.requests) as requests, sum(c.cost_micros) as cost
        from ${cells} c left join api_keys k on k.id = c.key_id and k.account_id = ${input.accountId}
       group by c.key_id, k.name having sum(c.requests) > 0 order by sum(c.requests) desc, c.key_id`),
  ]);
  type Row = { requests: string | number; cost: string | number };
  const num = <T extends Row>(rows: unknown) => resultRows<T>(rows).map((r) => ({ ...r, requests: Number(r.requests), costMicros: Number(r.cost) }));
  const b = num<Row & { start: string }>(buckets);
  return {
    buckets: b.map((x) => ({ start: x.start, requests: x.requests, costMicros: x.costMicros })),
    byPath: num<Row & { path: string }>(byPath).map((p) => ({ path: p.path, requests: p.requests, costMicros: p.costMicros })),
    byKey: num<Row & { keyId: string | null; keyName: string | null }>(byKey).map((k) => ({ keyId: k.keyId, keyName: k.keyName ?? null, requests: k.requests, costMicros: k.costMicros })),
    totals: { requests: b.reduce((n, x) => n + x.requests, 0), costMicros: b.reduce((n, x) => n + x.costMicros, 0) },
  };
}
