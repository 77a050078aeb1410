import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { CopyButton } from '../components/CopyButton.tsx';
import { ErrorMessage } from '../components/ErrorMessage.tsx';
import { QrCode } from '../components/QrCode.tsx';
import { formatDate, formatUsd, shortHex } from '../format.ts';
import { api, type Outputs } from '../trpc.ts';

type Deposit = Outputs['deposits']['list']['deposits'][number];

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
      for (const key of ['deposits.list', 'accounts.me', 'billing.get']) void queryClient.invalidateQueries({ queryKey: [key] });
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
