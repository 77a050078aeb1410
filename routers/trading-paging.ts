/** The paging and event-filter parameters the trading lists share (positions, orders, history, settlements). */
import { z } from 'zod';
import { wholeNumber } from './params.ts';

/** An event filter: any id the event answers to; unknown ids are 404 (server/events/resolve.ts). */
// The description sits inside optional(): the OpenAPI generator documents an optional query parameter by its inner schema.
export const eventFilter = () =>
  z
    .string()
    .min(1)
    .max(200)
    .meta({ description: 'Only this event: our id, the venue\'s event slug or an alias (GET /api/trading/events); an unknown id is 404 NOT_FOUND', example: 'openai-ipo' })
    .optional();

export const pageOffset = () => wholeNumber({ min: 0, max: 1_000_000 }).default(0).meta({ description: 'Items to skip, 0 to 1000000, default 0', example: 0 });

/** What a paged list answers besides its items. */
export const pageFields = {
  total: z.number().int().meta({ description: 'How many items the whole filtered set holds (not only this page)' }),
  limit: z.number().int(),
  offset: z.number().int(),
};
