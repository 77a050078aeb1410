import { and, count, desc, eq, gte, lte, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { apiKeys, usageRecords } from '../../db/schema.ts';

export interface UsageFilter {
  accountId: string;
  from?: Date;
  to?: Date;
  /** Only the requests of this key (of the account). */
  keyId?: string;
  /** Only the requests to this path (as recorded: `/api/…` or `/trpc/…`). */
  path?: string;
}

const matching = (f: UsageFilter) =>
  and(
    eq(usageRecords.accountId, f.accountId),
    f.from ? gte(usageRecords.createdAt, f.from) : undefined,
    f.to ? lte(usageRecords.createdAt, f.to) : undefined,
    f.keyId ? eq(usageRecords.apiKeyId, f.keyId) : undefined,
    f.path ? eq(usageRecords.path, f.path) : undefined,
  );

/** Usage records of one account, newest first, `from`/`to` inclusive; total counts every match. */
export async function listUsage(db: Db, input: UsageFilter & { limit: number; offset?: number }) {
  const where = matching(input);
  const [records, [total]] = await Promise.all([
    db
      .select({
        id: usageRecords.id,
        path: usageRecords.path,
        method: usageRecords.method,
        keyId: usageRecords.apiKeyId,
        createdAt: usageRecords.createdAt,
        costMicros: usageRecords.costMicros,
      })
      .from(usageRecords)
      .where(where)
      .orderBy(desc(usageRecords.createdAt), desc(usageRecords.id))
      .limit(input.limit)
      .offset(input.offset ?? 0),
    db.select({ total: count() }).from(usageRecords).where(where),
  ]);
  return { records, total: total?.total ?? 0 };
}

/**
 * Requests and cost of the filtered usage, per UTC hour or day, per path and per key (with its name):
 * what a usage chart and its breakdowns need, summed by the database (one query each), in integers.
 */
export async function summariseUsage(db: Db, input: UsageFilter & { bucket: 'hour' | 'day' }) {
  const where = matching(input);
  const unit = sql.raw(`'${input.bucket}'`);
  const start = sql<Date>`date_trunc(${unit}, ${usageRecords.createdAt} at time zone 'UTC')`;
  const cost = sql<string>`coalesce(sum(${usageRecords.costMicros}), 0)`;
  const [buckets, byPath, byKey] = await Promise.all([
    db.select({ start: sql<string>`to_char(${start}, 'YYYY-MM-DD"T"HH24:00:00"Z"')`, requests: count(), cost }).from(usageRecords).where(where).groupBy(start).orderBy(start),
    db.select({ path: usageRecords.path, requests: count(), cost }).from(usageRecords).where(where).groupBy(usageRecords.path).orderBy(desc(count()), usageRecords.path),
    db
      .select({ keyId: usageRecords.apiKeyId, keyName: apiKeys.name, requests: count(), cost })
      .from(usageRecords)
      .leftJoin(apiKeys, eq(apiKeys.id, usageRecords.apiKeyId))
      .where(where)
      .groupBy(usageRecords.apiKeyId, apiKeys.name)
      .orderBy(desc(count()), usageRecords.apiKeyId),
  ]);
  const costMicros = (row: { cost: string }) => Number(row.cost);
  return {
    buckets: buckets.map((b) => ({ start: b.start, requests: b.requests, costMicros: costMicros(b) })),
    byPath: byPath.map((p) => ({ path: p.path, requests: p.requests, costMicros: costMicros(p) })),
    byKey: byKey.map((k) => ({ keyId: k.keyId, keyName: k.keyName ?? null, requests: k.requests, costMicros: costMicros(k) })),
    totals: { requests: buckets.reduce((n, b) => n + b.requests, 0), costMicros: buckets.reduce((n, b) => n + costMicros(b), 0) },
  };
}
