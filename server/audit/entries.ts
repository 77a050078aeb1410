/**
 * The audit entries of the changes that more than one caller makes (the HTTP routes and the command
 * line), stated once: what each records, and when a change that did nothing records nothing.
 */
import { microsToUsd } from '../lib/money.ts';
import type { AuditEntry } from './log.ts';

type Maybe = AuditEntry | null;

/** A new key: its name, mode, masked form, scopes and cap (never the key). */
export const keyCreated = (accountId: string, k: { id: string; name: string; mode: string; maskedKey: string; scopes: readonly string[] | null; spendCapMicros: number | null; capPeriod: string | null }): AuditEntry => ({
  action: 'key.created',
  accountId,
  targetId: k.id,
  details: { name: k.name, mode: k.mode, maskedKey: k.maskedKey, scopes: k.scopes ?? 'all', spendCapUsd: k.spendCapMicros === null ? null : microsToUsd(k.spendCapMicros), capPeriod: k.capPeriod },
});

export const keyRevoked = (accountId: string, r: { id: string }): AuditEntry => ({ action: 'key.revoked', accountId, targetId: r.id });

/** Only when it credited: a reference used before changes nothing. */
export const credited = (accountId: string, reference: string, amountMicros: number) => (r: { credited: boolean }): Maybe =>
  r.credited ? { action: 'account.credited', accountId, targetId: reference, details: { amountUsd: microsToUsd(amountMicros) } } : null;

export const rateSet = (accountId: string, costPerRequestMicros: number): AuditEntry => ({ action: 'account.rate_set', accountId, details: { costPerRequestUsd: microsToUsd(costPerRequestMicros) } });

export const planSet = (accountId: string, p: { plan: string; stripeCustomerId?: string | null; monthlyCapMicros: number | null }): AuditEntry => ({
  action: 'account.plan_set',
  accountId,
  details: { plan: p.plan, stripeCustomerId: p.stripeCustomerId ?? null, monthlyCapUsd: p.monthlyCapMicros === null ? null : microsToUsd(p.monthlyCapMicros) },
});

/** Only when the listing changed. */
export const listingSet = (r: { eventId: string; listing: string; changed: boolean }): Maybe => (r.changed ? { action: 'event.listing_set', accountId: null, targetId: r.eventId, details: { listing: r.listing } } : null);
