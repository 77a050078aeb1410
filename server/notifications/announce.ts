/**
 * What each change announces, written in the transaction — or the one statement — of the
 * change itself, so an event and its webhook deliveries commit with the change or not at all:
 *
 *   order.filled / order.rejected  an order's outcome applied (ledger-writes.ts applyOrderOutcome)
 *   position.opened / .closed      a position's status moved (ledger-writes.ts settleStatus, closeAsGone;
 *                                  a filled buy's: filled-buy.ts openFilledBuy)
 *   position.settled               its settlement written (settlement.ts recordSettlement)
 *   event.resolved                 an event resolved, voided or corrected (trading/resolution.ts)
 *   deposit.credited               a deposit credited (deposits/store.ts creditDeposit)
 *   balance.changed                the same credit's balance change (private streams; not a webhook type)
 *   balance.low                    balance-low.ts, a periodic check
 *
 * Writers inside a drizzle transaction call `emitAccountEvent` (server/notifications/emit.ts) through
 * the helpers here. Writers whose change is ONE statement (an order's outcome, a filled buy's
 * opening, a deposit's credit: one round trip, on purpose) add `accountEventCtes` to that statement instead: the same rows as
 * emitAccountEvent writes (event, one delivery per matching active webhook, the same delivery id and
 * body shape), as two more common table expressions.
 *
 * Amounts are USD as the API shows them (micro-USD / 10^6), shares likewise.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import type { positionBands, positions } from '../../db/schema.ts';
import { resultRows } from '../../db/prepared.ts';
import { newId } from '../lib/ids.ts';
import { MICROS_PER_USD, microRatio, microsToUsd } from '../lib/money.ts';
import { emitAccountEvent } from './emit.ts';

/** Micro-units as an exact JSON number in SQL (25500001 → 25.500001; trailing zeros dropped). */
export const usdSql = (micros: SQL | string) => sql`trim_scale(${typeof micros === 'string' ? sql.raw(micros) : micros}::numeric / ${sql.raw(String(MICROS_PER_USD))})`;

/**
 * emitAccountEvent's two writes as common table expressions `<name>_events` and `<name>_deliveries`,
 * to follow the CTEs of a one-statement change (start them with a comma). `events` selects one row
 * per event: (id text, account_id text, user_id text, type text, data jsonb), and may read the
 * statement's earlier CTEs (so it sees only what the change really changed). The webhook body is
 * `{"id","type","timestamp","data"}`, fixed now, as emitAccountEvent writes it.
 */
export function accountEventCtes(name: string, events: SQL): SQL {
  const e = sql.raw(`${name}_events`);
  return sql`
      ${e} as (
        insert into account_events (id, account_id, user_id, type, data, created_at)
        select x.id, x.account_id, x.user_id, x.type, x.data, now()
          from (${events}) x
        on conflict (id) do nothing
        returning id, account_id, type, data, created_at
      ), ${sql.raw(`${name}_deliveries`)} as (
        insert into webhook_deliveries (id, webhook_id, account_id, event_id, type, payload)
        select 'msg_' || substr(md5(w.id || ':' || ev.id), 1, 24), w.id, w.account_id, ev.id, ev.type,
               '{"id":' || to_json(ev.id)::text || ',"type":' || to_json(ev.type)::text
                 || ',"timestamp":' || to_json(to_char(ev.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
                 || ',"data":' || ev.data::text || '}'
          from ${e} ev join webhooks w on w.account_id = ev.account_id
         where w.status = 'active' and w.events ? ev.type
        on conflict (webhook_id, event_id) do nothing
      )`;
}

/**
 * The `data` of an order event, from the `applied` CTE of applyOrderOutcome (the order as updated)
 * joined to its position `p`. order.filled: something filled (MATCHED, or a sale partly filled and
 * the rest cancelled); order.rejected: nothing filled (REJECTED, or CANCELLED empty).
 */
