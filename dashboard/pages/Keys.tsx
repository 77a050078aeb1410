import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { CopyButton } from '../components/CopyButton.tsx';
import { ErrorMessage } from '../components/ErrorMessage.tsx';
import { formatDate, formatUsd } from '../format.ts';
import { api, type Outputs } from '../trpc.ts';
import { AuditLog } from './AuditLog.tsx';

type KeyRecord = Outputs['keys']['list']['keys'][number];
type CreatedKey = Outputs['keys']['create'];

type Scope = KeyRecord['scopes'][number];

/** What each scope lets a key do, in the service's order (a scope the service adds fails the typecheck here). */
const SCOPE_LABELS: Record<Scope, string> = {
  'data:read': 'Read private-company data',
  'trading:read': 'Read positions, orders and history',
  'trading:write': 'Trade: buy, sell, credentials, syncs',
  'account:read': 'Read usage, billing and webhooks',
  'account:write': 'Change webhooks',
};
const ALL_SCOPES = Object.keys(SCOPE_LABELS) as Scope[];
/** A test key never reads private-company data (the service refuses data:read for one). */
const TEST_SCOPES = ALL_SCOPES.filter((s) => s !== 'data:read');
type Mode = KeyRecord['mode'];

/** A USD amount as typed: digits with at most 6 decimals (the service's precision), above zero. */
const USD_TEXT = /^\d{1,8}(\.\d{1,6})?$/;

export function Keys() {
  const keys = useQuery({ queryKey: ['keys.list'], queryFn: () => api.keys.list.query() });
  const [created, setCreated] = useState<CreatedKey | null>(null);

  return (
    <>
      <h1>API keys</h1>
      {created ? <NewKey created={created} onDone={() => setCreated(null)} /> : <CreateKeyForm onCreated={setCreated} />}

      <section className="card" aria-labelledby="keys-title" aria-busy={keys.isPending}>
        <h2 id="keys-title">Your keys</h2>
        {keys.isPending ? <p className="muted">Loading…</p> : null}
        {keys.isError ? <ErrorMessage error={keys.error} title="The keys could not be loaded" /> : null}
        {keys.data && keys.data.keys.length === 0 ? <p>No keys yet: create one above to call the API.</p> : null}
        {keys.data && keys.data.keys.length > 0 ? <KeyTable keys={keys.data.keys} /> : null}
      </section>
      <AuditLog />
    </>
  );
}

