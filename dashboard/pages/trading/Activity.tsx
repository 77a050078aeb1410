/** A user's orders, trade history and settlements: the newest of each, with the history's and settlements' summaries. */
import { useQuery } from '@tanstack/react-query';
import { useId } from 'react';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { formatDate, formatShares, formatSignedUsd, formatUnitCost, formatUsd, pnlClass } from '../../format.ts';
import { forUser } from '../../trpc.ts';
import { PhoneFolded, useCompact } from './compact.tsx';
import { LIVE_MS, useNames } from './events.ts';

const LATEST = 25;
export function Activity({ userId }: { userId: string }) {
  return (
    <>
      <Orders userId={userId} />
      <History userId={userId} />
      <Settlements userId={userId} />
    </>
  );
}

function Orders({ userId }: { userId: string }) {
  const ids = useId();
  const names = useNames();
  const orders = useQuery({ queryKey: ['orders.list', userId], queryFn: () => forUser(userId).orders.list.query({ limit: LATEST }), refetchInterval: LIVE_MS });
  const rows = orders.data?.orders ?? [];
  const { shown, more } = useCompact(rows, 'orders');
  return (
    <section className="card" aria-labelledby={`${ids}-title`} aria-busy={orders.isPending}>
      <h2 id={`${ids}-title`}>Orders</h2>
      {orders.isError ? <ErrorMessage error={orders.error} title="The orders could not be loaded" /> : null}
      {orders.data && rows.length === 0 ? <p>No orders yet.</p> : null}
      {rows.length ? (
        <>
          <PhoneFolded what={`the latest ${rows.length} orders`}>
            <p className="muted small">
              The latest {rows.length} of {orders.data!.total}.
            </p>
            <table className="table table-stack table-pairs">
              <caption className="visually-hidden">Latest orders</caption>
              <thead>
                <tr>
                  <th scope="col">Placed</th>
                  <th scope="col">Band</th>
                  <th scope="col">Side</th>
                  <th scope="col">For</th>
                  <th scope="col" className="num">Filled</th>
                  <th scope="col" className="num">Price</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((o) => (
                  <tr key={o.id}>
                    <th scope="row" data-label="Placed">
                      {formatDate(o.createdAt)}
                    </th>
                    <td data-label="Band">{names.band(o.bandId)}</td>
                    <td data-label="Side">{o.side}</td>
                    <td data-label="For">{o.purpose === 'open' ? 'Buy' : o.purpose === 'close' ? 'Sale' : 'Unwinding a failed buy'}</td>
                    <td data-label="Filled" className="num">
                      {formatShares(o.filled)} of {formatShares(o.size)}
                    </td>
                    <td data-label="Price" className="num">
                      {formatUnitCost(o.price)}
                    </td>
                    <td data-label="Status">
                      {o.status}
                      {o.reason ? <span className="muted small"> ({o.reason})</span> : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {more}
          </PhoneFolded>
        </>
      ) : null}
    </section>
  );
}

function History({ userId }: { userId: string }) {
  const ids = useId();
  const names = useNames();
  const eventName = names.event;
  const history = useQuery({ queryKey: ['orders.history', userId], queryFn: () => forUser(userId).orders.history.query({ limit: LATEST }), refetchInterval: LIVE_MS });
  const rows = history.data?.trades ?? [];
  const { shown, more } = useCompact(rows, 'trades');
  const summary = history.data?.summary;
  return (
    <section className="card" aria-labelledby={`${ids}-title`} aria-busy={history.isPending}>
      <h2 id={`${ids}-title`}>Trade history</h2>
      {history.isError ? <ErrorMessage error={history.error} title="The trade history could not be loaded" /> : null}
      {summary ? (
        <dl className="facts facts-inline">
          <dt>Trades</dt>
          <dd>{summary.totalTrades}</dd>
          <dt>Volume</dt>
          <dd>{formatUsd(summary.totalVolume)}</dd>
          <dt>Fees</dt>
          <dd>{formatUsd(summary.totalFees)}</dd>
          <dt>Realized P&amp;L</dt>
          <dd className={pnlClass(summary.realizedPnl)}>{formatSignedUsd(summary.realizedPnl)}</dd>
        </dl>
      ) : null}
      {history.data && rows.length === 0 ? <p>No trades yet.</p> : null}
      {rows.length ? (
        <PhoneFolded what={`the latest ${rows.length} trades`}>
          <table className="table table-stack table-pairs">
            <caption className="visually-hidden">Latest trades</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Event</th>
                <th scope="col">Action</th>
                <th scope="col" className="num">Shares</th>
                <th scope="col" className="num">Amount</th>
                <th scope="col" className="num">Realized P&amp;L</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((t) => (
                <tr key={t.id}>
                  <th scope="row" data-label="Time">
                    {formatDate(t.timestamp)}
                  </th>
                  <td data-label="Event">
                    {eventName(t.eventId)} {t.side}
                  </td>
                  <td data-label="Action">{t.action === 'BUY' ? 'Bought' : t.action === 'SELL' ? 'Sold' : 'Settled'}</td>
                  <td data-label="Shares" className="num">
                    {formatShares(t.shares)}
                  </td>
                  <td data-label="Amount" className="num">
                    {formatUsd(t.amount)}
                  </td>
                  <td data-label="Realized P&L" className={`num ${pnlClass(t.realizedPnl)}`}>
                    {t.action === 'BUY' ? '—' : formatSignedUsd(t.realizedPnl)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {more}
        </PhoneFolded>
      ) : null}
    </section>
  );
}

function Settlements({ userId }: { userId: string }) {
  const ids = useId();
  const names = useNames();
  const eventName = names.event;
  const settlements = useQuery({ queryKey: ['settlements.list', userId], queryFn: () => forUser(userId).settlements.list.query({ limit: LATEST }), refetchInterval: 30_000 });
  const rows = settlements.data?.settlements ?? [];
  const { shown, more } = useCompact(rows, 'settlements');
  const summary = settlements.data?.summary;
  return (
    <section className="card" aria-labelledby={`${ids}-title`} aria-busy={settlements.isPending}>
      <h2 id={`${ids}-title`}>Settlements</h2>
      {settlements.isError ? <ErrorMessage error={settlements.error} title="The settlements could not be loaded" /> : null}
      {summary && rows.length ? (
        <dl className="facts facts-inline">
          <dt>Settled positions</dt>
          <dd>{summary.totalSettlements}</dd>
          <dt>Paid out</dt>
          <dd>{formatUsd(summary.totalProceeds)}</dd>
          <dt>Realized P&amp;L</dt>
          <dd className={pnlClass(summary.realizedPnl)}>{formatSignedUsd(summary.realizedPnl)}</dd>
          <dt>Awaiting payment</dt>
          <dd>{summary.unpaid}</dd>
        </dl>
      ) : null}
      {settlements.data && rows.length === 0 ? <p>No position has settled yet: positions settle when their event resolves.</p> : null}
      {rows.length ? (
        <PhoneFolded what={`the ${rows.length} settlements`}>
          <table className="table table-stack table-pairs">
            <caption className="visually-hidden">Settlements</caption>
            <thead>
              <tr>
                <th scope="col">Settled</th>
                <th scope="col">Event</th>
                <th scope="col">Outcome</th>
                <th scope="col" className="num">Proceeds</th>
                <th scope="col" className="num">Realized P&amp;L</th>
                <th scope="col">Paid</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((s) => (
                <tr key={s.id}>
                  <th scope="row" data-label="Settled">
                    {formatDate(s.settledAt)}
                  </th>
                  <td data-label="Event">
                    {eventName(s.eventId)} {s.side}
                  </td>
                  <td data-label="Outcome">{s.outcome === 'voided' ? 'Voided: every share paid $0.50' : `Resolved: ${s.winningBandLabel ?? s.winningBandId}`}</td>
                  <td data-label="Proceeds" className="num">
                    {formatUsd(s.proceeds)}
                  </td>
                  <td data-label="Realized P&L" className={`num ${pnlClass(s.realizedPnl)}`}>
                    {formatSignedUsd(s.realizedPnl)}
                  </td>
                  <td data-label="Paid">{s.paid ? `Yes, ${formatDate(s.paidAt)}` : `Not yet${s.unpaidReason ? ` (${s.unpaidReason})` : ''}`}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {more}
        </PhoneFolded>
      ) : null}
    </section>
  );
}