export function orderEventRows(eventId: SQL): SQL {
  return sql`
    select ${eventId} as id, a.account_id, a.user_id,
           case when a.filled_micros > 0 then 'order.filled' else 'order.rejected' end as type,
           jsonb_build_object(
             'orderId', a.id, 'positionId', a.position_id, 'eventId', p.event_id, 'userId', a.user_id,
             'positionSide', p.side, 'bandId', a.band_id, 'side', a.side, 'purpose', a.purpose, 'status', a.status,
             'size', ${usdSql('a.requested_micros')}, 'filled', ${usdSql('a.filled_micros')},
             'price', case when a.filled_micros > 0 then trim_scale(round(a.notional_micros::numeric / a.filled_micros, 6))
                           else ${usdSql('a.limit_price_micros')} end,
             'amount', ${usdSql('a.notional_micros')}, 'fees', ${usdSql('a.fees_micros')}, 'reason', a.reason
           ) as data
      from applied a join positions p on p.id = a.position_id`;
}

type PositionFigures = {
  position: Pick<typeof positions.$inferSelect, 'id' | 'accountId' | 'userId' | 'eventId' | 'side' | 'status' | 'unitsMicros' | 'floorL' | 'floorS' | 'buyFailed' | 'closeReason'>;
  bands: Pick<typeof positionBands.$inferSelect, 'targetMicros' | 'boughtMicros' | 'sharesMicros' | 'costMicros' | 'entryCostMicros'>[];
  realizedPnlMicros: number;
};

/**
 * position.opened / position.closed for a position whose status just changed, as `record` holds it. The
 * numbers are the position list's (trading/answers.ts): size in units held, cost basis, entry price per unit,
 * realised P&L so far; `closeReason` on a close: `sold`, `tokens-gone` (positions/sync) or `buy-failed`
 * (a buy that did not fill every band, unwound).
 */
export function positionStatusData(record: PositionFigures, type: 'position.opened' | 'position.closed'): Record<string, unknown> {
  const { position, bands } = record;
  const sum = (pick: (b: (typeof bands)[number]) => number) => bands.reduce((s, b) => s + pick(b), 0);
  const target = sum((b) => b.targetMicros);
  const units = (shares: number) => (target === 0 ? 0 : Number((BigInt(position.unitsMicros) * BigInt(shares)) / BigInt(target)));
  const bought = units(sum((b) => b.boughtMicros));
  const data: Record<string, unknown> = {
    positionId: position.id,
    eventId: position.eventId,
    userId: position.userId,
    side: position.side,
    status: position.status,
    size: microsToUsd(units(sum((b) => b.sharesMicros))),
    cost: microsToUsd(sum((b) => b.costMicros)),
    entryPrice: microRatio(sum((b) => b.entryCostMicros), bought),
    realizedPnl: microsToUsd(record.realizedPnlMicros),
    floorL: position.floorL,
    floorS: position.floorS,
  };
  if (type === 'position.closed') data.closeReason = position.buyFailed ? 'buy-failed' : (position.closeReason ?? 'sold');
  return data;
}

/** position.opened / position.closed written in the transaction that moved the position's status. */
export async function emitPositionStatus(tx: Db, record: PositionFigures, type: 'position.opened' | 'position.closed'): Promise<void> {
  const { position } = record;
  await emitAccountEvent(tx, { accountId: position.accountId, userId: position.userId, type, data: positionStatusData(record, type) });
}

export interface SettledPosition {
  settlementId: string;
  accountId: string;
  userId: string;
  positionId: string;
  eventId: string;
  side: string;
  outcome: 'resolved' | 'voided';
  winningBandId: string | null;
  unitsMicros: number;
  proceedsMicros: number;
  realizedPnlMicros: number;
}

/** position.settled, with the settlement's public numbers (GET /api/trading/settlements). */
export async function emitPositionSettled(tx: Db, s: SettledPosition): Promise<void> {
  await emitAccountEvent(tx, {
    accountId: s.accountId,
    userId: s.userId,
    type: 'position.settled',
    data: {
      settlementId: s.settlementId,
      positionId: s.positionId,
      eventId: s.eventId,
      userId: s.userId,
      side: s.side,
      outcome: s.outcome,
      winningBandId: s.winningBandId,
      units: microsToUsd(s.unitsMicros),
      payoutPerUnit: microRatio(s.proceedsMicros, s.unitsMicros),
      proceeds: microsToUsd(s.proceedsMicros),
      realizedPnl: microsToUsd(s.realizedPnlMicros),
    },
  });
}

