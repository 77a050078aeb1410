/**
 * Venue calls by operation, outcome and latency: `preipo_venue_calls_total` and
 * `preipo_venue_call_duration_seconds`, labelled venue (paper, polymarket), operation (the Venue
 * method) and outcome: ok, refused (a 4xx answer about this call, e.g. INVALID_CREDENTIALS) or error
 * (no usable answer: VENUE_UNAVAILABLE, a timeout, the network, a fault).
 *
 * The venue is wrapped once where services are built, so every call is timed without touching a call
 * site. A Proxy, not a wrapper class: whatever else the venue object carries (tests read and replace
 * methods on `services.venue`) stays reachable, and a method replaced on it is timed too.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { ApiError, statusFor } from '../../errors.ts';
import type { Venue } from '../../venues/venue.ts';

/** A refusal is the venue's answer about this call (4xx: credentials, the order); a 5xx or anything else is a failure. */
function outcomeOf(error: unknown): 'refused' | 'error' {
  return error instanceof ApiError && statusFor(error.apiCode) < 500 ? 'refused' : 'error';
}

const OPERATIONS = new Set<string>(['getOrderBooks', 'checkCredentials', 'placeOrder', 'getOrder', 'cancelOrder', 'getCollateral', 'getTokenBalances', 'redeem']);

export class VenueMetrics {
  private readonly calls: Counter<'venue' | 'operation' | 'outcome'>;
  private readonly duration: Histogram<'venue' | 'operation' | 'outcome'>;

  constructor(registry: Registry) {
    const labelNames = ['venue', 'operation', 'outcome'] as const;
    this.calls = new Counter({ name: 'preipo_venue_calls_total', help: 'Calls to the execution venue, by venue, operation and outcome (ok, refused, error).', labelNames, registers: [registry] });
    this.duration = new Histogram({
      name: 'preipo_venue_call_duration_seconds',
      help: 'Duration of calls to the execution venue, by venue, operation and outcome.',
      labelNames,
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
  }

  private record(venue: string, operation: string, outcome: 'ok' | 'refused' | 'error', seconds: number) {
    this.calls.labels(venue, operation, outcome).inc();
    this.duration.labels(venue, operation, outcome).observe(seconds);
  }

  /** The venue, with every operation timed. */
  instrument(venue: Venue): Venue {
    const timed = new WeakMap<Function, Function>();
    const wrappers = new WeakSet<Function>();
    const record = this.record.bind(this);
    return new Proxy(venue, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof property !== 'string' || !OPERATIONS.has(property) || typeof value !== 'function' || wrappers.has(value)) return value;
        let wrapper = timed.get(value);
        if (!wrapper) {
          wrapper = function (this: unknown, ...args: unknown[]) {
            const started = performance.now();
            const seconds = () => (performance.now() - started) / 1000;
            let pending: Promise<unknown>;
            try {
              pending = Promise.resolve((value as (...a: unknown[]) => Promise<unknown>).apply(target, args));
            } catch (error) {
              record(target.name, property, outcomeOf(error), seconds());
              throw error;
            }
            return pending.then(
              (result) => {
                record(target.name, property, 'ok', seconds());
                return result;
              },
              (error) => {
                record(target.name, property, outcomeOf(error), seconds());
                throw error;
              },
            );
          };
          timed.set(value, wrapper);
          wrappers.add(wrapper);
        }
        return wrapper;
      },
    });
  }
}
