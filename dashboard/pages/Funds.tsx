import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { CopyButton } from '../components/CopyButton.tsx';
import { ErrorMessage } from '../components/ErrorMessage.tsx';
import { QrCode } from '../components/QrCode.tsx';
import { formatDate, formatUsd, shortHex } from '../format.ts';
import { api, type Outputs } from '../trpc.ts';

type Deposit = Outputs['deposits']['list']['deposits'][number];
type Credit = Outputs['balanceHistory']['list']['entries'][number];

const HISTORY_PAGE = 20;

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

const STATUS_TEXT: Record<Deposit['status'], string> = {
  pending: 'Pending (waiting for a final block)',
  credited: 'Credited',
  unclaimed: 'Unclaimed',
  dropped: 'Dropped (removed by a chain reorganisation)',
};

/** Block explorers of the chains the service takes deposits on. */
const EXPLORERS: Record<number, string> = { 137: 'https://polygonscan.com/tx/', 80002: 'https://amoy.polygonscan.com/tx/' };

export function Funds() {
  const list = useQuery({ queryKey: ['deposits.list'], queryFn: () => api.deposits.list.query({ limit: 100 }) });

  return (
    <>
      <h1>Funds</h1>
      <section className="card" aria-labelledby="deposit-title" aria-busy={list.isPending}>
        <h2 id="deposit-title">Deposit</h2>
        {list.isPending ? <p className="muted">Loading…</p> : null}
        {list.isError ? <ErrorMessage error={list.error} title="Deposits could not be loaded" /> : null}
        {list.data && !list.data.depositAddress ? <p>Deposits are not enabled on this server.</p> : null}
        {list.data?.depositAddress ? <DepositAddress address={list.data.depositAddress} /> : null}
      </section>

      {list.data?.depositAddress ? <ClaimForm /> : null}

      <BalanceHistory />

      <section className="card" aria-labelledby="deposits-title">
        <h2 id="deposits-title">Your deposits</h2>
        {list.data && list.data.deposits.length === 0 ? <p>No deposits yet.</p> : null}
        {list.data && list.data.deposits.length > 0 ? <DepositTable deposits={list.data.deposits} /> : null}
        {list.data && list.data.total > list.data.deposits.length ? (
          <p className="muted small">
            Showing the newest {list.data.deposits.length} of {list.data.total}.
          </p>
        ) : null}
      </section>
    </>
  );
}

function DepositAddress({ address }: { address: string }) {
  return (
    <div className="deposit">
      <QrCode text={address} label={`QR code of the deposit address ${address}`} />
      <div className="deposit-text">
        <p>
          Send USDC (or USDC.e) on Polygon to this address <strong>from a wallet of your account</strong>. It is credited once its block is final, usually within
          minutes.
        </p>
        <dl className="facts">
          <dt>Deposit address</dt>
          <dd>
            <code className="break">{address}</code>
          </dd>
        </dl>
        <CopyButton text={address} label="Copy address" />
      </div>
    </div>
  );
}

