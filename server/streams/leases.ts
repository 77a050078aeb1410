/**
 * Held streams, counted across instances: one `stream_leases` row per open stream, renewed by its
 * instance while the stream lives and deleted when it ends. A lease past its `expires_at` is a stream
 * that died with its process and no longer counts, so a killed instance frees its clients' slots
 * within LEASE_TTL_MS.
 *
 * Limits: an API key (or a signed-in session) holds at most STREAM_MAX_PER_KEY private streams; a
 * client address holds at most STREAM_MAX_PER_IP public streams. Taking a lease counts and inserts
 * under a transaction-scoped advisory lock on the key or address: the count statement runs after the
 * lock is held, so it sees every lease committed by whoever held it before, and two concurrent opens
 * can never both take the last slot.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { resultRows } from '../../db/prepared.ts';
import { ApiError } from '../errors.ts';
import { newId } from '../lib/ids.ts';
import type { Logger } from '../lib/logger.ts';

export type LeaseScope =
  | { kind: 'market'; clientIp: string }
  | { kind: 'account'; keyHash: string; accountId: string; clientIp: string };

export interface LeaseTiming {
  /** How long a lease lives without renewal. */
  ttlMs: number;
  /** How often live leases are renewed (well under ttlMs). */
  renewMs: number;
}

export class LeaseBook {
  private live = new Set<string>();
  /** Deletes under way (shutdown waits for them before the database closes). */
  private deleting = new Set<Promise<void>>();
  private timer?: ReturnType<typeof setInterval>;
  private renewals = 0;

  constructor(
    private readonly db: Db,
    private readonly timing: LeaseTiming,
    private readonly logger: Logger,
  ) {}

  /** A lease for one more stream of `scope`, or 429 when `limit` are held already. Returns its id. */
  async acquire(scope: LeaseScope, limit: number): Promise<string> {
    const id = newId('strm');
    const ttlSeconds = this.timing.ttlMs / 1000;
    const lockName = scope.kind === 'market' ? `stream-ip:${scope.clientIp}` : `stream-key:${scope.keyHash}`;
    const held = scope.kind === 'market'
      ? sql`kind = 'market' and client_ip = ${scope.clientIp}`
      : sql`kind = 'account' and key_hash = ${scope.keyHash}`;
    const taken = await this.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${lockName}, 0))`);
      const rows = await tx
        .execute(sql`
          insert into stream_leases (id, key_hash, account_id, client_ip, kind, expires_at)
          select ${id}, ${scope.kind === 'account' ? scope.keyHash : null}, ${scope.kind === 'account' ? scope.accountId : null},
                 ${scope.clientIp}, ${scope.kind}, now() + make_interval(secs => ${ttlSeconds})
           where (select count(*) from stream_leases where ${held} and expires_at > now()) < ${limit}
          returning id`)
        .then(resultRows<{ id: string }>);
      return rows.length > 0;
    });
    if (!taken) {
      throw new ApiError(
        'RATE_LIMITED',
        scope.kind === 'market'
          ? `At most ${limit} public streams may be open from one client address; close one first`
          : `At most ${limit} account streams may be open per API key (or session); close one first`,
      );
    }
    this.live.add(id);
    this.schedule();
    return id;
  }

  /** The stream ended: its lease is deleted (if that fails, it expires on its own). */
  release(id: string) {
    if (!this.live.delete(id)) return;
    const deleting = this.db
      .execute(sql`delete from stream_leases where id = ${id}`)
      .then(
        () => undefined,
        (error) => this.logger.warn('stream lease not released; it expires on its own', { leaseId: id, error: String((error as Error)?.message ?? error) }),
      )
      .finally(() => this.deleting.delete(deleting));
    this.deleting.add(deleting);
    if (this.live.size === 0) this.stopTimer();
  }

  get held(): number {
    return this.live.size;
  }

  /** Renews every live lease of this instance in one statement (and now and then forgets long-dead ones). */
  async renew(): Promise<void> {
    if (this.live.size === 0) return;
    const ids = [...this.live];
    try {
      await this.db.execute(sql`update stream_leases set expires_at = now() + make_interval(secs => ${this.timing.ttlMs / 1000})
                                 where id = any(${sql.param(ids)}::text[])`);
      if (++this.renewals % 16 === 0) await this.db.execute(sql`delete from stream_leases where expires_at < now() - interval '1 hour'`);
    } catch (error) {
      this.logger.warn('stream leases not renewed', { leases: ids.length, error: String((error as Error)?.message ?? error) });
    }
  }

  /** Deletes every live lease (shutdown). */
  async releaseAll(): Promise<void> {
    this.stopTimer();
    const ids = [...this.live];
    this.live.clear();
    if (ids.length > 0) await this.db.execute(sql`delete from stream_leases where id = any(${sql.param(ids)}::text[])`).catch(() => undefined);
    await Promise.all([...this.deleting]);
  }

  private schedule() {
    if (this.timer) return;
    this.timer = setInterval(() => void this.renew(), this.timing.renewMs);
    this.timer.unref?.();
  }

  private stopTimer() {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