/** The alphabet of our ids (server/lib/ids.ts): an event id derived in SQL looks like any other. */
const ID_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** An event id derived from a 32-byte digest (evt_ + 22 base58 digits), in SQL: the same input, the same id. */
const derivedEventId = (digest: SQL) => sql`'evt_' || (select string_agg(substr(${ID_ALPHABET}::text, 1 + get_byte(${digest}, i) % 58, 1), '' order by i) from generate_series(0, 21) i)`;

/**
 * event.resolved: one event per (account, trading user) holding an open or pending position of the
 * event when it resolves, is voided, or its resolution is corrected (each change announces itself).
 *
 * ONE statement, however many holders: the holders grouped from `positions`, their account_events
 * rows and the webhook_deliveries of the subscribed active webhooks (accountEventCtes), inside the
 * resolution's transaction. Each event id is derived from one random id of this change and the
 * holder (evt_ + 22 base58 digits of sha256), so it is unique per change and holder. Answers the
 * number of events written.
 */
export async function emitEventResolved(
  tx: Db,
  outcome: { eventId: string; status: 'resolved' | 'voided'; winningBandId: string | null; winningBandLabel: string | null },
): Promise<number> {
  const change = newId('evt');
  const digest = sql`sha256(convert_to(${change}::text || chr(10) || h.account_id || chr(10) || h.user_id, 'UTF8'))`;
  const eventId = derivedEventId(digest);
  const rows = resultRows<{ n: number | string }>(
    await tx.execute(sql`
      with holders as (
        select p.account_id, p.user_id, count(*)::int as open_positions
          from positions p
         where p.event_id = ${outcome.eventId}::text and p.status in ('open', 'pending')
         group by p.account_id, p.user_id
      ),
      ${accountEventCtes(
        'resolved',
        sql`select ${eventId} as id, h.account_id, h.user_id, 'event.resolved' as type,
                   jsonb_build_object('eventId', ${outcome.eventId}::text, 'status', ${outcome.status}::text,
                                      'winningBandId', ${outcome.winningBandId}::text, 'winningBandLabel', ${outcome.winningBandLabel}::text,
                                      'userId', h.user_id, 'openPositions', h.open_positions) as data
              from holders h
             order by h.account_id, h.user_id`,
      )}
      select count(*)::int as n from resolved_events`),
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * event.listed, to every account with an active webhook subscribed to it, in the listing's
 * transaction. Its id is derived from the account and the event (evt_ + 22 base58 digits of sha256),
 * so an event announced twice (a retried approval, two instances listing at once) is one event per
 * account. Answers the number of events written.
 */
export async function emitEventListed(
  tx: Db,
  event: { eventId: string; name: string; company: string; structure: 'bands' | 'ladder'; bands: number; venueEventSlug: string | null; origin: 'seed' | 'discovered' },
): Promise<number> {
  const digest = sql`sha256(convert_to('event.listed' || chr(10) || s.account_id || chr(10) || ${event.eventId}::text, 'UTF8'))`;
  const eventId = derivedEventId(digest);
  const rows = resultRows<{ n: number | string }>(
    await tx.execute(sql`
      with subscribers as (
        select distinct w.account_id from webhooks w where w.status = 'active' and w.events ? 'event.listed'
      ),
      ${accountEventCtes(
        'listed',
        sql`select ${eventId} as id, s.account_id, null::text as user_id, 'event.listed' as type,
                   jsonb_build_object('eventId', ${event.eventId}::text, 'name', ${event.name}::text, 'company', ${event.company}::text,
                                      'structure', ${event.structure}::text, 'bands', ${event.bands}::int,
                                      'venueEventSlug', ${event.venueEventSlug}::text, 'origin', ${event.origin}::text) as data
              from subscribers s
             order by s.account_id`,
      )}
      select count(*)::int as n from listed_events`),
  );
  return Number(rows[0]?.n ?? 0);
}

