/**
 * Trading (issue #18): the positions of the account's trading users — open, closed, settled — valued
 * live at the bids, each with its bands as a chart; selling (with the sale's quote and its price
 * protection shown before confirming); orders, trade history and settlements.
 *
 * Trading happens for a user (x-user-id): an account's program trades for its own users. The page
 * lists them (GET /trading/users) and shows one at a time; every call carries that user's id.
 */
import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { ErrorMessage } from '../components/ErrorMessage.tsx';
import { formatDate } from '../format.ts';
import { api } from '../trpc.ts';
import { Activity } from './trading/Activity.tsx';
import { Positions } from './trading/Positions.tsx';
import './trading.css';

export function Trading() {
  const ids = useId();
  const users = useQuery({ queryKey: ['tradingUsers.list'], queryFn: () => api.tradingUsers.list.query({}), refetchInterval: 30_000 });
  const [chosen, setChosen] = useState<string | null>(null);
  const list = users.data?.users ?? [];
  const userId = chosen && list.some((u) => u.userId === chosen) ? chosen : (list[0]?.userId ?? null);

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
              {list.map((u) => (
                <option key={u.userId} value={u.userId}>
                  {u.userId} ({u.openPositions} open of {u.positions})
                </option>
              ))}
            </select>
            <p id={`${ids}-user-help`} className="muted small">
              The <code>x-user-id</code> your programs trade for. Last active {formatDate(list.find((u) => u.userId === userId)?.lastActivityAt)}.
            </p>
          </div>
        ) : null}
      </section>
      {userId ? (
        <>
          <Positions userId={userId} />
          <Activity userId={userId} />
        </>
      ) : null}
    </>
  );
}
