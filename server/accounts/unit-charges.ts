/**
 * Units paid as they are written. A call priced in units (its meta's `units`: the company export, per
 * started thousand rows) reserves every unit before its first byte, all or nothing, so a caller who
 * cannot pay for the whole answer gets 402 and nothing (procedures/access.ts, reserveUnits). The
 * first unit pays for the call; the others are provisional (usage_records.provisional_until, set by
 * the admission statement itself). The stream confirms each unit just before it writes that unit's
 * part, and when it ends — read to the end, cut short by the reader, failed — it refunds every unit
 * it did not confirm. If the process dies instead, those units lapse UNIT_LEASE_MS after their last
 * extension and the lapsed-units job of any instance refunds them (billing/lapsed-units.ts). So a
 * caller pays for the thousands it was sent, across crashes, and each refund happens once (a refund
 * deletes its usage row: a second finds nothing).
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { resultRows } from '../../db/prepared.ts';
import type { Charge } from './billing.ts';
import type { Refunds } from './refunds.ts';

/** Makes a provisional unit a charge for good; false when it is gone (refunded: it lapsed, or its stream settled). */
async function confirmUnit(db: Db, usageId: string): Promise<boolean> {
  const rows = await db
    .execute(sql`update usage_records set provisional_until = null where id = ${usageId} and provisional_until is not null returning id`)
    .then(resultRows<{ id: string }>);
  return rows.length > 0;
}

/** Moves the lapse of the still-provisional units to `leaseMs` from now. */
async function extendUnits(db: Db, usageIds: string[], leaseMs: number): Promise<void> {
  if (usageIds.length === 0) return;
  await db.execute(sql`
    update usage_records set provisional_until = now() + make_interval(secs => ${Math.ceil(leaseMs / 1000)}::int)
     where id in (${sql.join(usageIds.map((id) => sql`${id}`), sql`, `)}) and provisional_until is not null`);
}

/** Provisional units whose time has passed (oldest first), as the charges to refund. */
export async function lapsedUnits(db: Db, limit: number): Promise<Charge[]> {
  const rows = await db
    .execute(sql`
      select id, account_id, cost_micros from usage_records
       where provisional_until < now() order by provisional_until limit ${limit}`)
    .then(resultRows<{ id: string; account_id: string; cost_micros: string | number }>);
  return rows.map((r) => ({ usageId: r.id, accountId: r.account_id, costMicros: Number(r.cost_micros) }));
}

/**
 * One streamed answer's units: `charges` as the gate reserved them (the first paid, the rest
 * provisional). The stream calls `cover(n)` before writing what the n-th unit pays for, and
 * `settle()` once it has ended, whichever way.
 */
export class UnitsAsWritten {
  /** Units paid for good: the first always is. */
  private confirmed = 1;
  private extendedAt: number;
  private settled = false;

  constructor(
    private readonly db: Db,
    private readonly refunds: Refunds,
    private readonly charges: readonly Charge[],
    private readonly leaseMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.extendedAt = now();
  }

  /**
   * Before writing: the first `units` units paid for good (more than were charged are not asked
   * for: rows added after the count are written at the counted price). Extends the rest's lapse a
   * third of the lease at a time. False when a unit is gone (the reader stalled past the lease and
   * it was refunded): the stream must stop writing.
   */
  async cover(units: number): Promise<boolean> {
    const upTo = Math.min(units, this.charges.length);
    while (this.confirmed < upTo) {
      if (!(await confirmUnit(this.db, this.charges[this.confirmed]!.usageId))) return false;
      this.confirmed++;
    }
    if (this.confirmed < this.charges.length && this.now() - this.extendedAt >= this.leaseMs / 3) {
      await extendUnits(this.db, this.charges.slice(this.confirmed).map((c) => c.usageId), this.leaseMs);
      this.extendedAt = this.now();
    }
    return true;
  }

  /** The stream has ended: every unit not confirmed is refunded (now, or once the database answers). Once. */
  async settle(): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    for (const charge of this.charges.slice(this.confirmed)) await this.refunds.refund(charge);
  }

  /** Units paid for good so far. */
  get paid(): number {
    return this.confirmed;
  }
}