function CreateKeyForm({ onCreated }: { onCreated: (key: CreatedKey) => void }) {
  const queryClient = useQueryClient();
  const ids = useId();
  const [name, setName] = useState('');
  const [cap, setCap] = useState('');
  const [period, setPeriod] = useState<'month' | 'day'>('month');
  const [capProblem, setCapProblem] = useState<string | null>(null);
  const [scopes, setScopes] = useState<Scope[]>(ALL_SCOPES);
  const [scopeProblem, setScopeProblem] = useState<string | null>(null);
  const [mode, setMode] = useState<Mode>('live');
  const offered = mode === 'test' ? TEST_SCOPES : ALL_SCOPES;
  const create = useMutation({
    mutationFn: (input: Parameters<typeof api.keys.create.mutate>[0]) => api.keys.create.mutate(input),
    onSuccess: (key) => {
      void queryClient.invalidateQueries({ queryKey: ['keys.list'] });
      void queryClient.invalidateQueries({ queryKey: ['auditLog.list'] });
      setName('');
      setCap('');
      setPeriod('month');
      setScopes(ALL_SCOPES);
      setMode('live');
      onCreated(key);
    },
  });

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const capText = cap.trim();
    if (capText && (!USD_TEXT.test(capText) || Number(capText) <= 0)) {
      setCapProblem('Enter an amount in USD above zero, with at most 6 decimals (e.g. 25 or 0.5).');
      return;
    }
    setCapProblem(null);
    const chosen = offered.filter((s) => scopes.includes(s));
    if (!chosen.length) {
      setScopeProblem('Choose at least one thing the key may do.');
      return;
    }
    setScopeProblem(null);
    // Every box ticked: no scopes sent, so the key holds every scope of its mode (a live key also any added later).
    const limited = { ...(chosen.length < offered.length ? { scopes: chosen } : {}), ...(mode === 'test' ? { mode } : {}) };
    create.mutate(capText ? { name: name.trim(), spendCapUsd: Number(capText), capPeriod: period, ...limited } : { name: name.trim(), ...limited });
  };

  return (
    <section className="card" aria-labelledby={`${ids}-title`}>
      <h2 id={`${ids}-title`}>Create a key</h2>
      <form className="form" onSubmit={submit}>
        <div className="field">
          <label htmlFor={`${ids}-name`}>Name</label>
          <input id={`${ids}-name`} name="name" type="text" required maxLength={64} autoComplete="off" value={name} onChange={(e) => setName(e.target.value)} aria-describedby={`${ids}-name-help`} />
          <p id={`${ids}-name-help`} className="muted small">
            For you to recognise it, e.g. "production server".
          </p>
        </div>
        <div className="field-row">
          <div className="field">
            <label htmlFor={`${ids}-cap`}>Spend cap in USD (optional)</label>
            <input
              id={`${ids}-cap`}
              name="spendCapUsd"
              type="text"
              inputMode="decimal"
              autoComplete="off"
              placeholder="No cap"
              value={cap}
              onChange={(e) => {
                setCap(e.target.value);
                setCapProblem(null);
              }}
              aria-invalid={capProblem ? true : undefined}
              aria-describedby={`${ids}-cap-help`}
            />
            <p id={`${ids}-cap-help`} className={capProblem ? 'field-error small' : 'muted small'}>
              {capProblem ?? 'Above this spend in a period the key is refused (HTTP 402); your other keys keep working.'}
            </p>
          </div>
          <div className="field">
            <label htmlFor={`${ids}-period`}>Cap period</label>
            <select id={`${ids}-period`} name="capPeriod" value={period} onChange={(e) => setPeriod(e.target.value === 'day' ? 'day' : 'month')} disabled={!cap.trim()}>
              <option value="month">Per month (UTC)</option>
              <option value="day">Per day (UTC)</option>
            </select>
          </div>
        </div>
        <fieldset className="field" aria-describedby={`${ids}-mode-help`}>
          <legend>Mode</legend>
          <label className="check">
            <input type="radio" name="mode" value="live" checked={mode === 'live'} onChange={() => setMode('live')} />
            <span>Live: real orders on the venue, billed from your balance</span>
          </label>
          <label className="check">
            <input type="radio" name="mode" value="test" checked={mode === 'test'} onChange={() => setMode('test')} />
            <span>Test: paper orders at live prices, with positions, webhooks and usage of their own</span>
          </label>
          <p id={`${ids}-mode-help`} className="muted small">
            A test key (<code>pipo_test_…</code>) never touches your balance or your live positions, and reads no private-company data.
          </p>
        </fieldset>
        <fieldset className="field" aria-describedby={`${ids}-scopes-help`}>
          <legend>What the key may do</legend>
          {ALL_SCOPES.map((scope) => (
            <label key={scope} className="check">
              <input
                type="checkbox"
                name="scopes"
                value={scope}
                checked={offered.includes(scope) && scopes.includes(scope)}
                disabled={!offered.includes(scope)}
                onChange={(e) => {
                  setScopes(e.target.checked ? [...scopes, scope] : scopes.filter((s) => s !== scope));
                  setScopeProblem(null);
                }}
              />
              <span>
                {SCOPE_LABELS[scope]} <code className="small">{scope}</code>
              </span>
            </label>
          ))}
          <p id={`${ids}-scopes-help`} className={scopeProblem ? 'field-error small' : 'muted small'}>
            {scopeProblem ?? 'A call outside these is refused (HTTP 403) and costs nothing. All ticked: everything, including scopes added later.'}
          </p>
        </fieldset>
        <div className="actions">
          <button type="submit" className="button button-primary" disabled={create.isPending}>
            {create.isPending ? 'Creating…' : 'Create key'}
          </button>
        </div>
        {create.isError ? <ErrorMessage error={create.error} title="The key was not created" /> : null}
      </form>
    </section>
  );
}

