/**
 * Aggregates over the whole dataset (stats, industries, countries) are costly at a million rows and
 * change only on import. Each is cached in this process under the dataset version; a request reads
 * the version (one indexed row) and recomputes only when an import, on any instance, has moved it.
 */
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { companyDatasetState } from '../../db/schema.ts';

export async function datasetVersion(db: Db): Promise<number> {
  const [row] = await db.select({ version: companyDatasetState.version }).from(companyDatasetState).where(eq(companyDatasetState.id, 1));
  return row?.version ?? 0;
}

/** Called inside the transaction that changed companies. */
export async function bumpDatasetVersion(db: Db): Promise<void> {
  await db
    .insert(companyDatasetState)
    .values({ id: 1, version: 1 })
    .onConflictDoUpdate({ target: companyDatasetState.id, set: { version: sql`${companyDatasetState.version} + 1`, changedAt: sql`now()` } });
}

export class AggregateCache {
  private entries = new Map<string, { version: number; value: Promise<unknown> }>();

  async get<T>(db: Db, name: string, compute: () => Promise<T>): Promise<T> {
    const version = await datasetVersion(db);
    const cached = this.entries.get(name);
    if (cached && cached.version === version) return cached.value as Promise<T>;
    // Concurrent misses share one computation; a failed one is not kept.
    const value = compute();
    this.entries.set(name, { version, value });
    value.catch(() => this.entries.get(name)?.value === value && this.entries.delete(name));
    return value;
  }
}
