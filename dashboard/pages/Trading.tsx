/**
 * Trading: the positions of the account's trading users — open, closed, settled — valued
 * live at the bids, each with its bands as a chart; selling (with the sale's quote and its price
 * protection shown before confirming); orders, trade history and settlements.
 *
 * Trading happens for a user (x-user-id): an account's program trades for its own users. The page
 * lists them (GET /trading/users) and shows one at a time; every call carries that user's id.
 */
import { useQuery } from '@tanstack/react-query';
import { useEffect, useId, useState } from 'react';
import { ErrorMessage } from '../components/ErrorMessage.tsx';
import { formatDate } from '../format.ts';
import { api } from '../trpc.ts';
import { Activity } from './trading/Activity.tsx';
import { PortfolioHistory } from './trading/PortfolioHistory.tsx';
import { Positions } from './trading/Positions.tsx';
import './trading.css';

export function Trading() {
  const ids = useId();
  const users = useQuery({ queryKey: ['tradingUsers.list'], queryFn: () => api.tradingUsers.list.query({}), refetchInterval: 30_000 });
  const [chosen, setChosen] = useState<string | null>(null);
  const list = users.data?.users ?? [];
  // The first user shown stays chosen: the list is re-read (most recently active first), and a program
  // trading for someone else meanwhile must not switch the page under the customer.
  useEffect(() => {
    if (chosen === null && list[0]) setChosen(list[0].userId);
  }, [chosen, list]);
  const userId = chosen ?? list[0]?.userId ?? null;
  const options = userId && !list.some((u) => u.userId === userId) ? [{ userId, openPositions: 0, positions: 0, lastActivityAt: null }, ...list] : list;

  return (
    <>
      <h1>Trading</h1>
      <section className="card" aria-labelledby={`${ids}-title`} aria-busy={users.isPending}>
        <h2 id={`${ids}-title`}>Trading user</h2>
        {users.isPending ? <p className="muted">Loading…</p> : null}
        {users.isError ? <ErrorMessage error={users.error} title="The trading users could not be loaded" /> : null}
        {users.data && list.length === 0 ? (
          <p>
            No trading yet. Your programs trade for their users through the API (<code>POST /api/trading/buy</code> with your key and an{' '}
            <code>x-user-id</code>); their positions appear here. See <a href="/docs">the API reference</a>.
          </p>
        ) : null}
        {userId ? (
          <div className="field">
            <label htmlFor={`${ids}-user`}>Show the positions of</label>
            <select id={`${ids}-user`} value={userId} onChange={(e) => setChosen(e.target.value)} aria-describedby={`${ids}-user-help`}>
              {options.map((u) => (
                <option key={u.userId} value={u.userId}>
                  {u.userId} ({u.openPositions} open of {u.positions})
                </option>
              ))}
            </select>
            <p id={`${ids}-user-help`} className="muted small">
              The <code>x-user-id</code> your programs trade for. Last active {formatDate(options.find((u) => u.userId === userId)?.lastActivityAt)}.
            </p>
          </div>
        ) : null}
      </section>
      {userId ? (
        <>
          {/* Keyed by user: nothing of one user's page (an open position, a sale) survives a switch. */}
          <PortfolioHistory key={`portfolio-${userId}`} userId={userId} />
          <Positions key={`positions-${userId}`} userId={userId} />
          <Activity key={`activity-${userId}`} userId={userId} />
        </>
      ) : null}
    </>
  );
}
