/**
 * The `events` parameter of POST /api/webhooks (webhooks.create), for the router's input schema.
 *
 * A plain `z.array(z.enum(…)).min(1).max(8)` answers `events: "order.filled"` (a string, not a
 * list) with two issues: "expected array, received string", then — zod runs length checks on
 * anything with a `length` — "Too big: expected string to have <=8 characters". Here anything that
 * is not a list says so, once: `events: must be a list of event types` (server/errors.ts prefixes
 * the field); a missing one stays `events: required`; the size checks run on lists only.
 */
import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES } from './service.ts';

export const EVENTS_NOT_A_LIST = 'must be a list of event types';

/**
 * zod 4's check condition (`when`, typed for .refine only, honoured by every check): the size checks
 * run on lists only. Kept on .min/.max rather than a refinement so the OpenAPI document keeps
 * minItems/maxItems.
 */
const onListsOnly: object = { when: (payload: { value: unknown }) => Array.isArray(payload.value) };

export function webhookEventsInput() {
  return z
    .array(z.enum(WEBHOOK_EVENT_TYPES), {
      // undefined: let zod say "received undefined", which the error formatter answers as "required".
      error: (issue) => (issue.code === 'invalid_type' && issue.input !== undefined ? EVENTS_NOT_A_LIST : undefined),
    })
    .min(1, { ...onListsOnly, error: 'must list at least one event type' })
    .max(WEBHOOK_EVENT_TYPES.length, { ...onListsOnly })
    .meta({ description: `The event types to receive: a list of ${WEBHOOK_EVENT_TYPES.join(', ')}` });
}
