/** A user's positions by status, valued live at the bids; one opens into its bands and its sale. */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { formatDate, formatPercent, formatShares, formatSignedUsd, formatUsd, pnlClass } from '../../format.ts';
import { forUser, type Outputs } from '../../trpc.ts';
import { LIVE_MS, useNames } from './events.ts';
import { PositionDetail } from './PositionDetail.tsx';

type Status = 'open' | 'closed' | 'settled' | 'all';
type Position = Outputs['positions']['list']['positions'][number];

const STATUSES: { value: Status; label: string }[] = [
  { value: 'open', label: 'Open' },
  { value: 'closed', label: 'Closed' },
  { value: 'settled', label: 'Settled' },
  { value: 'all', label: 'All' },
];


export function Positions({ userId }: { userId: string }) {
  const ids = useId();
  const [status, setStatus] = useState<Status>('open');
  const [openId, setOpenId] = useState<string | null>(null);
  const names = useNames();
  const eventName = names.event;
  const positions = useQuery({
    queryKey: ['positions.list', userId, status],
    queryFn: () => forUser(userId).positions.list.query({ status, limit: 100 }),
    refetchInterval: LIVE_MS,
    placeholderData: keepPreviousData,
  });
  const rows = positions.data?.positions ?? [];
  const totals = rows.reduce((s, p) => ({ value: s.value + p.currentValue, cost: s.cost + p.cost, unrealized: s.unrealized + p.unrealizedPnl, realized: s.realized + p.realizedPnl }), { value: 0, cost: 0, unrealized: 0, realized: 0 });

  return (
    <section className="card" aria-labelledby={`${ids}-title`} aria-busy={positions.isPending}>
      <h2 id={`${ids}-title`}>Positions</h2>
      <fieldset className="segmented">
        <legend className="visually-hidden">Which positions</legend>
        {STATUSES.map((s) => (
          <label key={s.value} className={status === s.value ? 'segment segment-active' : 'segment'}>
            <input type="radio" name={`${ids}-status`} value={s.value} checked={status === s.value} onChange={() => setStatus(s.value)} />
            {s.label}
          </label>
        ))}
      </fieldset>
      {positions.isPending ? <p className="muted">Loading…</p> : null}
      {positions.isError ? <ErrorMessage error={positions.error} title="The positions could not be loaded" /> : null}
      {positions.data && rows.length === 0 ? <p>No {status === 'all' ? '' : `${status} `}positions.</p> : null}
      {rows.length > 0 ? (
        <>
          {positions.data && positions.data.total > rows.length ? (
            <p className="muted small">
              The newest {rows.length} of {positions.data.total} positions, and their totals.
            </p>
          ) : null}
          <dl className="facts facts-inline">
            <dt>Value at the bids</dt>
            <dd className="figure">{formatUsd(totals.value)}</dd>
            <dt>Cost basis</dt>
            <dd>{formatUsd(totals.cost)}</dd>
            <dt>Unrealized P&amp;L</dt>
            <dd className={pnlClass(totals.unrealized)}>{formatSignedUsd(totals.unrealized)}</dd>
            <dt>Realized P&amp;L</dt>
            <dd className={pnlClass(totals.realized)}>{formatSignedUsd(totals.realized)}</dd>
          </dl>
          <table className="table table-stack table-pairs">
            <caption className="visually-hidden">Positions of {userId}, valued at the current bids</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Side</th>
                <th scope="col">Status</th>
                <th scope="col" className="num">Units</th>
                <th scope="col" className="num">Cost</th>
                <th scope="col" className="num">Value</th>
                <th scope="col" className="num">Unrealized P&amp;L</th>
                <th scope="col" className="num">Realized P&amp;L</th>
                <th scope="col">Opened</th>
                <th scope="col">
                  <span className="visually-hidden">Details</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((p) => (
                <PositionRow key={p.id} position={p} name={eventName(p.eventId)} outcome={names.outcome(p.eventId)} open={openId === p.id} onToggle={() => setOpenId(openId === p.id ? null : p.id)} />
              ))}
            </tbody>
          </table>
        </>
      ) : null}
      {openId ? (
        <PositionDetail
          key={openId}
          userId={userId}
          positionId={openId}
          eventName={eventName}
          outcome={names.outcome}
          onClose={() => {
            // Focus goes back to the button that opened it, not to the page's top.
            document.getElementById(detailsButtonId(openId))?.focus();
            setOpenId(null);
          }}
        />
      ) : null}
    </section>
  );
}

const detailsButtonId = (positionId: string) => `details-${positionId}`;

function PositionRow({ position: p, name, outcome, open, onToggle }: { position: Position; name: string; outcome: string | null; open: boolean; onToggle: () => void }) {
  return (
    <tr>
      <th scope="row" data-label="Event">
        {name}
      </th>
      <td data-label="Side">{p.side}</td>
      <td data-label="Status">
        <span className={`badge badge-position-${p.status}`}>{p.status[0]!.toUpperCase() + p.status.slice(1)}</span>
        {outcome ? (
          <>
            {' '}
            <span className="small">{outcome}</span>
          </>
        ) : null}
      </td>
      <td data-label="Units" className="num">
        {formatShares(p.size)}
      </td>
      <td data-label="Cost" className="num">
        {formatUsd(p.cost)}
      </td>
      <td data-label="Value" className="num">
        {formatUsd(p.currentValue)}
      </td>
      <td data-label="Unrealized P&L" className={`num ${pnlClass(p.unrealizedPnl)}`}>
        {formatSignedUsd(p.unrealizedPnl)} ({formatPercent(p.unrealizedPnlPercent)})
      </td>
      <td data-label="Realized P&L" className={`num ${pnlClass(p.realizedPnl)}`}>
        {formatSignedUsd(p.realizedPnl)}
      </td>
      <td data-label="Opened">{formatDate(p.createdAt)}</td>
      <td data-label="Details" className="cell-actions">
        <button id={detailsButtonId(p.id)} type="button" className="button button-secondary" aria-expanded={open} aria-label={`${open ? 'Hide' : 'Details of'} ${name} ${p.side} position`} onClick={onToggle}>
          {open ? 'Hide' : 'Details'}
        </button>
      </td>
    </tr>
  );
}
