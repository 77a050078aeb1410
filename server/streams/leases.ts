/**
 * Held streams, counted across instances: one `stream_leases` row per open stream, renewed by its
 * instance while the stream lives and deleted when it ends. A lease past its `expires_at` is a stream
 * that died with its process and no longer counts, so a killed instance frees its clients' slots
 * within LEASE_TTL_MS.
 *
 * Limits (docs/decisions.md §11: a credential is cheap — a wallet signs in as often as it likes — so no limit may
 * hang on one credential alone):
 *  - per credential: an API key, or a signed-in session, holds at most STREAM_MAX_PER_KEY private streams;
 *  - per account: all its keys and sessions together hold at most STREAM_MAX_PER_ACCOUNT private streams;
 *  - per client address: at most STREAM_MAX_PER_IP streams of ANY kind (public and private together),
 *    an IPv6 client counted by its /64 (clientAddressKey: one host gets a whole /64, so counting single
 *    addresses would let it open unlimited streams by rotating through them). One budget per address,
 *    because what it protects (sockets, subscribers, lease rows held by one client) is the same whatever
 *    the stream, and separate budgets would only add up to a larger one.
 * Taking a lease counts and inserts under transaction-scoped advisory locks — the address's, then (a
 * private stream) the account's, always in that order, so two opens can never wait on each other in a
 * cycle. Every lease of an address is inserted under its address lock and every lease of an account
 * (hence of each of its credentials) under its account lock, and the count runs after the locks are
 * held: it sees every lease committed by whoever held them before, so two concurrent opens (on any
 * instances) can never both take the last slot of any limit.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { resultRows } from '../../db/prepared.ts';
import { ApiError } from '../errors.ts';
import { newId } from '../lib/ids.ts';
import type { Logger } from '../lib/logger.ts';
import { shuttingDown } from './refusals.ts';
import { errorMessage } from '../lib/error-message.ts';

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
  /** keyHash: the credential's lease key (an API key's hash, or `session:` + the session's hash). */
  | { kind: 'account'; keyHash: string; accountId: string; clientIp: string };

/** The limits a lease is taken under (config.streams); a public stream meets only maxPerIp. */
export interface LeaseLimits {
  maxPerKey: number;
  maxPerAccount: number;
  maxPerIp: number;
}

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
   * A lease for one more stream of `scope`, or 429 naming the limit it would pass (503 once shut
   * down). Returns its id. The client address is counted as clientAddressKey says.
   */
  async acquire(scope: LeaseScope, limits: LeaseLimits): Promise<string> {
    if (this.closed) throw shuttingDown();
    const clientIp = clientAddressKey(scope.clientIp);
    const keyHash = scope.kind === 'account' ? scope.keyHash : null;
    const accountId = scope.kind === 'account' ? scope.accountId : null;
    const id = newId('strm');
    const ttlSeconds = this.timing.ttlMs / 1000;
    const held = await this.db.transaction(async (tx) => {
      // Always the address first, then the account (see the header): no lock-order cycles.
      await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`stream-ip:${clientIp}`}, 0))`);
      if (accountId !== null) await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`stream-account:${accountId}`}, 0))`);
      const [row] = await tx
        .execute(sql`
          with held as (
            select count(*) filter (where client_ip = ${clientIp}) as by_ip,
                   count(*) filter (where key_hash = ${keyHash}) as by_key,
                   count(*) filter (where kind = 'account' and account_id = ${accountId}) as by_account
              from stream_leases
             where expires_at > now() and (client_ip = ${clientIp} or account_id = ${accountId})
          ), taken as (
            insert into stream_leases (id, key_hash, account_id, client_ip, kind, expires_at)
            select ${id}, ${keyHash}, ${accountId}, ${clientIp}, ${scope.kind}, now() + make_interval(secs => ${ttlSeconds})
              from held
             where by_ip < ${limits.maxPerIp} and by_key < ${limits.maxPerKey} and by_account < ${limits.maxPerAccount}
            returning id
          )
          select by_ip::int as "byIp", by_key::int as "byKey", by_account::int as "byAccount", exists (select 1 from taken) as taken from held`)
        .then(resultRows<{ byIp: number; byKey: number; byAccount: number; taken: boolean }>);
      return row!;
    });
    if (!held.taken) throw refusal(scope, held, limits);
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
        (error) => this.logger.warn('stream lease not released; it expires on its own', { leaseId: id, error: errorMessage(error) }),
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
      this.logger.warn('stream leases not renewed', { leases: ids.length, error: errorMessage(error) });
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

/** The 429 for a lease refused: the credential's limit first, then the account's, then the address's. */
function refusal(scope: LeaseScope, held: { byKey: number; byAccount: number }, limits: LeaseLimits): ApiError {
  if (scope.kind === 'account' && held.byKey >= limits.maxPerKey) {
    return new ApiError('RATE_LIMITED', `At most ${limits.maxPerKey} account streams may be open per API key (or session); close one first`);
  }
  if (scope.kind === 'account' && held.byAccount >= limits.maxPerAccount) {
    return new ApiError('RATE_LIMITED', `At most ${limits.maxPerAccount} account streams may be open per account, over all its API keys and sessions; close one first`);
  }
  return new ApiError(
    'RATE_LIMITED',
    scope.kind === 'market'
      ? `At most ${limits.maxPerIp} streams may be open from one client address (an IPv6 client counts by its /64), account streams included; close one first`
      : `At most ${limits.maxPerIp} streams may be open from one client address (an IPv6 client counts by its /64), public streams included; close one first`,
  );
}
