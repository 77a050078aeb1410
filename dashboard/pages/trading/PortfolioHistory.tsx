/** A user's portfolio over time (GET /trading/portfolio/history): market value and cost basis, and the P&L, by hour or day. */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { Chart } from '../../components/Chart.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { formatBucket, formatSignedUsd, formatUsd } from '../../format.ts';
import { forUser } from '../../trpc.ts';
import { PhoneFolded } from './compact.tsx';

type Interval = '1h' | '1d';

export function PortfolioHistory({ userId }: { userId: string }) {
  const ids = useId();
  const [interval, setPeriod] = useState<Interval>('1h');
  const history = useQuery({
    queryKey: ['portfolio.history', userId, interval],
    queryFn: () => forUser(userId).portfolio.history.query({ interval }),
    refetchInterval: 60_000,
    placeholderData: keepPreviousData,
  });
  const points = history.data?.points ?? [];
  const last = points.at(-1);

  return (
    <section className="card" aria-labelledby={`${ids}-title`} aria-busy={history.isPending}>
      <h2 id={`${ids}-title`}>Portfolio over time</h2>
      <div className="field">
        <label htmlFor={`${ids}-interval`}>Period</label>
        <select id={`${ids}-interval`} value={interval} onChange={(e) => setPeriod(e.target.value === '1d' ? '1d' : '1h')}>
          <option value="1h">Last 7 days, by hour</option>
          <option value="1d">Last year, by day</option>
        </select>
      </div>
      {history.isError ? <ErrorMessage error={history.error} title="The portfolio history could not be loaded" /> : null}
      {last ? (
        <dl className="facts facts-inline">
          <dt>Market value now</dt>
          <dd className="figure">{formatUsd(last.marketValue)}</dd>
          <dt>Realized P&amp;L to date</dt>
          <dd>{formatSignedUsd(last.realizedPnl)}</dd>
          <dt>Unrealized P&amp;L now</dt>
          <dd>{formatSignedUsd(last.unrealizedPnl)}</dd>
        </dl>
      ) : null}
      {points.length > 1 ? (
        <PhoneFolded what="the chart" detail="of the portfolio over time">
          <Chart
            kind="line"
            label={`Portfolio of ${userId} over time: market value at the bids and cost basis, in USD`}
            labels={points.map((p) => formatBucket(p.time, interval === '1d' ? 'day' : 'hour'))}
            series={[
              { label: 'Market value', data: points.map((p) => p.marketValue) },
              { label: 'Cost basis', data: points.map((p) => p.costBasis) },
              { label: 'Realized P&L', data: points.map((p) => p.realizedPnl) },
            ]}
            format={(v) => formatUsd(v)}
          />
        </PhoneFolded>
      ) : null}
    </section>
  );
}
