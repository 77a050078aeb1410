/**
 * The private-company record a venue market is about (docs/companies.md "Markets"): the record whose
 * name, registered name or alias is the market's company (folded: case and accents ignored), else one created from what the
 * market says — its name and nothing else, marked `extra.origin: "market"` with the event, its venue
 * page and the day it was seen — so a company page with its markets exists before the dataset covers
 * the company. No figure is invented: every other field stays null until an import fills it in (an
 * import of the same source id replaces the row). Created under a source id made from the name
 * (`market-<name>`), so passes on several instances create it once.
 */
import { and, asc, eq, lte } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { companies, companyNames } from '../../db/schema.ts';
import { bumpDatasetVersion } from './aggregate-cache.ts';
import { nameForm, NAME_KIND, namesOf, slug } from './names.ts';

export interface MarketCompany {
  /** The company as the market names it ("SpaceX"). */
  company: string;
  eventId: string;
  venueEventSlug: string | null;
}

const sourceIdFor = (name: string) => `market-${slug(name, 80) || 'company'}`;

/** The matching record's source id, or a new record's. */
export async function companyForMarket(db: Db, market: MarketCompany): Promise<string> {
  const [found] = await db
    .select({ sourceId: companies.sourceId })
    .from(companyNames)
    .innerJoin(companies, eq(companies.id, companyNames.companyId))
    .where(and(eq(companyNames.folded, nameForm(market.company)), lte(companyNames.kind, NAME_KIND.alias)))
    .orderBy(asc(companyNames.kind), asc(companies.sourceId))
    .limit(1);
  if (found) return found.sourceId;
  const sourceId = sourceIdFor(market.company);
  const seenAt = new Date().toISOString().slice(0, 10);
  const referenceUrl = market.venueEventSlug ? `https://polymarket.com/event/${market.venueEventSlug}` : null;
  const name = market.company.trim();
  await db.transaction(async (tx) => {
    const created = await tx
      .insert(companies)
      .values({
        sourceId,
        name,
        referenceUrl,
        provenance: [{ id: 'polymarket', url: referenceUrl, asOf: seenAt, fields: ['name', 'referenceUrl'] }],
        extra: { origin: 'market', fromEventId: market.eventId, venueEventSlug: market.venueEventSlug, seenAt },
      })
      .onConflictDoNothing({ target: companies.sourceId })
      .returning({ id: companies.id });
    if (!created.length) return;
    await tx.insert(companyNames).values(namesOf({ name }).map((n) => ({ companyId: created[0]!.id, ...n })));
    await bumpDatasetVersion(tx);
  });
  return sourceId;
}
