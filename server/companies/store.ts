/**
 * Writing companies: an all-or-nothing upsert keyed by sourceId, reporting which rows were added,
 * changed or already identical, and the records' rounds, investor links and names with them
 * (graph.ts). Used by the seeder and the import CLI.
 */
import { getTableColumns, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { companies, companyNames } from '../../db/schema.ts';
import { canonicalJson } from '../lib/canonical-json.ts';
import { bumpDatasetVersion } from './aggregate-cache.ts';
import { COMPANY_FIELDS, type CompanyRecord } from './company-schema.ts';
import { rebuildCompanyGraph } from './graph.ts';

export interface UpsertReport {
  added: number;
  updated: number;
  unchanged: number;
}

/** A record as column values: every field present, missing ones null, so an import replaces the row. */
function toRow(record: CompanyRecord) {
  const row: Record<string, unknown> = {};
  for (const field of COMPANY_FIELDS) row[field] = record[field] ?? null;
  return row as typeof companies.$inferInsert;
}

const BATCH = 250;
const COLUMNS = getTableColumns(companies);

export async function upsertCompanies(db: Db, records: CompanyRecord[], onProgress?: (done: number) => void): Promise<UpsertReport> {
  const report: UpsertReport = { added: 0, updated: 0, unchanged: 0 };
  await db.transaction(async (tx) => {
    for (let start = 0; start < records.length; start += BATCH) {
      const batch = records.slice(start, start + BATCH).map(toRow);
      const existing = await tx
        .select()
        .from(companies)
        .where(inArray(companies.sourceId, batch.map((r) => r.sourceId)));
      const bySourceId = new Map(existing.map((row) => [row.sourceId, row]));
      const changed = batch.filter((row) => {
        const current = bySourceId.get(row.sourceId);
        if (!current) {
          report.added++;
          return true;
        }
        const same = COMPANY_FIELDS.every((f) => canonicalJson(current[f as keyof typeof current]) === canonicalJson(row[f as keyof typeof row]));
        report[same ? 'unchanged' : 'updated']++;
        return !same;
      });
      if (changed.length) {
        const set: Record<string, unknown> = { updatedAt: sql`now()` };
        for (const field of COMPANY_FIELDS) {
          if (field === 'sourceId') continue;
          set[field] = sql.raw(`excluded.${COLUMNS[field as keyof typeof COLUMNS].name}`);
        }
        const written = await tx.insert(companies).values(changed).onConflictDoUpdate({ target: companies.sourceId, set }).returning();
        await rebuildCompanyGraph(tx, written);
      }
      // Unchanged records written before the graph existed (no name row yet) get theirs now.
      const unchangedIds = existing.filter((row) => !changed.some((c) => c.sourceId === row.sourceId)).map((row) => row.id);
      if (unchangedIds.length) {
        const named = new Set(
          (await tx.selectDistinct({ id: companyNames.companyId }).from(companyNames).where(inArray(companyNames.companyId, unchangedIds))).map((r) => r.id),
        );
        await rebuildCompanyGraph(tx, existing.filter((row) => unchangedIds.includes(row.id) && !named.has(row.id)));
      }
      onProgress?.(Math.min(start + BATCH, records.length));
    }
    if (report.added || report.updated) await bumpDatasetVersion(tx);
  });
  return report;
}
