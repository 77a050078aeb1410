/**
 * IPO valuation events (docs/api.md "Valuation event", docs/decisions.md §6) and their bands. A band's `id`
 * is the venue token it trades as: the real token id where known, else a stable paper id.
 */
import { sql } from 'drizzle-orm';
import { doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

export interface EventVenueMapping {
  name: string;
  eventSlug: string | null;
  gammaEventId: number | null;
  negRisk: boolean | null;
  /** `bands` (exclusive outcomes) or `ladder` ("above $X" markets converted to bands). */
  structure: 'bands' | 'ladder';
  /** When `npm run events:sync` last refreshed this event from Gamma (ISO 8601). */
  syncedAt?: string;
}

export interface BandVenueMapping {
  /** The band's Yes token (decimal uint256); for a ladder band, the Yes token of "above threshold". */
  tokenId: string | null;
  conditionId: string | null;
  question: string | null;
  threshold: number | null;
  noTokenId?: string | null;
  /** Gamma market `version`: which ERC-1155 ledger holds the tokens. */
  version?: 'v1' | 'v2' | null;
  negRisk?: boolean | null;
  tickSize?: number | null;
  minOrderSize?: number | null;
  acceptingOrders?: boolean | null;
}

/** An event's listing (see `events.listing`). */
export const EVENT_LISTINGS = ['listed', 'proposed', 'hidden'] as const;
export type EventListing = (typeof EVENT_LISTINGS)[number];

export const events = pgTable('events', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  company: text('company').notNull(),
  companySourceId: text('company_source_id'),
  /** open: trading; closed: trading stopped, outcome pending; resolved: resolvedBandIndex won; voided: cancelled, every band pays $0.50 a share. */
  status: text('status', { enum: ['open', 'closed', 'resolved', 'voided'] }).notNull(),
  resolvedBandIndex: integer('resolved_band_index'),
  endDate: timestamp('end_date', { withTimezone: true, mode: 'date' }),
  volumeUsd: doublePrecision('volume_usd'),
  venue: jsonb('venue').$type<EventVenueMapping>().notNull(),
  /** Other ids this event answers to (server/events/resolve.ts); ours, so events:sync never changes them. */
  aliases: text('aliases').array().notNull().default(sql`'{}'::text[]`),
  /**
   * Who sees it (docs/decisions.md §6, "The market universe"): `listed` events are the customers'
   * (listings, valuations, trading, streams); `proposed` ones were discovered and wait for an operator
   * (EVENT_AUTO_LIST off); `hidden` ones an operator took off the list. Only listed events reach a customer.
   */
  listing: text('listing', { enum: EVENT_LISTINGS }).notNull().default('listed'),
  /** How it came here: the seed file, or the discovery of the venue's IPO markets. */
  origin: text('origin', { enum: ['seed', 'discovered'] }).notNull().default('seed'),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
}, (t) => [
  // A company's listed events (its markets; the companies list's hasMarket EXISTS) are one index probe, however many events there ever were.
  index('events_company_source_id_idx').on(t.companySourceId, t.listing),
]);

export const eventBands = pgTable(
  'event_bands',
  {
    eventId: text('event_id')
      .notNull()
      .references(() => events.id),
    bandIndex: integer('band_index').notNull(),
    id: text('id').notNull(),
    label: text('label').notNull(),
    /** Billions of USD. */
    minValuation: doublePrecision('min_valuation').notNull(),
    maxValuation: doublePrecision('max_valuation'),
    /** The price the paper venue centres its book on (the last public price, or a stated guess). */
    seedPrice: doublePrecision('seed_price').notNull(),
    venue: jsonb('venue').$type<BandVenueMapping>().notNull(),
  },
  (t) => [primaryKey({ columns: [t.eventId, t.bandIndex] }), uniqueIndex('event_bands_id_idx').on(t.id), index('event_bands_event_idx').on(t.eventId)],
);
