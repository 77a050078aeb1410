/**
 * Announcing what happened to an account: one call, inside the transaction that made
 * the change, writes the event to the outbox (`account_events`, which private streams tail) and one
 * pending delivery for each of the account's active webhooks subscribed to its type — in the same
 * statement, so the change, its event and its deliveries commit together or not at all.
 *
 * The delivery id (the `webhook-id` header, the same on every retry) is derived from the webhook and
 * the event, so even a repeated emit of one event id is one delivery per webhook.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import type { AccountEventType } from '../../db/schema.ts';

/** Every event type of the outbox (for routers, which read no database module). */
export { ACCOUNT_EVENT_TYPES } from '../../db/schema.ts';
import { newId } from '../lib/ids.ts';

export interface AccountEvent {
  accountId: string;
  /** The trading user it concerns (x-user-id), or null for the account as a whole. */
  userId: string | null;
  type: AccountEventType;
  data: Record<string, unknown>;
}

/** `db` is the transaction of the change (a drizzle tx is a Db). Answers the event's public id. */
export async function emitAccountEvent(db: Db, event: AccountEvent, id = newId('evt')): Promise<string> {
  const at = new Date();
  // The webhook body, fixed now: its bytes are what every attempt signs and sends.
  const body = JSON.stringify({ id, type: event.type, timestamp: at.toISOString(), data: event.data });
  await db.execute(sql`
    with event as (
      insert into account_events (id, account_id, user_id, type, data, created_at)
      values (${id}, ${event.accountId}, ${event.userId}, ${event.type}, ${JSON.stringify(event.data)}::jsonb, ${at.toISOString()}::timestamptz)
      on conflict (id) do nothing
      returning id
    )
    insert into webhook_deliveries (id, webhook_id, account_id, event_id, type, payload)
    select 'msg_' || substr(md5(w.id || ':' || event.id), 1, 24), w.id, w.account_id, event.id, ${event.type}, ${body}
    from webhooks w, event
    where w.account_id = ${event.accountId} and w.status = 'active' and w.events ? ${event.type}
    on conflict (webhook_id, event_id) do nothing`);
  return id;
}
