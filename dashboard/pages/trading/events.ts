/**
 * Event, band and token names for the trading pages (a ladder's orders trade its thresholds' tokens:
 * "Kraken IPO: Yes: above $10B"), from the public event list, cached like any query.
 */
import { useQuery } from '@tanstack/react-query';
import { api } from '../../trpc.ts';

export interface Names {
  event: (eventId: string) => string;
  band: (bandId: string) => string;
  /** The event's outcome once it no longer trades ("Resolved: <band>", "Voided", "Closed, awaiting the outcome"); null while it trades or is unknown. */
  outcome: (eventId: string) => string | null;
}

interface EventOutcome {
  status: 'open' | 'closed' | 'resolved' | 'voided';
  winningBandId?: string | null;
  bands: { id: string; label: string }[];
}

/**
 * What a customer reads instead of live returns and a way to buy or sell once an event no longer
 * trades: its outcome, or that it is closed and awaits one. Null while it trades.
 */
export function outcomeOf(event: EventOutcome): string | null {
  if (event.status === 'resolved') {
    const winner = event.winningBandId ? event.bands.find((b) => b.id === event.winningBandId)?.label : undefined;
    return `Resolved: ${winner ?? event.winningBandId ?? 'outcome not published'}`;
  }
  if (event.status === 'voided') return 'Voided';
  if (event.status === 'closed') return 'Closed, awaiting the outcome';
  return null;
}

export function useNames(): Names {
  const events = useQuery({ queryKey: ['tradingMarket.events'], queryFn: () => api.tradingMarket.events.query(), staleTime: 60_000, refetchInterval: 60_000 }); // an event closing or resolving shows within a minute
  const list = events.data?.events ?? [];
  const events_ = new Map(list.map((e) => [e.id, e.name]));
  const bands = new Map(list.flatMap((e) => [...e.bands.map((b) => [b.id, `${e.name}: ${b.label}`] as const), ...e.tokens.map((t) => [t.id, `${e.name}: ${t.label}`] as const)]));
  const outcomes = new Map(list.map((e) => [e.id, outcomeOf(e)]));
  return { event: (id) => events_.get(id) ?? id, band: (id) => bands.get(id) ?? id, outcome: (id) => outcomes.get(id) ?? null };
}

/** Values move with the books (refreshed every 2 s on the server): re-read every 5 s while shown. */
export const LIVE_MS = 5_000;
