import './overview.css';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ErrorMessage } from '../components/ErrorMessage.tsx';
import { formatCount, formatDate, formatRate, formatUsd } from '../format.ts';
import { api, type Outputs } from '../trpc.ts';

type Session = Outputs['auth']['session'];
type Account = Outputs['accounts']['me'];

const DAY_MS = 86_400_000;

/** The UTC day and month the overview counts in, and the start of the last 24 hours, fixed when the page opens. */
function periods(now: number) {
  const today = new Date(now).toISOString().slice(0, 10);
  return { today, monthStart: `${today.slice(0, 8)}01`, dayBefore: new Date(now - DAY_MS).toISOString() };
}

/** The account at a glance: who, balance and plan, usage. */
export function Overview({ session }: { session: Session }) {
  const account = useQuery({ queryKey: ['accounts.me'], queryFn: () => api.accounts.me.query() });
  const billing = useQuery({ queryKey: ['billing.get'], queryFn: () => api.billing.get.query() });
  const [{ today, monthStart, dayBefore }] = useState(() => periods(Date.now()));
  // This UTC month per day: its total, and today's bucket.
  const monthInput = { from: monthStart, bucket: 'day' as const };
  const month = useQuery({ queryKey: ['usage.summary', monthInput], queryFn: () => api.usage.summary.query(monthInput) });
  // Prepaid: the cost of the last 24 hours is the rate the balance is spent at.
  const prepaid = account.data?.billingPlan === 'prepaid';
  const lastDayInput = { from: dayBefore, bucket: 'hour' as const };
  const lastDay = useQuery({ queryKey: ['usage.summary', lastDayInput], queryFn: () => api.usage.summary.query(lastDayInput), enabled: prepaid });
  const todayBucket = month.data?.buckets.find((b) => b.start.slice(0, 10) === today);

  return (
    <>
      <h1>Overview</h1>
      {prepaid && account.data && lastDay.data ? <RunOutWarning account={account.data} dayCostUsd={lastDay.data.totals.costUsd} /> : null}
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
              <dd>{formatRate(account.data.costPerRequestUsd)}</dd>
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
          {account.data ? (
            <p className="muted small">
              Your balance is what was credited (your deposits and any credit from the operator) minus what requests cost: every credit is listed on{' '}
              <a href="#/funds">Funds</a>.
            </p>
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

        <section className="card" aria-labelledby="spend-title" aria-busy={month.isPending || (prepaid && lastDay.isPending)}>
          <h2 id="spend-title">Spending</h2>
          <p className="muted small">Days and months in UTC.</p>
          {month.isPending ? <p className="muted">Loading…</p> : null}
          {month.isError ? <ErrorMessage error={month.error} title="This month's usage could not be loaded" /> : null}
          {lastDay.isError ? <ErrorMessage error={lastDay.error} title="The last 24 hours' usage could not be loaded" /> : null}
          {month.data ? (
            <dl className="facts">
              <dt>Requests today</dt>
              <dd className="figure">{formatCount(todayBucket?.requests ?? 0)}</dd>
              <dt>Spent today</dt>
              <dd>{formatUsd(todayBucket?.costUsd ?? 0)}</dd>
              <dt>Spent this month</dt>
              <dd>{formatUsd(month.data.totals.costUsd)}</dd>
              {prepaid && lastDay.data ? (
                <>
                  <dt>Last 24 hours</dt>
                  <dd>{formatUsd(lastDay.data.totals.costUsd)}</dd>
                </>
              ) : null}
            </dl>
          ) : null}
          <p className="small">
            <a href="#/usage">See usage by day, route and key</a>
          </p>
        </section>
      </div>
    </>
  );
}

/**
 * Prepaid: a warning when, spending as fast as in the last 24 hours, the balance is gone within a day
 * (API calls are then refused with 402 until funds arrive).
 */
function RunOutWarning({ account, dayCostUsd }: { account: Account; dayCostUsd: number }) {
  const balance = account.balanceUsd;
  if (!(dayCostUsd > 0) || balance >= dayCostUsd) return null;
  const hours = (balance / dayCostUsd) * 24;
  const lasts = hours < 1 ? 'less than an hour' : `about ${Math.round(hours)} ${Math.round(hours) === 1 ? 'hour' : 'hours'}`;
  return (
    <div className="notice notice-warning overview-warning" role="status" aria-labelledby="runout-title">
      <p className="notice-title" id="runout-title">
        Your balance runs out within a day
      </p>
      {balance < account.costPerRequestUsd ? (
        <p>
          Your balance of {formatUsd(balance)} no longer covers a request ({formatRate(account.costPerRequestUsd)} each): your API keys are refused (HTTP 402) until you
          add funds. In the last 24 hours you spent {formatUsd(dayCostUsd)}.
        </p>
      ) : (
        <p>
          At the last 24 hours' rate of {formatUsd(dayCostUsd)}/day your balance of {formatUsd(balance)} lasts {lasts}. After that your API keys are refused (HTTP 402) until
          you add funds.
        </p>
      )}
      <p>
        <a href="#/funds">Add funds</a>
      </p>
    </div>
  );
}
