import { useQuery } from '@tanstack/react-query';
import { ErrorMessage } from '../components/ErrorMessage.tsx';
import { formatCount, formatDate, formatUsd } from '../format.ts';
import { api, type Outputs } from '../trpc.ts';

type Session = Outputs['auth']['session'];

/** The account at a glance: who, balance and plan, usage. */
export function Overview({ session }: { session: Session }) {
  const account = useQuery({ queryKey: ['accounts.me'], queryFn: () => api.accounts.me.query() });
  const billing = useQuery({ queryKey: ['billing.get'], queryFn: () => api.billing.get.query() });

  return (
    <>
      <h1>Overview</h1>
      <div className="grid">
        <section className="card" aria-labelledby="account-title">
          <h2 id="account-title">Account</h2>
          <dl className="facts">
            <dt>Account id</dt>
            <dd>
              <code className="break">{session.accountId}</code>
            </dd>
            <dt>Signed in as</dt>
            <dd>
              <code className="break">{session.address}</code>
            </dd>
            <dt>Session ends</dt>
            <dd>{formatDate(session.expiresAt)}</dd>
          </dl>
          <h3>Wallets</h3>
          <ul className="plain-list">
            {session.wallets.map((wallet) => (
              <li key={wallet}>
                <code className="break">{wallet}</code>
              </li>
            ))}
          </ul>
        </section>

        <section className="card" aria-labelledby="balance-title" aria-busy={account.isPending}>
          <h2 id="balance-title">Balance and plan</h2>
          {account.isPending ? <p className="muted">Loading…</p> : null}
          {account.isError ? <ErrorMessage error={account.error} title="The account could not be loaded" /> : null}
          {account.data ? (
            <dl className="facts">
              <dt>Balance</dt>
              <dd className="figure">{formatUsd(account.data.balanceUsd)}</dd>
              <dt>Plan</dt>
              <dd>{account.data.billingPlan === 'metered' ? 'Metered (billed monthly)' : 'Prepaid (paid from the balance)'}</dd>
              <dt>Cost per request</dt>
              <dd>{formatUsd(account.data.costPerRequestUsd)}</dd>
              {account.data.billingPlan === 'metered' ? (
                <>
                  <dt>Metered this month</dt>
                  <dd>
                    {formatUsd(account.data.meteredThisMonthUsd)}
                    {account.data.monthlyCapUsd !== null ? <> of {formatUsd(account.data.monthlyCapUsd)} monthly cap</> : null}
                  </dd>
                </>
              ) : null}
              <dt>Customer since</dt>
              <dd>{formatDate(account.data.createdAt)}</dd>
            </dl>
          ) : null}
        </section>

        <section className="card" aria-labelledby="usage-title" aria-busy={billing.isPending}>
          <h2 id="usage-title">Usage</h2>
          {billing.isPending ? <p className="muted">Loading…</p> : null}
          {billing.isError ? <ErrorMessage error={billing.error} title="Usage could not be loaded" /> : null}
          {billing.data ? (
            <dl className="facts">
              <dt>Requests</dt>
              <dd className="figure">{formatCount(billing.data.usageCount)}</dd>
              <dt>Cost of requests</dt>
              <dd>{formatUsd(billing.data.usageCostUsd)}</dd>
              <dt>Deposited</dt>
              <dd>{formatUsd(billing.data.depositedUsd)}</dd>
              {billing.data.pendingDepositsUsd > 0 ? (
                <>
                  <dt>Deposits pending</dt>
                  <dd>{formatUsd(billing.data.pendingDepositsUsd)}</dd>
                </>
              ) : null}
            </dl>
          ) : null}
        </section>
      </div>
    </>
  );
}
