/**
 * The private-company record a venue market is about (docs/companies.md "Markets"): the record whose
 * name or registered name is the market's company (case-insensitive), else one created from what the
 * market says — its name and nothing else, marked `extra.origin: "market"` with the event, its venue
 * page and the day it was seen — so a company page with its markets exists before the dataset covers
 * the company. No figure is invented: every other field stays null until an import fills it in (an
 * import of the same source id replaces the row). Created under a source id made from the name
 * (`market-<name>`), so passes on several instances create it once.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { companies } from '../../db/schema.ts';
import { bumpDatasetVersion } from './aggregate-cache.ts';

export interface MarketCompany {
  /** The company as the market names it ("SpaceX"). */
  company: string;
  eventId: string;
  venueEventSlug: string | null;
}

const sourceIdFor = (name: string) =>
  `market-${name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80) || 'company'}`;

/** The matching record's source id, or a new record's. */
export async function companyForMarket(db: Db, market: MarketCompany): Promise<string> {
  const [found] = await db
    .select({ sourceId: companies.sourceId })
    .from(companies)
    .where(sql`lower(${companies.name}) = lower(${market.company}) or lower(${companies.registeredName}) = lower(${market.company})`)
    .orderBy(companies.sourceId)
    .limit(1);
  if (found) return found.sourceId;
  const sourceId = sourceIdFor(market.company);
  const created = await db
    .insert(companies)
    .values({
      sourceId,
      name: market.company.trim(),
      referenceUrl: market.venueEventSlug ? `https://polymarket.com/event/${market.venueEventSlug}` : null,
      extra: { origin: 'market', fromEventId: market.eventId, venueEventSlug: market.venueEventSlug, seenAt: new Date().toISOString().slice(0, 10) },
    })
    .onConflictDoNothing({ target: companies.sourceId })
    .returning({ sourceId: companies.sourceId });
  if (created.length) await bumpDatasetVersion(db);
  return sourceId;
}
