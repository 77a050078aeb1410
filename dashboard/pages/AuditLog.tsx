import { useInfiniteQuery } from '@tanstack/react-query';
import { useId } from 'react';
import { ErrorMessage } from '../components/ErrorMessage.tsx';
import { formatDate } from '../format.ts';
import { api, type Outputs } from '../trpc.ts';

type Entry = Outputs['auditLog']['list']['entries'][number];

/** What each action says, in words (an action the service adds fails the typecheck here). */
const ACTIONS: Record<Entry['action'], string> = {
  'key.created': 'API key created',
  'key.revoked': 'API key revoked',
  'credentials.stored': 'Venue credentials stored',
  'credentials.deleted': 'Venue credentials deleted',
  'webhook.created': 'Webhook created',
  'webhook.deleted': 'Webhook deleted',
  'webhook.secret_rotated': 'Webhook secret rotated',
  'account.credited': 'Funds added',
  'account.rate_set': 'Price changed',
  'account.plan_set': 'Billing plan changed',
  'event.resolved': 'Event resolved',
  'event.listing_set': 'Event listing changed',
  'session.signed_in': 'Signed in',
  'session.signed_out': 'Signed out',
};

const ACTOR_KINDS: Record<Entry['actor']['kind'], string> = { key: 'API key', session: 'Wallet', operator: 'Operator', system: 'Server' };

const detailOf = (e: Entry) => {
  const d = e.details as Record<string, unknown>;
  if (e.action === 'key.created') return `${String(d.name)} (${String(d.mode)}${d.scopes === 'all' ? '' : `, ${(d.scopes as string[]).join(', ')}`})`;
  if (e.action === 'account.credited') return `$${String(d.amountUsd)}`;
  if (e.action.startsWith('webhook.') && typeof d.url === 'string') return d.url;
  return e.targetId ?? '';
};

/** The account's audit log (GET /api/audit-log), newest first, 20 at a time. */
export function AuditLog() {
  const ids = useId();
  const log = useInfiniteQuery({
    queryKey: ['auditLog.list'],
    queryFn: ({ pageParam }) => api.auditLog.list.query({ limit: 20, ...(pageParam ? { cursor: pageParam } : {}) }),
    initialPageParam: '',
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const entries = log.data?.pages.flatMap((p) => p.entries) ?? [];
  return (
    <section className="card" aria-labelledby={`${ids}-title`} aria-busy={log.isPending}>
      <h2 id={`${ids}-title`}>Security log</h2>
      <p className="muted small">Every change to your keys, credentials, webhooks, funds and sign-ins: who, when and from where. It cannot be edited.</p>
      {log.isPending ? <p className="muted">Loading…</p> : null}
      {log.isError ? <ErrorMessage error={log.error} title="The log could not be loaded" /> : null}
      {log.data && entries.length === 0 ? <p>Nothing recorded yet.</p> : null}
      {entries.length > 0 ? (
        <table className="table table-stack">
          <caption className="visually-hidden">Security log of your account, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">What</th>
              <th scope="col">Detail</th>
              <th scope="col">By</th>
              <th scope="col">From</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.id}>
                <td data-label="When">{formatDate(e.timestamp)}</td>
                <th scope="row" data-label="What">
                  {ACTIONS[e.action]}
                </th>
                <td data-label="Detail" className="break">
                  {detailOf(e)}
                </td>
                <td data-label="By">
                  {/* One child: a stacked cell is a grid of its label and its content. */}
                  <span>
                    {ACTOR_KINDS[e.actor.kind]} <code className="small break">{e.actor.id}</code>
                  </span>
                </td>
                <td data-label="From">{e.clientIp ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {log.hasNextPage ? (
        <div className="actions">
          <button type="button" className="button button-secondary" onClick={() => void log.fetchNextPage()} disabled={log.isFetchingNextPage}>
            {log.isFetchingNextPage ? 'Loading…' : 'Show older'}
          </button>
        </div>
      ) : null}
    </section>
  );
}
