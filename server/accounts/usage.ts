import { and, count, desc, eq, gte, lte } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { usageRecords } from '../../db/schema.ts';

/** Usage records of one account, newest first, `from`/`to` inclusive; total counts every match. */
export async function listUsage(db: Db, input: { accountId: string; from?: Date; to?: Date; limit: number }) {
  const where = and(
    eq(usageRecords.accountId, input.accountId),
    input.from ? gte(usageRecords.createdAt, input.from) : undefined,
    input.to ? lte(usageRecords.createdAt, input.to) : undefined,
  );
  const [records, [total]] = await Promise.all([
    db
      .select({
        id: usageRecords.id,
        path: usageRecords.path,
        method: usageRecords.method,
        createdAt: usageRecords.createdAt,
        costMicros: usageRecords.costMicros,
      })
      .from(usageRecords)
      .where(where)
      .orderBy(desc(usageRecords.createdAt), desc(usageRecords.id))
      .limit(input.limit),
    db.select({ total: count() }).from(usageRecords).where(where),
  ]);
  return { records, total: total?.total ?? 0 };
}
