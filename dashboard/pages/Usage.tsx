import './usage.css';
import { keepPreviousData, useMutation, useQuery, type UseQueryResult } from '@tanstack/react-query';
import { useId, useMemo, useState } from 'react';
import { Chart } from '../components/Chart.tsx';
import { ErrorMessage } from '../components/ErrorMessage.tsx';
import { formatCount, formatRate, formatUsd } from '../format.ts';
import { api, type Outputs } from '../trpc.ts';
import { downloadText, fetchAllUsage, usageCsv, type UsageFilters } from '../usage-csv.ts';

type Summary = Outputs['usage']['summary'];
type KeyRecord = Outputs['keys']['list']['keys'][number];
type UsageRecord = Outputs['usage']['list']['records'][number];
type Grouping = 'hour' | 'day';

/** Records per page of the table. */
const PAGE_SIZE = 50;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** The service's limit for hour buckets (routers/usage.ts): from … to at most 31 days. */
const MAX_HOURLY_DAYS = 31;
/** Longer day charts start at the first day with usage (years of empty bars say nothing). */
const MAX_EMPTY_LEAD_DAYS = 366;
/**
 * Usage grows with every call of the account's keys (and every read of this page): a filter chosen
 * again is asked again (its last answer shows meanwhile), so the chart, the tables and the records agree with each other.
 */
const FRESH_MS = 0;
const MIN_DATE = '1970-01-01';
const MAX_DATE = '9999-12-31';
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A UTC calendar date (YYYY-MM-DD) of an instant. */
const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const dayStart = (date: string) => Date.parse(`${date}T00:00:00Z`);

/** Records' times, in UTC like every date on this page: 2026-11-20 10:15:03. */
export const utcTime = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;

interface Filters {
  from: string;
  to: string;
  grouping: Grouping;
  keyId: string;
  path: string;
}

/** What stops the page from asking: the dates (nothing is asked), or the hour limit (the chart is not). */
function checkFilters(f: Filters): { dates: string | null; grouping: string | null } {
  if (!DATE.test(f.from)) return { dates: 'Enter a start date (From).', grouping: null };
  if (!DATE.test(f.to)) return { dates: 'Enter an end date (To).', grouping: null };
  if (f.from < MIN_DATE || f.to > MAX_DATE) return { dates: `Dates go from ${MIN_DATE} to ${MAX_DATE}.`, grouping: null };
  if (f.from > f.to) return { dates: 'From must be on or before To.', grouping: null };
  const days = Math.round((dayStart(f.to) - dayStart(f.from)) / DAY_MS) + 1;
  if (f.grouping === 'hour' && days > MAX_HOURLY_DAYS)
    return { dates: null, grouping: `Grouping by hour covers at most ${MAX_HOURLY_DAYS} days, and this period has ${formatCount(days)}. Shorten the period or group by day.` };
  return { dates: null, grouping: null };
}

interface Point {
  start: number;
  requests: number;
  costUsd: number;
}

/**
 * The chart's time axis: every hour or day from `from` to `to` (not past the current one), the
 * service's buckets in their places and zero where nothing was used, so gaps look like gaps.
 */
function timeline(summary: Summary, f: Filters, now: number): { points: Point[]; trimmed: boolean } {
  const step = summary.bucket === 'hour' ? HOUR_MS : DAY_MS;
  const counted = new Map(summary.buckets.map((b) => [Date.parse(b.start), b]));
  let first = dayStart(f.from);
  const last = Math.min(dayStart(f.to) + DAY_MS - step, Math.floor(now / step) * step);
  let trimmed = false;
  const firstUsed = Math.min(...counted.keys());
  if (summary.bucket === 'day' && (last - first) / DAY_MS > MAX_EMPTY_LEAD_DAYS && Number.isFinite(firstUsed) && firstUsed > first) {
    first = firstUsed;
    trimmed = true;
  }
  const points: Point[] = [];
  for (let t = first; t <= last; t += step) {
    const b = counted.get(t);
    points.push({ start: t, requests: b?.requests ?? 0, costUsd: b?.costUsd ?? 0 });
    counted.delete(t);
  }
  // Anything counted outside that range (a clock of this device behind the service's) still shows.
  for (const [t, b] of counted) points.push({ start: t, requests: b.requests, costUsd: b.costUsd });
  points.sort((a, b) => a.start - b.start);
  return { points, trimmed };
}

