/**
 * An event's valuation over time (GET /trading/valuation/history): the implied valuation and the
 * LONG/SHORT unit costs at the default floors, per candle, as a chart and a table. The current,
 * unfinished candle is the last point, marked as such in the table.
 */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { Chart } from '../../components/Chart.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { formatBillions, formatBucket, formatUnitCost } from '../../format.ts';
import { api } from '../../trpc.ts';

type Interval = '1m' | '1h' | '1d';
const RANGES: { interval: Interval; limit: number; label: string }[] = [
  { interval: '1m', limit: 120, label: 'Last 2 hours, by minute' },
  { interval: '1h', limit: 168, label: 'Last 7 days, by hour' },
  { interval: '1d', limit: 180, label: 'Last 180 days, by day' },
];

const UNIT: Record<Interval, 'minute' | 'hour' | 'day'> = { '1m': 'minute', '1h': 'hour', '1d': 'day' };

export function ValuationHistory({ eventId, eventName }: { eventId: string; eventName: string }) {
  const ids = useId();
  const [interval, setPeriod] = useState<Interval>('1h');
  const range = RANGES.find((r) => r.interval === interval)!;
  const history = useQuery({
    queryKey: ['marketHistory.valuationHistory', eventId, interval],
    queryFn: () => api.marketHistory.valuationHistory.query({ eventSlug: eventId, interval, limit: range.limit }),
    refetchInterval: 60_000,
    placeholderData: keepPreviousData,
  });
  const candles = history.data?.candles ?? [];
  const labels = candles.map((c) => formatBucket(c.start, UNIT[interval]));

  return (
    <section className="markets-history" aria-labelledby={`${ids}-title`} aria-busy={history.isPending}>
      <h3 id={`${ids}-title`}>Valuation over time</h3>
      <div className="field">
        <label htmlFor={`${ids}-range`}>Period</label>
        <select id={`${ids}-range`} value={interval} onChange={(e) => setPeriod(e.target.value as Interval)}>
          {RANGES.map((r) => (
            <option key={r.interval} value={r.interval}>
              {r.label}
            </option>
          ))}
        </select>
      </div>
      {history.isError ? <ErrorMessage error={history.error} title="The valuation history could not be loaded" /> : null}
      {history.data && candles.length === 0 ? <p className="muted">No history recorded for this period yet: the service records every snapshot from now on.</p> : null}
      {candles.length ? (
        <>
          <Chart
            kind="line"
            label={`Valuation of ${eventName} over time: implied valuation in billions of USD, and the LONG and SHORT unit costs`}
            labels={labels}
            series={[
              { label: 'Implied valuation ($B)', data: candles.map((c) => c.impliedValuation?.close ?? null) },
              { label: 'LONG cost', data: candles.map((c) => c.longCost.close), axis: 'right' },
              { label: 'SHORT cost', data: candles.map((c) => c.shortCost.close), axis: 'right' },
            ]}
            format={(v) => formatBillions(v)}
            formatRight={(v) => formatUnitCost(v)}
            beginAtZero={false}
          />
          <details>
            <summary>The numbers ({candles.length} candles, UTC)</summary>
            <table className="table">
              <caption className="visually-hidden">Valuation candles of {eventName}</caption>
              <thead>
                <tr>
                  <th scope="col">Start (UTC)</th>
                  <th scope="col" className="num">Implied valuation (close)</th>
                  <th scope="col" className="num">LONG cost (close)</th>
                  <th scope="col" className="num">SHORT cost (close)</th>
                </tr>
              </thead>
              <tbody>
                {candles.map((c) => (
                  <tr key={c.start}>
                    <th scope="row">
                      {formatBucket(c.start, UNIT[interval])}
                      {c.final ? null : <span className="muted small"> (in progress)</span>}
                    </th>
                    <td className="num">{formatBillions(c.impliedValuation?.close)}</td>
                    <td className="num">{formatUnitCost(c.longCost.close)}</td>
                    <td className="num">{formatUnitCost(c.shortCost.close)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
        </>
      ) : null}
    </section>
  );
}
