/**
 * The price tiers of a billed call. Its own file, below both the admission (accounts/billing.ts) and
 * its counters (billing-metrics.ts), so that each can name it without importing the other.
 */
export type PriceTier = 'standard' | 'premium';
