/**
 * One position: the tokens it holds (shares, price, value) as a chart and a table, live — its bands'
 * tokens, or a ladder's threshold Yes and No tokens, with what those pay band by band — and its sale.
 */
import { useQuery } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState } from 'react';
import { Chart } from '../../components/Chart.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { formatDate, formatShares, formatSignedUsd, formatUnitCost, formatUsd, pnlClass } from '../../format.ts';
import { forUser } from '../../trpc.ts';
import { LIVE_MS } from './events.ts';
import { SellPanel } from './SellPanel.tsx';
import { PhoneFolded, useCompact } from './compact.tsx';

/** Holdings a phone lists before "Show all" (the chart, on request, has them all). */
const PHONE_HOLDINGS = 2;

interface Props {
  userId: string;
  positionId: string;
  eventName: (eventId: string) => string;
  /** The event's outcome once it no longer trades (then nothing is sold from here). */
  outcome: (eventId: string) => string | null;
  onClose: () => void;
}

export function PositionDetail({ userId, positionId, eventName, outcome, onClose }: Props) {
  const ids = useId();
  const heading = useRef<HTMLHeadingElement>(null);
  // A sale started here stays on screen after the position closes: its answer, or its retry when the
  // answer was lost (the live refresh may show the position closed before the page hears of it).
  const [saleStarted, setSaleStarted] = useState(false);
  const detail = useQuery({ queryKey: ['positions.get', userId, positionId], queryFn: () => forUser(userId).positions.get.query({ id: positionId }), refetchInterval: LIVE_MS });
  useEffect(() => heading.current?.focus(), []);
  const p = detail.data;
  const title = p ? `${eventName(p.eventId)} ${p.side}` : 'Position';
  const bands = (p?.holdings ?? []).map((b) => ({ ...b, name: b.label ?? b.tokenId, value: b.tokens * b.currentPrice }));
  // A ladder position holds threshold tokens: what they pay per band is shown apart.
  const ladder = (p?.holdings ?? []).some((h) => /:(yes|no)$/.test(h.tokenId));
  const { shown: shownBands, more: moreBands } = useCompact(bands, ladder ? 'tokens' : 'bands', PHONE_HOLDINGS);

  return (
    <section className="detail" aria-labelledby={`${ids}-title`} aria-busy={detail.isPending}>
      <div className="detail-head">
        <h3 id={`${ids}-title`} ref={heading} tabIndex={-1}>
          {title} position
        </h3>
        <button type="button" className="button button-secondary" onClick={onClose}>
          Close details
        </button>
      </div>
      {detail.isError ? <ErrorMessage error={detail.error} title="The position could not be loaded" /> : null}
      {p ? (
        <>
          {/* On a phone the figures the position's card shows just above (status, value, P&L, opened) are not repeated here (`in-row`). */}
          <dl className="facts facts-inline">
            <dt className="in-row">Status</dt>
            <dd className="in-row">{p.status}</dd>
            <dt>Entry price per unit</dt>
            <dd>{formatUnitCost(p.entryPrice)}</dd>
            <dt>Price per unit now</dt>
            <dd>{formatUnitCost(p.currentPrice)}</dd>
            <dt className="in-row">Value at the bids</dt>
            <dd className="figure in-row">{formatUsd(p.currentValue)}</dd>
            <dt className="in-row">Unrealized P&amp;L</dt>
            <dd className={`${pnlClass(p.unrealizedPnl)} in-row`}>{formatSignedUsd(p.unrealizedPnl)}</dd>
            <dt className="in-row">Realized P&amp;L</dt>
            <dd className={`${pnlClass(p.realizedPnl)} in-row`}>{formatSignedUsd(p.realizedPnl)}</dd>
            <dt>Floors</dt>
            <dd>
              LONG {p.floorL}, SHORT {p.floorS}
            </dd>
            <dt className="in-row">Opened</dt>
            <dd className="in-row">{formatDate(p.createdAt)}</dd>
            {p.closedAt ? (
              <>
                <dt>Closed</dt>
                <dd>{formatDate(p.closedAt)}</dd>
              </>
            ) : null}
            {p.failureReason ? (
              <>
                <dt>Buy failed</dt>
                <dd>{p.failureReason}</dd>
              </>
            ) : null}
          </dl>
          {bands.some((b) => b.tokens > 0) ? (
            <PhoneFolded what="the chart" detail="of the holdings">
              <Chart
                kind="bar"
                label={`Holdings of the ${title} position: value held per token at the best bid, and the bid price per share`}
                labels={bands.map((b) => b.name)}
                series={[
                  { label: 'Value (USD)', data: bands.map((b) => b.value) },
                  { label: 'Bid per share', data: bands.map((b) => b.currentPrice), kind: 'line', axis: 'right' },
                ]}
                format={(v) => formatUsd(v)}
                formatRight={(v) => formatUnitCost(v)}
              />
            </PhoneFolded>
          ) : null}
          <table className="table table-stack table-pairs">
            <caption>Holdings</caption>
            <thead>
              <tr>
                <th scope="col">{ladder ? 'Token' : 'Band'}</th>
                <th scope="col" className="num">Shares</th>
                <th scope="col" className="num">Paid per share</th>
                <th scope="col" className="num">Bid per share</th>
                <th scope="col" className="num">Value</th>
              </tr>
            </thead>
            <tbody>
              {shownBands.map((b) => (
                <tr key={b.tokenId}>
                  <th scope="row" data-label={ladder ? 'Token' : 'Band'}>
                    {b.name}
                  </th>
                  <td data-label="Shares" className="num">
                    {formatShares(b.tokens)}
                  </td>
                  <td data-label="Paid per share" className="num">
                    {formatUnitCost(b.entryPrice)}
                  </td>
                  <td data-label="Bid per share" className="num">
                    {formatUnitCost(b.currentPrice)}
                  </td>
                  <td data-label="Value" className="num">
                    {formatUsd(b.value)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {moreBands}
          {ladder ? (
            <table className="table table-stack table-pairs">
              <caption>What it pays per band</caption>
              <thead>
                <tr>
                  <th scope="col">If this band wins</th>
                  <th scope="col" className="num">Shares paying $1</th>
                </tr>
              </thead>
              <tbody>
                {p.bands.map((b) => (
                  <tr key={b.bandId}>
                    <th scope="row" data-label="If this band wins">
                      {b.label ?? b.bandId}
                    </th>
                    <td data-label="Shares paying $1" className="num">
                      {formatShares(b.tokens)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
          {p.status === 'open' && outcome(p.eventId) && !saleStarted ? (
            <p className="notice">
              <strong>{outcome(p.eventId)}.</strong> The event no longer trades: this position cannot be sold; it settles when the outcome is published.
            </p>
          ) : p.status === 'open' || saleStarted ? <SellPanel userId={userId} positionId={p.id} title={title} range={p.partialSaleRange} onSaleStarted={() => setSaleStarted(true)} /> : null}
        </>
      ) : null}
    </section>
  );
}
