/**
 * Held streams, counted across instances: one `stream_leases` row per open stream, renewed by its
 * instance while the stream lives and deleted when it ends. A lease past its `expires_at` is a stream
 * that died with its process and no longer counts, so a killed instance frees its clients' slots
 * within LEASE_TTL_MS.
 *
 * Limits: an API key (or a signed-in session) holds at most STREAM_MAX_PER_KEY private streams; a
 * client address holds at most STREAM_MAX_PER_IP public streams, an IPv6 client counted by its /64
 * (clientAddressKey: one host gets a whole /64, so counting single addresses would let it open
 * unlimited streams by rotating through them). Taking a lease counts and inserts
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
import { shuttingDown } from './refusals.ts';

/**
 * The address a public stream is counted under: an IPv4 address as it is (an IPv4-mapped IPv6
 * address as its IPv4 address); an IPv6 address as its /64 network, written `2001:db8:1:2::/64`
 * (lowercase, no leading zeros); anything else (no address known) as it is.
 */
export function clientAddressKey(address: string): string {
  let text = address.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  if (!text.includes(':')) return text;
  const groups = ipv6Groups(text.split('%', 1)[0]!);
  if (!groups) return text;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (with `::` and a dotted IPv4 tail), or undefined. */
function ipv6Groups(text: string): number[] | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    const pieces = part.split(':');
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      if (i === pieces.length - 1 && piece.includes('.')) {
        const octets = piece.split('.');
        if (octets.length !== 4 || !octets.every((o) => /^\d{1,3}$/.test(o) && Number(o) <= 255)) return undefined;
        const [a, b, c, d] = octets.map(Number) as [number, number, number, number];
        out.push((a << 8) | b, (c << 8) | d);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(piece)) return undefined;
        out.push(parseInt(piece, 16));
      }
    }
    return out;
  };
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  if (!head || !tail) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - tail.length;
  if (missing < 1) return undefined;
  return [...head, ...Array<number>(missing).fill(0), ...tail];
}

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
  /** releaseAll ran (shutdown): no lease is taken any more. */
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly timing: LeaseTiming,
    private readonly logger: Logger,
  ) {}

  /**
   * A lease for one more stream of `scope`, or 429 when `limit` are held already (503 once shut
   * down). Returns its id. A market scope's clientIp is counted as clientAddressKey says.
   */
  async acquire(scope: LeaseScope, limit: number): Promise<string> {
    if (this.closed) throw shuttingDown();
    if (scope.kind === 'market') scope = { kind: 'market', clientIp: clientAddressKey(scope.clientIp) };
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
          ? `At most ${limit} public streams may be open from one client address (an IPv6 client counts by its /64); close one first`
          : `At most ${limit} account streams may be open per API key (or session); close one first`,
      );
    }
    this.live.add(id);
    this.schedule();
    return id;
  }

  /** The stream ended: its lease is deleted (if that fails, it expires on its own). Resolves once deleted. */
  release(id: string): Promise<void> {
    if (!this.live.delete(id)) return Promise.resolve();
    const deleting = this.db
      .execute(sql`delete from stream_leases where id = ${id}`)
      .then(
        () => undefined,
        (error) => this.logger.warn('stream lease not released; it expires on its own', { leaseId: id, error: String((error as Error)?.message ?? error) }),
      )
      .finally(() => this.deleting.delete(deleting));
    this.deleting.add(deleting);
    if (this.live.size === 0) this.stopTimer();
    return deleting;
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

  /** Deletes every live lease, and takes none any more (shutdown). */
  async releaseAll(): Promise<void> {
    this.closed = true;
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
