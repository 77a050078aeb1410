/**
 * A venue wrapper that injects faults into order placement and status reads, for the fault tests.
 * The inner (paper) venue stays the source of truth: whatever it filled is what the user holds.
 */
import type { MarketableOrder, Redemption, Venue, VenueCredentials, VenueOrder } from '../../server/venues/venue.ts';

export type Fault =
  /** The request never reaches the venue and no answer comes. */
  | 'lost'
  /** The venue fills the order, then the answer is lost (no reply). */
  | 'filled-then-silent'
  /** The venue fills the order, then the connection breaks (an error instead of the answer). */
  | 'filled-then-error'
  /** The venue refuses the order. */
  | 'rejected'
  /** The venue fills half of it and cancels the rest. */
  | 'half-filled'
  /** The venue is down: the request fails at once, nothing placed. */
  | 'down';

const never = () => new Promise<never>(() => {});

export class FaultyVenue implements Venue {
  readonly name;
  readonly rules;
  readonly usesSessionKeys;
  /** Placements seen so far (1-based numbering for `faultFor`). */
  placements = 0;
  /** While true, order status reads fail (the venue cannot be asked either). */
  statusDown = false;
  /** While true, paying settlements fails (the inner venue is not asked). */
  redeemDown = false;
  /** Called after the inner venue placed an order (the crash test kills the process here). */
  afterPlacement?: (n: number) => void;

  constructor(
    readonly inner: Venue,
    public faultFor: (n: number, order: MarketableOrder) => Fault | undefined = () => undefined,
  ) {
    this.name = inner.name;
    this.rules = inner.rules;
    this.usesSessionKeys = inner.usesSessionKeys;
  }

  getOrderBooks(tokenIds: string[]) {
    return this.inner.getOrderBooks(tokenIds);
  }
  checkCredentials(c: VenueCredentials) {
    return this.inner.checkCredentials(c);
  }
  getCollateral(c: VenueCredentials) {
    return this.inner.getCollateral(c);
  }
  getTokenBalances(c: VenueCredentials, tokenIds: string[], wallet?: string) {
    return this.inner.getTokenBalances(c, tokenIds, wallet);
  }
  async redeem(redemption: Redemption, credentials: () => Promise<VenueCredentials>) {
    if (this.redeemDown) throw new Error('connect ECONNREFUSED (injected)');
    if (!this.inner.redeem) throw new Error('the inner venue cannot pay settlements');
    return this.inner.redeem(redemption, credentials);
  }
  cancelOrder(c: VenueCredentials, clientOrderId: string) {
    return this.inner.cancelOrder(c, clientOrderId);
  }
  async getOrder(c: VenueCredentials, clientOrderId: string) {
    if (this.statusDown) throw new Error('connect ECONNREFUSED (injected)');
    return this.inner.getOrder(c, clientOrderId);
  }

  async placeOrder(c: VenueCredentials, order: MarketableOrder): Promise<VenueOrder> {
    const n = ++this.placements;
    const fault = this.faultFor(n, order);
    switch (fault) {
      case 'lost':
        return never();
      case 'down':
        throw new Error('connect ECONNREFUSED (injected)');
      case 'rejected':
        return { venueOrderId: `rej-${n}`, clientOrderId: order.clientOrderId, tokenId: order.tokenId, side: order.side, status: 'REJECTED', requestedMicros: order.sharesMicros, filledMicros: 0, notionalMicros: 0, feesMicros: 0, reason: 'rejected-by-venue' };
      case 'half-filled': {
        const half = Math.floor(order.sharesMicros / 2 / this.rules.shareStepMicros) * this.rules.shareStepMicros;
        const placed = await this.inner.placeOrder(c, { ...order, sharesMicros: half, timeInForce: 'FAK' });
        this.afterPlacement?.(n);
        return { ...placed, requestedMicros: order.sharesMicros };
      }
    }
    const placed = await this.inner.placeOrder(c, order);
    this.afterPlacement?.(n);
    if (fault === 'filled-then-silent') return never();
    if (fault === 'filled-then-error') throw new Error('socket hang up (injected)');
    return placed;
  }
}
