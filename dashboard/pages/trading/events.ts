/**
 * Event, band and token names for the trading pages (a ladder's orders trade its thresholds' tokens:
 * "Kraken IPO: Yes: above $10B"), from the public event list, cached like any query.
 */
import { useQuery } from '@tanstack/react-query';
import { api } from '../../trpc.ts';

export interface Names {
  event: (eventId: string) => string;
  band: (bandId: string) => string;
}

export function useNames(): Names {
  const events = useQuery({ queryKey: ['tradingMarket.events'], queryFn: () => api.tradingMarket.events.query(), staleTime: 60_000 });
  const list = events.data?.events ?? [];
  const events_ = new Map(list.map((e) => [e.id, e.name]));
  const bands = new Map(list.flatMap((e) => [...e.bands.map((b) => [b.id, `${e.name}: ${b.label}`] as const), ...e.tokens.map((t) => [t.id, `${e.name}: ${t.label}`] as const)]));
  return { event: (id) => events_.get(id) ?? id, band: (id) => bands.get(id) ?? id };
}

/** Values move with the books (refreshed every 2 s on the server): re-read every 5 s while shown. */
export const LIVE_MS = 5_000;
