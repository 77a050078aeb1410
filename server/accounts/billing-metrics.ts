/**
 * Billing outcomes:
 *   preipo_billing_admissions_total{tier, plan}   billed requests charged (tier standard|premium, plan prepaid|metered)
 *   preipo_billing_refusals_total{reason}         refused by the admission statement: unauthorized (unknown or
 *                                                 revoked key), insufficient_balance (402), monthly_cap (a metered
 *                                                 account's cap), key_cap (a key's spend cap), scope (a key without the route's scope)
 *   preipo_billing_refunds_total{outcome}         charges of failed requests returned: refunded (at once), deferred
 *                                                 (the database did not take it: kept and retried), retried (a
 *                                                 deferred one written later)
 *   preipo_billing_refunds_pending                deferred refunds still waiting for the database
 *   preipo_billing_admission_batch_size           billed requests per admission statement (group admission:
 *                                                 admission-queue.ts); its _count is the statements
 *   preipo_billing_admission_retries_total        requests sent again because another instance's batch had
 *                                                 changed their account under theirs
 * Refusals before the admission statement (a missing or malformed key, a rate limit) are not billing
 * decisions: they show in the request metrics as their status.
 *
 * The admission is a plain function of the database (accounts/billing.ts); it finds these counters
 * through the database it runs on, bound when the services are built.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import type { Db } from '../../db/client.ts';
import type { PriceTier } from './price-tier.ts';

export type RefusalReason = 'unauthorized' | 'insufficient_balance' | 'monthly_cap' | 'key_cap' | 'scope';
export type RefundOutcome = 'refunded' | 'deferred' | 'retried';

export class BillingMetrics {
  private readonly admissions: Counter<'tier' | 'plan'>;
  private readonly refusals: Counter<'reason'>;
  private readonly refunds: Counter<'outcome'>;
  /** Pre-bound children: a billed request adds one, without building a label object. */
  private readonly admitted: Record<PriceTier, { prepaid: Counter.Internal; metered: Counter.Internal }>;
  private readonly refusedFor: Record<RefusalReason, Counter.Internal>;
  private readonly refundedAs: Record<RefundOutcome, Counter.Internal>;
  private readonly batchSizes: Histogram;
  private readonly retries: Counter;

  constructor(registry: Registry) {
    this.admissions = new Counter({ name: 'preipo_billing_admissions_total', help: 'Billed requests admitted and charged, by price tier and billing plan.', labelNames: ['tier', 'plan'], registers: [registry] });
    this.refusals = new Counter({ name: 'preipo_billing_refusals_total', help: 'Billed requests refused by the admission, by reason (unauthorized, insufficient_balance, monthly_cap, key_cap, scope).', labelNames: ['reason'], registers: [registry] });
    this.refunds = new Counter({ name: 'preipo_billing_refunds_total', help: 'Charges of failed requests returned, by outcome (refunded at once, deferred while the database is away, retried later).', labelNames: ['outcome'], registers: [registry] });
    const plans = (tier: PriceTier) => ({ prepaid: this.admissions.labels(tier, 'prepaid'), metered: this.admissions.labels(tier, 'metered') });
    this.admitted = { standard: plans('standard'), premium: plans('premium') };
    this.refusedFor = Object.fromEntries((['unauthorized', 'insufficient_balance', 'monthly_cap', 'key_cap', 'scope'] as const).map((r) => [r, this.refusals.labels(r)])) as Record<RefusalReason, Counter.Internal>;
    this.refundedAs = Object.fromEntries((['refunded', 'deferred', 'retried'] as const).map((o) => [o, this.refunds.labels(o)])) as Record<RefundOutcome, Counter.Internal>;
    const children = [...Object.values(this.admitted).flatMap((p) => [p.prepaid, p.metered]), ...Object.values(this.refusedFor), ...Object.values(this.refundedAs)];
    for (const child of children) child.inc(0); // every series present from the start, at 0
    this.batchSizes = new Histogram({ name: 'preipo_billing_admission_batch_size', help: 'Billed requests admitted by one admission statement (group admission); the count is the statements.', buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256], registers: [registry] });
    this.retries = new Counter({ name: 'preipo_billing_admission_retries_total', help: 'Billed requests sent again in the next admission batch because another instance changed their account under theirs.', registers: [registry] });
    this.retries.inc(0);
  }

  batch(requests: number): void {
    this.batchSizes.observe(requests);
  }

  retry(): void {
    this.retries.inc();
  }

  admission(tier: PriceTier, metered: boolean): void {
    this.admitted[tier][metered ? 'metered' : 'prepaid'].inc();
  }

  refusal(reason: RefusalReason): void {
    this.refusedFor[reason].inc();
  }

  refund(outcome: RefundOutcome): void {
    this.refundedAs[outcome].inc();
  }
}

const byDatabase = new WeakMap<Db, BillingMetrics>();

/** The admission on `db` counts into `metrics` (the last services built on a database win). */
export function bindBillingMetrics(db: Db, metrics: BillingMetrics): void {
  byDatabase.set(db, metrics);
}

/** The counters of the services running on `db`, if any (a CLI or a script has none). */
export function billingMetricsOf(db: Db): BillingMetrics | undefined {
  return byDatabase.get(db);
}
