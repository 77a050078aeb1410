/**
 * What the events domain is handed besides the core: discovery links each new event to its
 * private-company record (found, or created from the market: companies/market-companies.ts), which
 * the platform's Services provides, so that events never import the companies domain (which reads
 * events for its markets).
 */
import type { Db } from '../../db/client.ts';
import type { CoreHandles } from '../handles.ts';

export type CompanyForMarket = (db: Db, market: { company: string; eventId: string; venueEventSlug: string | null }) => Promise<string>;

export interface EventsHandles extends CoreHandles {
  companyForMarket: CompanyForMarket;
}