/** The full key, shown this once. Focus moves here so a screen reader reads it out. */
function NewKey({ created, onDone }: { created: CreatedKey; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  const ids = useId();
  useEffect(() => heading.current?.focus(), []);
  return (
    <section className="card card-highlight" aria-labelledby={`${ids}-title`}>
      <h2 id={`${ids}-title`} ref={heading} tabIndex={-1}>
        Key "{created.name}" created
      </h2>
      <p className="notice notice-warning">
        <strong>Copy it now. You will not see it again:</strong> the service keeps only a masked form.
      </p>
      <label htmlFor={`${ids}-key`}>Your new API key</label>
      <div className="key-reveal">
        <input id={`${ids}-key`} className="mono" type="text" readOnly value={created.key} onFocus={(e) => e.currentTarget.select()} />
        <CopyButton text={created.key} label="Copy key" />
      </div>
      <p className="muted small">
        Send it in the <code>x-api-key</code> header.{created.mode === 'test' ? ' A test key: paper trades, nothing billed from your balance.' : ''} {created.allScopes ? 'It may do everything.' : `It may only: ${created.scopes.join(', ')}.`}
        {created.spendCapUsd !== null ? ` Spend cap: ${formatUsd(created.spendCapUsd)} per ${created.capPeriod ?? 'month'}.` : ''}
      </p>
      <div className="actions">
        <button type="button" className="button button-secondary" onClick={onDone}>
          I have saved it
        </button>
      </div>
    </section>
  );
}

function KeyTable({ keys }: { keys: KeyRecord[] }) {
  return (
    <table className="table table-stack">
      <caption className="visually-hidden">API keys of your account</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Key</th>
          <th scope="col">Status</th>
          <th scope="col">Created</th>
          <th scope="col">Last used</th>
          <th scope="col">May do</th>
          <th scope="col">Spend cap</th>
          <th scope="col">Spent this period</th>
          <th scope="col">
            <span className="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {keys.map((key) => (
          <KeyRow key={key.id} record={key} />
        ))}
      </tbody>
    </table>
  );
}

function KeyRow({ record }: { record: KeyRecord }) {
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const confirmButton = useRef<HTMLButtonElement>(null);
  const revoke = useMutation({
    mutationFn: () => api.keys.revoke.mutate({ id: record.id }),
    onSuccess: () => {
      setConfirming(false);
      void queryClient.invalidateQueries({ queryKey: ['keys.list'] });
      void queryClient.invalidateQueries({ queryKey: ['auditLog.list'] });
    },
  });
  useEffect(() => {
    if (confirming) confirmButton.current?.focus();
  }, [confirming]);

  return (
    <tr>
      <th scope="row" data-label="Name">
        {record.name}
      </th>
      <td data-label="Key">
        <code className="nowrap">{record.maskedKey}</code>
        {/* The prefix says it too (pipo_test_…); the badge makes a test key stand out in the list. */}
        {record.mode === 'test' ? <> <span className="badge badge-test">Test</span></> : null}
      </td>
      <td data-label="Status">
        <span className={`badge badge-${record.status}`}>{record.status === 'active' ? 'Active' : 'Revoked'}</span>
      </td>
      <td data-label="Created">{formatDate(record.createdAt)}</td>
      <td data-label="Last used">{record.lastUsed ? formatDate(record.lastUsed) : 'Never'}</td>
      <td data-label="May do">{record.allScopes ? 'Everything' : record.scopes.map((s) => <code key={s} className="nowrap small scope">{s}</code>)}</td>
      <td data-label="Spend cap">{record.spendCapUsd === null ? 'No cap' : `${formatUsd(record.spendCapUsd)} per ${record.capPeriod ?? 'month'}`}</td>
      <td data-label="Spent this period">{record.spentThisPeriodUsd === null ? '—' : formatUsd(record.spentThisPeriodUsd)}</td>
      <td data-label="Actions" className="cell-actions">
        {record.status !== 'active' ? null : confirming ? (
          <div className="confirm" role="group" aria-label={`Confirm revoking ${record.name}`}>
            <p className="small">Revoke "{record.name}"? Programs using it stop working at once. This cannot be undone.</p>
            <div className="actions">
              <button ref={confirmButton} type="button" className="button button-danger" onClick={() => revoke.mutate()} disabled={revoke.isPending}>
                {revoke.isPending ? 'Revoking…' : 'Yes, revoke'}
              </button>
              <button type="button" className="button button-secondary" onClick={() => setConfirming(false)} disabled={revoke.isPending}>
                Cancel
              </button>
            </div>
          </div>
        ) : (
          <button type="button" className="button button-secondary" onClick={() => setConfirming(true)} aria-label={`Revoke ${record.name}`}>
            Revoke
          </button>
        )}
        {revoke.isError ? <ErrorMessage error={revoke.error} title="The key was not revoked" /> : null}
      </td>
    </tr>
  );
}
