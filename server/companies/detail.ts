/**
 * A company's detail answer (GET /api/private-companies/{id}, /source/{sourceId}, /spacex): the record,
 * as now or as of a day, kept per dataset version (aggregate-cache.ts), with its current markets
 * (markets.ts detailAnswer). A repeat under the same version and snapshot is one kept object:
 * no database read, no validation, no serialization.
 */
import type { Db } from '../../db/client.ts';
import type { DatasetCache } from './aggregate-cache.ts';
import { detailAnswer, recordDetailAt, type DetailAnswer, type MarketSource } from './markets.ts';
import { companyById, companyBySourceId } from './queries.ts';

export type CompanyRef = { id: number } | { sourceId: string };

export async function companyDetailAnswer(
  handles: { db: Db; marketData: MarketSource; cache: DatasetCache },
  datasetVersion: number | undefined,
  ref: CompanyRef,
  asOf: string | undefined,
): Promise<DetailAnswer> {
  const { db, marketData, cache } = handles;
  const key = 'id' in ref ? `detail:id:${ref.id}:${asOf ?? ''}` : `detail:source:${ref.sourceId}:${asOf ?? ''}`;
  const record = await cache.answer(db, key, async () => recordDetailAt('id' in ref ? await companyById(db, ref.id) : await companyBySourceId(db, ref.sourceId), asOf), datasetVersion);
  return detailAnswer(db, marketData, record);
}