const dayLabel = new Intl.DateTimeFormat(undefined, { timeZone: 'UTC', month: 'short', day: 'numeric' });
const dayYearLabel = new Intl.DateTimeFormat(undefined, { timeZone: 'UTC', year: 'numeric', month: 'short', day: 'numeric' });
const hourLabel = new Intl.DateTimeFormat(undefined, { timeZone: 'UTC', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
const dayLong = new Intl.DateTimeFormat(undefined, { timeZone: 'UTC', weekday: 'short', year: 'numeric', month: 'short', day: 'numeric' });
const hourLong = new Intl.DateTimeFormat(undefined, { timeZone: 'UTC', year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });

function axisLabels(points: Point[], grouping: Grouping): string[] {
  if (grouping === 'hour') return points.map((p) => hourLabel.format(p.start));
  const years = new Set(points.map((p) => new Date(p.start).getUTCFullYear()));
  const format = years.size > 1 ? dayYearLabel : dayLabel;
  return points.map((p) => format.format(p.start));
}

const defaultFilters = (): Filters => {
  const now = Date.now();
  return { from: utcDate(now - 6 * DAY_MS), to: utcDate(now), grouping: 'day', keyId: '', path: '' };
};

/** Usage of the account: requests and cost over time, per route and per key, the requests themselves, CSV. */
export function Usage() {
  const ids = useId();
  const [filters, setFilters] = useState<Filters>(defaultFilters);
  const [offset, setOffset] = useState(0);
  const [now] = useState(() => Date.now());
  const problems = checkFilters(filters);
  const change = (patch: Partial<Filters>) => {
    setFilters((f) => ({ ...f, ...patch }));
    setOffset(0);
  };

  const keys = useQuery({ queryKey: ['keys.list'], queryFn: () => api.keys.list.query() });
  const apiFilters: UsageFilters = {
    from: filters.from,
    to: filters.to,
    ...(filters.keyId ? { keyId: filters.keyId } : {}),
    ...(filters.path ? { path: filters.path } : {}),
  };
  const summaryInput = { ...apiFilters, bucket: filters.grouping };
  const summary = useQuery({
    queryKey: ['usage.summary', summaryInput],
    queryFn: () => api.usage.summary.query(summaryInput),
    enabled: !problems.dates && !problems.grouping,
    staleTime: FRESH_MS,
  });
  // The routes to choose from: the same period and key, every route (the same query when no route is chosen).
  const routesInput = { ...summaryInput, path: undefined };
  const routes = useQuery({
    queryKey: ['usage.summary', routesInput],
    queryFn: () => api.usage.summary.query(routesInput),
    enabled: !problems.dates && !problems.grouping,
    staleTime: FRESH_MS,
    placeholderData: keepPreviousData,
  });
  const records = useQuery({
    queryKey: ['usage.list', apiFilters, offset],
    queryFn: () => api.usage.list.query({ ...apiFilters, limit: PAGE_SIZE, offset }),
    enabled: !problems.dates,
    staleTime: FRESH_MS,
    placeholderData: keepPreviousData,
  });

  const keyNames = useMemo(() => new Map((keys.data?.keys ?? []).map((k) => [k.id, k.name])), [keys.data]);
  const pathOptions = useMemo(() => {
    const paths = new Set((routes.data?.byPath ?? []).map((p) => p.path));
    if (filters.path) paths.add(filters.path);
    return [...paths].sort();
  }, [routes.data, filters.path]);

  return (
    <>
      <h1>Usage</h1>
      <section className="card" aria-labelledby={`${ids}-filters`}>
        <h2 id={`${ids}-filters`}>Filters</h2>
        <form className="usage-filters" aria-labelledby={`${ids}-filters`} onSubmit={(e) => e.preventDefault()}>
          <div className="field">
            <label htmlFor={`${ids}-from`}>From</label>
            <input id={`${ids}-from`} name="from" type="date" required min={MIN_DATE} max={MAX_DATE} value={filters.from} onChange={(e) => change({ from: e.target.value })} aria-describedby={`${ids}-dates-help`} aria-invalid={problems.dates ? true : undefined} />
          </div>
          <div className="field">
            <label htmlFor={`${ids}-to`}>To</label>
            <input id={`${ids}-to`} name="to" type="date" required min={MIN_DATE} max={MAX_DATE} value={filters.to} onChange={(e) => change({ to: e.target.value })} aria-describedby={`${ids}-dates-help`} aria-invalid={problems.dates ? true : undefined} />
          </div>
          <div className="field">
            <label htmlFor={`${ids}-grouping`}>Group by</label>
            <select id={`${ids}-grouping`} name="bucket" value={filters.grouping} onChange={(e) => change({ grouping: e.target.value === 'hour' ? 'hour' : 'day' })} aria-describedby={`${ids}-grouping-help`}>
              <option value="day">Day</option>
              <option value="hour">Hour</option>
            </select>
          </div>
          <div className="field">
            <label htmlFor={`${ids}-key`}>API key</label>
            <select id={`${ids}-key`} name="keyId" value={filters.keyId} onChange={(e) => change({ keyId: e.target.value })}>
              <option value="">All keys</option>
              {(keys.data?.keys ?? []).map((k: KeyRecord) => (
                <option key={k.id} value={k.id}>
                  {k.status === 'revoked' ? `${k.name} (revoked)` : k.name}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={`${ids}-path`}>Route</label>
            <select id={`${ids}-path`} name="path" value={filters.path} onChange={(e) => change({ path: e.target.value })}>
              <option value="">All routes</option>
              {pathOptions.map((p) => (
                <option key={p} value={p}>
                  {p}
                </option>
              ))}
            </select>
          </div>
          <p id={`${ids}-dates-help`} className={problems.dates ? 'field-error small usage-filters-note' : 'muted small usage-filters-note'} aria-live="polite">
            {problems.dates ?? 'Dates are UTC days; both are included.'}
          </p>
          <p id={`${ids}-grouping-help`} className={problems.grouping ? 'field-error small usage-filters-note' : 'visually-hidden'} aria-live="polite">
            {problems.grouping ?? `Hours cover at most ${MAX_HOURLY_DAYS} days.`}
          </p>
        </form>
        {keys.isError ? <ErrorMessage error={keys.error} title="The keys could not be loaded" /> : null}
      </section>

      {problems.dates ? null : (
        <>
          <OverTime ids={ids} filters={filters} now={now} summary={summary} blocked={problems.grouping} />
          <div className="grid">
            <ByRoute summary={summary} blocked={problems.grouping} />
            <ByKey summary={summary} keyNames={keyNames} blocked={problems.grouping} />
          </div>
          <Records filters={filters} apiFilters={apiFilters} records={records} offset={offset} setOffset={setOffset} keyNames={keyNames} />
        </>
      )}
    </>
  );
}

type SummaryQuery = UseQueryResult<Summary>;
type RecordsQuery = UseQueryResult<Outputs['usage']['list']>;

function OverTime({ ids, filters, now, summary, blocked }: { ids: string; filters: Filters; now: number; summary: SummaryQuery; blocked: string | null }) {
  const per = filters.grouping === 'hour' ? 'hour' : 'day';
  const line = summary.data ? timeline(summary.data, filters, now) : null;
  const points = line?.points ?? [];
  const labels = axisLabels(points, filters.grouping);
  const chartLabel = summary.data
    ? `Requests (bars, left scale) and cost in USD (line, right scale) per ${per} (UTC), ${filters.from} to ${filters.to}, ${formatCount(points.length)} ${points.length === 1 ? per : `${per}s`}: ${formatCount(summary.data.totals.requests)} requests, ${formatUsd(summary.data.totals.costUsd)} in all`
    : '';
  const used = points.filter((p) => p.requests > 0);
  return (
    <section className="card" aria-labelledby={`${ids}-time`} aria-busy={summary.isFetching}>
      <h2 id={`${ids}-time`}>Requests and cost per {per}</h2>
      {blocked ? <p>{blocked}</p> : null}
      {!blocked && summary.isPending ? <p className="muted">Loading…</p> : null}
      {summary.isError ? <ErrorMessage error={summary.error} title="Usage could not be loaded" /> : null}
      {summary.data && !blocked ? (
        <>
          <dl className="facts">
            <dt>Requests</dt>
            <dd className="figure">{formatCount(summary.data.totals.requests)}</dd>
            <dt>Cost</dt>
            <dd className="figure">{formatUsd(summary.data.totals.costUsd)}</dd>
          </dl>
          {summary.data.totals.requests === 0 ? (
            <p>No requests in this period{filters.keyId || filters.path ? ' for this key and route' : ''}. Calls made with your API keys are counted here, and so are this dashboard's own reads (billed like an API call, listed as "{SESSION_LABEL}").</p>
          ) : (
            <>
              <Chart
                kind="bar"
                labels={labels}
                label={chartLabel}
                series={[
                  { label: 'Requests', data: points.map((p) => p.requests) },
                  { label: 'Cost (USD)', data: points.map((p) => p.costUsd), kind: 'line', axis: 'right' },
                ]}
                format={(v) => (Number.isInteger(v) ? formatCount(v) : '')}
                formatRight={formatUsd}
              />
              {line?.trimmed ? <p className="muted small">The chart starts at the first day with requests.</p> : null}
              <details className="usage-details">
                <summary>The numbers per {per} (table)</summary>
                <table className="table table-stack usage-table">
                  <caption className="visually-hidden">Requests and cost per {per} with requests, UTC, oldest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">{per === 'hour' ? 'Hour (UTC)' : 'Day (UTC)'}</th>
                      <th scope="col" className="num">Requests</th>
                      <th scope="col" className="num">Cost</th>
                    </tr>
                  </thead>
                  <tbody>
                    {used.map((p) => (
                      <tr key={p.start}>
                        <th scope="row" data-label={per === 'hour' ? 'Hour (UTC)' : 'Day (UTC)'}>
                          {per === 'hour' ? hourLong.format(p.start) : dayLong.format(p.start)}
                        </th>
                        <td data-label="Requests" className="num">
                          {formatCount(p.requests)}
                        </td>
                        <td data-label="Cost" className="num">
                          {formatUsd(p.costUsd)}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
                <p className="muted small">{per === 'hour' ? 'Hours' : 'Days'} without requests are left out.</p>
              </details>
            </>
          )}
        </>
      ) : null}
    </section>
  );
}

function ByRoute({ summary, blocked }: { summary: SummaryQuery; blocked: string | null }) {
  const ids = useId();
  const rows = summary.data?.byPath ?? [];
  return (
    <section className="card" aria-labelledby={`${ids}-title`} aria-busy={summary.isFetching}>
      <h2 id={`${ids}-title`}>By route</h2>
      {blocked ? <p className="muted">Shown once the period fits the grouping (see above).</p> : null}
      {summary.isPending && summary.fetchStatus !== 'idle' ? <p className="muted">Loading…</p> : null}
      {summary.data && rows.length === 0 ? <p>No requests to any route in this period.</p> : null}
      {rows.length > 0 ? (
        <table className="table table-stack usage-table usage-by-route">
          <caption className="visually-hidden">Requests and cost per route, most requests first</caption>
          <thead>
            <tr>
              <th scope="col">Route</th>
              <th scope="col" className="num">Requests</th>
              <th scope="col" className="num">Cost</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.path}>
                <th scope="row" data-label="Route">
                  <code className="break">{r.path}</code>
                </th>
                <td data-label="Requests" className="num">
                  {formatCount(r.requests)}
                </td>
                <td data-label="Cost" className="num">
                  {formatUsd(r.costUsd)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

/** Calls made with the signed-in session carry no key (they are billed like a key's call). */
export const SESSION_LABEL = 'Signed-in session';

function keyLabel(keyId: string | null, name: string | undefined, keyNames: Map<string, string>) {
  if (keyId === null) return SESSION_LABEL;
  return name ?? keyNames.get(keyId) ?? <code className="break">{keyId}</code>;
}

function ByKey({ summary, keyNames, blocked }: { summary: SummaryQuery; keyNames: Map<string, string>; blocked: string | null }) {
  const ids = useId();
  const rows = summary.data?.byKey ?? [];
  return (
    <section className="card" aria-labelledby={`${ids}-title`} aria-busy={summary.isFetching}>
      <h2 id={`${ids}-title`}>By API key</h2>
      {blocked ? <p className="muted">Shown once the period fits the grouping (see above).</p> : null}
      {summary.isPending && summary.fetchStatus !== 'idle' ? <p className="muted">Loading…</p> : null}
      {summary.data && rows.length === 0 ? <p>No key made requests in this period.</p> : null}
      {rows.length > 0 ? (
        <table className="table table-stack usage-table usage-by-key">
          <caption className="visually-hidden">Requests and cost per API key, most requests first</caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col" className="num">Requests</th>
              <th scope="col" className="num">Cost</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.keyId ?? SESSION_LABEL}>
                <th scope="row" data-label="Key">
                  {keyLabel(r.keyId, r.keyName ?? undefined, keyNames)}
                </th>
                <td data-label="Requests" className="num">
                  {formatCount(r.requests)}
                </td>
                <td data-label="Cost" className="num">
                  {formatUsd(r.costUsd)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

function Records({
  filters,
  apiFilters,
  records,
  offset,
  setOffset,
  keyNames,
}: {
  filters: Filters;
  apiFilters: UsageFilters;
  records: RecordsQuery;
  offset: number;
  setOffset: (offset: number) => void;
  keyNames: Map<string, string>;
}) {
  const ids = useId();
  const page = records.data;
  const total = page?.total ?? 0;
  const range = page && page.records.length > 0 ? `${formatCount(offset + 1)}–${formatCount(offset + page.records.length)} of ${formatCount(total)}` : null;
  const fileName = `usage-${filters.from}-to-${filters.to}.csv`;
  const exportCsv = useMutation({
    mutationFn: async () => {
      const all = await fetchAllUsage((input) => api.usage.list.query(input), apiFilters);
      downloadText(fileName, usageCsv(all));
      return all.length;
    },
  });

  return (
    <section className="card" aria-labelledby={`${ids}-title`} aria-busy={records.isFetching}>
      <div className="usage-records-head">
        <h2 id={`${ids}-title`}>Requests</h2>
        <button type="button" className="button button-secondary" onClick={() => exportCsv.mutate()} disabled={exportCsv.isPending} aria-describedby={`${ids}-csv-help`}>
          {exportCsv.isPending ? 'Preparing CSV…' : 'Download CSV'}
        </button>
      </div>
      <p id={`${ids}-csv-help`} className="muted small">
        The CSV holds every request these filters match (not only this page), newest first.
      </p>
      <div aria-live="polite">
        {exportCsv.isSuccess ? (
          <p className="small">
            Saved {formatCount(exportCsv.data)} {exportCsv.data === 1 ? 'request' : 'requests'} as {fileName}.
          </p>
        ) : null}
      </div>
      {exportCsv.isError ? <ErrorMessage error={exportCsv.error} title="The CSV could not be made" /> : null}
      {records.isPending ? <p className="muted">Loading…</p> : null}
      {records.isError ? <ErrorMessage error={records.error} title="The requests could not be loaded" /> : null}
      {page && total === 0 ? <p>No requests match these filters.</p> : null}
      {page && page.records.length > 0 ? (
        <>
          <table className="table table-stack usage-table usage-records">
            <caption className="visually-hidden">Requests, newest first: {range}</caption>
            <thead>
              <tr>
                <th scope="col">Time (UTC)</th>
                <th scope="col">Method</th>
                <th scope="col">Route</th>
                <th scope="col">Key</th>
                <th scope="col" className="num">Cost</th>
              </tr>
            </thead>
            <tbody>
              {page.records.map((r: UsageRecord) => (
                <tr key={r.id}>
                  <td data-label="Time (UTC)" className="nowrap">
                    {utcTime(r.timestamp)}
                  </td>
                  <td data-label="Method">{r.method}</td>
                  <td data-label="Route">
                    <code className="break">{r.path}</code>
                  </td>
                  <td data-label="Key">{keyLabel(r.keyId, undefined, keyNames)}</td>
                  <td data-label="Cost" className="num">
                    {formatRate(r.costUsd)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <nav className="usage-pager" aria-label="Pages of requests">
            <button type="button" className="button button-secondary" onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))} disabled={offset === 0 || records.isFetching}>
              Previous
            </button>
            <p className="usage-pager-status" aria-live="polite">
              {range}
            </p>
            <button type="button" className="button button-secondary" onClick={() => setOffset(offset + PAGE_SIZE)} disabled={offset + PAGE_SIZE >= total || records.isFetching}>
              Next
            </button>
          </nav>
        </>
      ) : null}
    </section>
  );
}