function ClaimForm() {
  const queryClient = useQueryClient();
  const ids = useId();
  const [hash, setHash] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const claim = useMutation({
    mutationFn: (txHash: string) => api.deposits.claim.mutate({ txHash }),
    onSuccess: () => {
      setHash('');
      for (const key of ['deposits.list', 'accounts.me', 'billing.get', 'balanceHistory.list']) void queryClient.invalidateQueries({ queryKey: [key] });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const txHash = hash.trim();
    if (!TX_HASH.test(txHash)) {
      setProblem('A transaction hash is 0x followed by 64 hexadecimal digits.');
      return;
    }
    setProblem(null);
    claim.mutate(txHash);
  };
  return (
    <section className="card" aria-labelledby={`${ids}-title`}>
      <h2 id={`${ids}-title`}>Claim a transfer</h2>
      <p>Sent a transfer that is not listed below yet? Give its transaction hash to have it checked now.</p>
      <form className="form" onSubmit={submit}>
        <div className="field">
          <label htmlFor={`${ids}-hash`}>Transaction hash</label>
          <input
            id={`${ids}-hash`}
            className="mono"
            name="txHash"
            type="text"
            required
            spellCheck={false}
            autoComplete="off"
            placeholder="0x…"
            value={hash}
            onChange={(e) => setHash(e.target.value)}
            aria-invalid={problem ? true : undefined}
            aria-describedby={problem ? `${ids}-hash-error` : undefined}
          />
          {problem ? (
            <p id={`${ids}-hash-error`} className="field-error small">
              {problem}
            </p>
          ) : null}
        </div>
        <div className="actions">
          <button type="submit" className="button button-primary" disabled={claim.isPending}>
            {claim.isPending ? 'Checking…' : 'Claim'}
          </button>
        </div>
        {claim.isError ? <ErrorMessage error={claim.error} title="The claim did not go through" /> : null}
        {claim.data ? (
          <div className="notice notice-success" role="status">
            {claim.data.deposits.length === 0
              ? 'No deposit to this address was found in that transaction.'
              : claim.data.deposits.map((d) => (
                  <p key={d.id}>
                    {formatUsd(d.amount)}: {STATUS_TEXT[d.status]}
                  </p>
                ))}
          </div>
        ) : null}
      </form>
    </section>
  );
}

function DepositTable({ deposits }: { deposits: Deposit[] }) {
  return (
    <table className="table table-stack">
      <caption className="visually-hidden">Deposits, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Date</th>
          <th scope="col">Amount</th>
          <th scope="col">Status</th>
          <th scope="col">Transaction</th>
          <th scope="col">From</th>
          <th scope="col">Credited</th>
        </tr>
      </thead>
      <tbody>
        {deposits.map((d) => {
          const explorer = EXPLORERS[d.chainId];
          return (
            <tr key={d.id}>
              <td data-label="Date">{formatDate(d.createdAt)}</td>
              <td data-label="Amount" className="num">
                {formatUsd(d.amount)}
              </td>
              <td data-label="Status">
                <span className={`badge badge-${d.status}`}>{STATUS_TEXT[d.status]}</span>
              </td>
              <td data-label="Transaction">
                {explorer ? (
                  <a href={`${explorer}${d.txHash}`} target="_blank" rel="noopener noreferrer" title={d.txHash}>
                    <code>{shortHex(d.txHash)}</code>
                    <span className="visually-hidden"> (full hash {d.txHash}, opens the block explorer in a new tab)</span>
                  </a>
                ) : (
                  <code title={d.txHash}>{shortHex(d.txHash)}</code>
                )}
              </td>
              <td data-label="From">
                <code title={d.from}>{shortHex(d.from)}</code>
              </td>
              <td data-label="Credited">{d.creditedAt ? formatDate(d.creditedAt) : '—'}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/**
 * What the balance is made of (GET /api/accounts/balance-history): every credit — a deposit or the
 * operator's — newest first, with what was credited and spent in all. Read once when the page is shown
 * (billed like an API call, at the standard rate); older credits on request. Not read when the balance
 * does not cover a request (it would be refused): the page then says so instead.
 */
function BalanceHistory() {
  const ids = useId();
  const account = useQuery({ queryKey: ['accounts.me'], queryFn: () => api.accounts.me.query() });
  const me = account.data;
  const covered = me ? me.billingPlan === 'metered' || me.balanceUsd >= me.costPerRequestUsd : false;
  const history = useInfiniteQuery({
    queryKey: ['balanceHistory.list'],
    queryFn: ({ pageParam }) => api.balanceHistory.list.query({ limit: HISTORY_PAGE, ...(pageParam ? { cursor: pageParam } : {}) }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    enabled: covered,
    refetchOnWindowFocus: false,
  });
  const pages = history.data?.pages ?? [];
  const totals = pages[0]?.totals;
  const credits = pages.flatMap((p) => p.entries);
  return (
    <section className="card" aria-labelledby={`${ids}-title`} aria-busy={account.isPending || (covered && history.isPending)}>
      <h2 id={`${ids}-title`}>Your balance, explained</h2>
      {me && !covered ? (
        <p>
          Your balance of {formatUsd(me.balanceUsd)} does not cover a request, and reading its history is billed like an API call: add funds (above) to see every credit and what
          was spent.
        </p>
      ) : null}
      {history.isError ? <ErrorMessage error={history.error} title="The balance history could not be loaded" /> : null}
      {totals ? (
        <dl className="facts facts-inline">
          <dt>Credited</dt>
          <dd>{formatUsd(totals.creditedUsd)}</dd>
          <dt>Spent on requests</dt>
          <dd>{formatUsd(totals.spentUsd)}</dd>
          <dt>Balance</dt>
          <dd className="figure">{formatUsd(totals.balanceUsd)}</dd>
        </dl>
      ) : null}
      {totals ? (
        <p className="muted small">
          Credited (your deposits and the operator's credits) minus spent is your balance{me?.billingPlan === 'metered' ? ' (metered usage is invoiced, not taken from it)' : ''}. What
          was spent is itemised on the <a href="#/usage">Usage</a> page. Reading this is billed like an API call.
        </p>
      ) : null}
      {history.data && credits.length === 0 ? <p>No credits yet.</p> : null}
      {credits.length ? (
        <table className="table table-stack">
          <caption className="visually-hidden">Credits to your balance</caption>
          <thead>
            <tr>
              <th scope="col">Credited</th>
              <th scope="col">Kind</th>
              <th scope="col" className="num">Amount</th>
              <th scope="col">Reference</th>
            </tr>
          </thead>
          <tbody>
            {credits.map((c: Credit) => (
              <tr key={c.id}>
                <th scope="row" data-label="Credited">
                  {formatDate(c.createdAt)}
                </th>
                <td data-label="Kind">{c.kind === 'deposit' ? 'Deposit' : 'Operator credit'}</td>
                <td data-label="Amount" className="num">
                  {formatUsd(c.amountUsd)}
                </td>
                <td data-label="Reference">
                  <code className="break" title={c.reference}>
                    {c.kind === 'deposit' ? shortHex(c.reference.split(':')[2] ?? c.reference) : c.reference}
                  </code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {history.hasNextPage ? (
        <button type="button" className="button button-secondary" onClick={() => void history.fetchNextPage()} disabled={history.isFetchingNextPage}>
          {history.isFetchingNextPage ? 'Loading…' : 'Show older credits'}
        </button>
      ) : null}
    </section>
  );
}
