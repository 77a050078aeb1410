/**
 * A metric whose values are computed when the registry is read. prom-client's registry asks each
 * metric for `get()` (name, help, type, values) and formats it, the same path its own metrics take;
 * this one answers from whatever `values` reads, with no per-event work in prom-client and no sample
 * at all when there is nothing to report (prom-client's unlabelled Gauge always reports one).
 */
import type { Metric } from 'prom-client';

export interface CollectedValue {
  labels: Record<string, string | number>;
  value: number;
  /** For the series of a histogram: `<name>_bucket`, `_sum`, `_count`. */
  metricName?: string;
}

export function collector(name: string, help: string, type: 'counter' | 'gauge' | 'histogram', values: () => CollectedValue[]): Metric {
  const metric = {
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
    reset: () => {},
  };
  return metric as unknown as Metric;
}
