import './markets.css';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { Chart } from '../components/Chart.tsx';
import { ErrorMessage } from '../components/ErrorMessage.tsx';
import { formatBillions, formatDate, formatUnitCost, formatUsd } from '../format.ts';
import { api, problemOf, type ApiProblem, type Outputs } from '../trpc.ts';
import { ValuationHistory } from './markets/ValuationHistory.tsx';
import { useCompact } from './trading/compact.tsx';
import { outcomeOf } from './trading/events.ts';

/** Events a phone shows before "Show all" (open ones first): the page stays a few screens long. */
const PHONE_EVENTS = 6;

/**
 * Markets: every IPO valuation event with its implied valuation, the cost of a LONG and a
 * SHORT unit and their best and worst returns (default floors); one event in detail — its bands as a
 * chart and a table, and its quote recomputed for floors the visitor chooses. Public market data:
 * the service refreshes it every MARKET_DATA_TTL_MS (2 s); the page asks again every 10 s.
 */

type MarketEvent = Outputs['tradingMarket']['events']['events'][number];
type Summary = Outputs['tradingMarket']['valuationAll']['valuations'][number];
type Quote = Outputs['tradingMarket']['valuation'];
type Status = MarketEvent['status'];
type Floors = Quote['settings'];

const REFRESH_MS = 10_000;

/** Words for a status (the badge's icon and border differ too: never colour alone). */
const STATUS: Record<Status, { text: string; icon: string; help: string }> = {
  open: { text: 'Open', icon: '●', help: 'trading' },
  closed: { text: 'Closed', icon: '◐', help: 'trading stopped, outcome pending' },
  resolved: { text: 'Resolved', icon: '✓', help: 'a band won' },
  voided: { text: 'Voided', icon: '✕', help: 'cancelled, every band pays $0.50 a share' },
};
const STATUS_ORDER: Record<Status, number> = { open: 0, closed: 1, resolved: 2, voided: 3 };

// Display formats of market numbers (the table and the test agree on them).
const usdPrice = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 3, maximumFractionDigits: 4 });
const pct1 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1, signDisplay: 'exceptZero' });
const share1 = new Intl.NumberFormat('en-US', { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 });
const fixed4 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 4, maximumFractionDigits: 4 });
const floor2 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 4 });
const clock = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

const isNumber = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v);
/** A return in percent, signed ("+16.1%", "-76.8%"). */
const formatReturn = (v: number | null | undefined) => (isNumber(v) ? `${pct1.format(v)}%` : '—');
const formatPrice = (v: number | null | undefined) => (isNumber(v) ? usdPrice.format(v) : '—');
const formatShare = (v: number) => share1.format(v);
const formatWeight = (v: number) => fixed4.format(v);
const formatFloor = (v: number) => floor2.format(v);
function formatClock(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : clock.format(d);
}

interface MarketRow {
  event: MarketEvent;
  summary: Summary | null;
  quote: Quote | null;
  /** Why the event's own quote (its returns) could not be had; the row shows "—" for them. */
  problem: ApiProblem | null;
}

interface MarketsData {
  rows: MarketRow[];
  /** The snapshot the summaries come from (valuation/all's updatedAt). */
  asOf: string | null;
  /** The floors the table's costs and returns use (the service's defaults). */
  defaults: Floors | null;
}

/**
 * The events, then in one tRPC batch (one HTTP request, so one market snapshot) every event's
 * summary and each event's quote. One event's quote failing leaves its returns empty, not the page.
 */
async function loadMarkets(): Promise<MarketsData> {
  const { events } = await api.tradingMarket.events.query();
  const [all, ...quotes] = await Promise.all([
    api.tradingMarket.valuationAll.query(),
    ...events.map((e) =>
      api.tradingMarket.valuation.query({ eventSlug: e.id }).then(
        (quote) => ({ quote, problem: null }),
        (error: unknown) => ({ quote: null, problem: problemOf(error) }),
      ),
    ),
  ]);
  const summaries = new Map(all.valuations.map((v) => [v.eventId, v]));
  const rows = events
    .map((event, i) => ({ event, summary: summaries.get(event.id) ?? null, quote: quotes[i]!.quote, problem: quotes[i]!.problem }))
    .sort((a, b) => STATUS_ORDER[a.event.status] - STATUS_ORDER[b.event.status]);
  return { rows, asOf: all.valuations[0]?.updatedAt ?? null, defaults: quotes.find((q) => q.quote)?.quote?.settings ?? null };
}

export function Markets() {
  const markets = useQuery({ queryKey: ['markets.overview'], queryFn: loadMarkets, refetchInterval: REFRESH_MS });
  const [selected, setSelected] = useState<string | null>(null);
  // Every "Show" press moves focus to the detail's heading, also when that event is already shown.
  const [focusTick, setFocusTick] = useState(0);
  const showButtons = useRef(new Map<string, HTMLButtonElement>());
  const rows = markets.data?.rows ?? [];
  const selectedRow = rows.find((r) => r.event.id === selected) ?? null;
  const failed = rows.filter((r) => r.problem);
  const { shown, more } = useCompact(rows, 'events', PHONE_EVENTS);

  const hide = () => {
    const id = selected;
    setSelected(null);
    if (id) showButtons.current.get(id)?.focus();
  };

  return (
    <>
      <h1>Markets</h1>
      <section className="card" aria-labelledby="markets-title" aria-busy={markets.isPending}>
        <h2 id="markets-title">IPO valuation events</h2>
        <p>
          Each event is a set of valuation bands, each a market paying $1 if the final value lands in it. A LONG unit gains if the valuation ends high, a SHORT
          unit if it ends low; a unit always pays at least its floor.
        </p>
        {markets.data?.defaults ? (
          <p className="muted small">
            Costs per unit and returns below use the default floors: LONG {formatFloor(markets.data.defaults.floorL)}, SHORT{' '}
            {formatFloor(markets.data.defaults.floorS)}. Show an event to try other floors.
          </p>
        ) : null}
        {markets.isPending ? <p className="muted">Loading…</p> : null}
        {markets.isError ? (
          <ErrorMessage error={markets.error} title={markets.data ? 'The markets could not be refreshed: showing the last prices' : 'The markets could not be loaded'} />
        ) : null}
        {markets.data && rows.length === 0 ? <p>No events yet.</p> : null}
        {markets.data && rows.length > 0 ? (
          <>
            {markets.data.asOf ? (
              <p className="muted small" id="markets-as-of">
                Prices as of <time dateTime={markets.data.asOf}>{formatClock(markets.data.asOf)}</time>, refreshed every {REFRESH_MS / 1000} seconds.
              </p>
            ) : null}
            <div className="markets-scroll" role="region" aria-label="IPO valuation events table" tabIndex={0}>
              <table className="table table-stack table-pairs markets-table">
                <caption className="visually-hidden">IPO valuation events</caption>
                <thead>
                  <tr>
                    <th scope="col">Event</th>
                    <th scope="col">Status</th>
                    <th scope="col">Implied valuation</th>
                    <th scope="col">LONG cost</th>
                    <th scope="col">SHORT cost</th>
                    <th scope="col">LONG best return</th>
                    <th scope="col">LONG worst return</th>
                    <th scope="col">SHORT best return</th>
                    <th scope="col">SHORT worst return</th>
                    <th scope="col">
                      <span className="visually-hidden">Details</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {shown.map((row) => (
                    <MarketRowView
                      key={row.event.id}
                      row={row}
                      selected={row.event.id === selected}
                      buttonRef={(el) => {
                        if (el) showButtons.current.set(row.event.id, el);
                        else showButtons.current.delete(row.event.id);
                      }}
                      onShow={() => {
                        setSelected(row.event.id);
                        setFocusTick((t) => t + 1);
                      }}
                    />
                  ))}
                </tbody>
              </table>
            </div>
            {more ? (
              <p className="markets-more">
                {shown.length < rows.length ? <span className="muted small">The first {shown.length} of {rows.length} events, open ones first. </span> : null}
                {more}
              </p>
            ) : null}
            {failed.length ? (
              <p className="notice notice-warning small">
                Returns could not be loaded for {failed.map((r) => r.event.name).join(', ')}: {failed[0]!.problem!.message}
                {failed[0]!.problem!.requestId ? (
                  <>
                    {' '}
                    (request id <code>{failed[0]!.problem!.requestId}</code>)
                  </>
                ) : null}
                . They show as —.
              </p>
            ) : null}
          </>
        ) : null}
      </section>
      {selectedRow ? (
        <EventDetail key={selectedRow.event.id} row={selectedRow} defaults={markets.data?.defaults ?? null} focusTick={focusTick} onHide={hide} />
      ) : null}
    </>
  );
}

function StatusBadge({ event }: { event: Pick<MarketEvent, 'status'> }) {
  const s = STATUS[event.status];
  return (
    <span className={`badge market-status market-status-${event.status}`} title={s.help}>
      <span aria-hidden="true" className="market-status-icon">
        {s.icon}
      </span>{' '}
      {s.text}
    </span>
  );
}

function winnerLabel(event: MarketEvent): string | null {
  return event.winningBandId ? (event.bands.find((b) => b.id === event.winningBandId)?.label ?? null) : null;
}

/** A return cell of an event that no longer trades: no live figure (the outcome is in the status). */
const NO_RETURN = (
  <>
    <span aria-hidden="true">—</span>
    <span className="visually-hidden">not trading</span>
  </>
);

function MarketRowView({ row, selected, buttonRef, onShow }: { row: MarketRow; selected: boolean; buttonRef: (el: HTMLButtonElement | null) => void; onShow: () => void }) {
  const { event, summary, quote } = row;
  const v = quote?.valuation;
  const outcome = outcomeOf(event);
  const ret = (r: number | null | undefined) => (outcome ? NO_RETURN : formatReturn(r));
  return (
    <tr className={selected ? 'markets-selected' : undefined}>
      <th scope="row" data-label="Event">
        {event.name}
      </th>
      <td data-label="Status">
        <span className="markets-status-cell">
          <StatusBadge event={event} />
          {outcome && event.status !== 'closed' ? (
            <>
              {' '}
              <span className="small markets-outcome">{outcome}</span>
            </>
          ) : outcome ? (
            <>
              {' '}
              <span className="muted small">{outcome}</span>
            </>
          ) : null}
        </span>
      </td>
      <td data-label="Implied valuation" className="num">
        {formatBillions(summary?.impliedValuation)}
      </td>
      <td data-label="LONG cost" className="num">
        {formatUnitCost(summary?.longCost)}
      </td>
      <td data-label="SHORT cost" className="num">
        {formatUnitCost(summary?.shortCost)}
      </td>
      <td data-label="LONG best return" className="num">
        {ret(v?.bestLongReturn)}
      </td>
      <td data-label="LONG worst return" className="num">
        {ret(v?.worstLongReturn)}
      </td>
      <td data-label="SHORT best return" className="num">
        {ret(v?.bestShortReturn)}
      </td>
      <td data-label="SHORT worst return" className="num">
        {ret(v?.worstShortReturn)}
      </td>
      <td data-label="Details" className="cell-actions">
        <button ref={buttonRef} type="button" className="button button-secondary" onClick={onShow} aria-current={selected ? 'true' : undefined}>
          Show<span className="visually-hidden"> {event.name}</span>
        </button>
      </td>
    </tr>
  );
}

/** A floor as typed: a number from 0 to 1. */
function floorOf(text: string): number | null {
  const t = text.trim();
  if (!/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/.test(t)) return null;
  const n = Number(t);
  return n >= 0 && n <= 1 ? n : null;
}

/** One event: its quote (default floors, or the visitor's), bands as a chart and a table. Focus lands on its heading. */
function EventDetail({ row, defaults, focusTick, onHide }: { row: MarketRow; defaults: Floors | null; focusTick: number; onHide: () => void }) {
  const { event } = row;
  const ids = useId();
  const heading = useRef<HTMLHeadingElement>(null);
  const [floors, setFloors] = useState<Partial<Floors>>({});
  const custom = floors.floorL !== undefined || floors.floorS !== undefined;
  const input = { eventSlug: event.id, ...floors };
  const quote = useQuery({
    queryKey: ['tradingMarket.valuation', input],
    queryFn: () => api.tradingMarket.valuation.query(input),
    refetchInterval: REFRESH_MS,
    // The table's quote (default floors) draws the detail at once; other floors keep the last numbers until theirs arrive.
    placeholderData: (previous) => previous ?? (custom ? undefined : (row.quote ?? undefined)),
  });
  useEffect(() => heading.current?.focus(), [focusTick]);

  const q = quote.data;
  // The service's default floors: from the table, else from this quote while it uses them.
  const floorsKnown = defaults ?? (q && !custom ? q.settings : null);
  const winner = winnerLabel(event);
  return (
    <section className="card markets-detail" aria-labelledby={`${ids}-title`} aria-busy={quote.isPending || (quote.isPlaceholderData && quote.isFetching)}>
      <div className="markets-detail-head">
        <h2 id={`${ids}-title`} ref={heading} tabIndex={-1}>
          {event.name}
        </h2>
        <button type="button" className="button button-secondary" onClick={onHide}>
          Hide<span className="visually-hidden"> {event.name}</span>
        </button>
      </div>
      <p className="markets-status-cell">
        <StatusBadge event={event} />{' '}
        <span className="muted small">
          {STATUS[event.status].help}
          {winner ? `: ${winner}` : ''}
        </span>
      </p>
      {event.status !== 'open' ? (
        <p className="notice small">
          <strong>{outcomeOf(event)}.</strong> This event no longer trades: it has no returns to buy. The prices and costs below are the venue's last books,
          for reference only.
        </p>
      ) : null}
      {quote.isPending ? <p className="muted">Loading…</p> : null}
      {quote.isError ? <ErrorMessage error={quote.error} title={q ? 'The quote could not be refreshed: showing the last prices' : 'This event could not be priced'} /> : null}
      {q ? <QuoteView quote={q} custom={custom} outcome={outcomeOf(event)} /> : null}
      <ValuationHistory eventId={event.id} eventName={event.name} />
      <FloorsForm
        key={floorsKnown ? 'known' : 'unknown'}
        defaults={floorsKnown}
        custom={custom}
        onApply={setFloors}
        busy={quote.isFetching && quote.isPlaceholderData}
      />
      {q ? <BandsView quote={q} winner={winner} trading={event.status === 'open'} /> : null}
    </section>
  );
}

function QuoteView({ quote, custom, outcome }: { quote: Quote; custom: boolean; outcome: string | null }) {
  const v = quote.valuation;
  return (
    <div className="grid markets-facts">
      <dl className="facts">
        <dt>Implied valuation</dt>
        <dd className="figure">{formatBillions(quote.impliedValuation)}</dd>
        <dt>End date</dt>
        <dd>{formatDate(quote.endDate)}</dd>
        <dt>Volume traded</dt>
        <dd>{formatUsd(quote.totalVolume)}</dd>
        <dt>Floors used</dt>
        <dd>
          LONG {formatFloor(quote.settings.floorL)}, SHORT {formatFloor(quote.settings.floorS)}
          {custom ? ' (yours)' : ' (defaults)'}
        </dd>
        <dt>Prices as of</dt>
        <dd>
          <time className="markets-detail-as-of" dateTime={quote.timestamp}>
            {formatClock(quote.timestamp)}
          </time>
        </dd>
      </dl>
      <dl className="facts">
        <dt>LONG cost per unit</dt>
        <dd className="num">{formatUnitCost(v.longCost)}</dd>
        {outcome ? (
          <>
            <dt>SHORT cost per unit</dt>
            <dd className="num">{formatUnitCost(v.shortCost)}</dd>
            <dt>Outcome</dt>
            <dd>{outcome}</dd>
          </>
        ) : (
          <>
            <dt>LONG best return</dt>
            <dd className="num">{formatReturn(v.bestLongReturn)}</dd>
            <dt>LONG worst return</dt>
            <dd className="num">{formatReturn(v.worstLongReturn)}</dd>
            <dt>SHORT cost per unit</dt>
            <dd className="num">{formatUnitCost(v.shortCost)}</dd>
            <dt>SHORT best return</dt>
            <dd className="num">{formatReturn(v.bestShortReturn)}</dd>
            <dt>SHORT worst return</dt>
            <dd className="num">{formatReturn(v.worstShortReturn)}</dd>
          </>
        )}
      </dl>
    </div>
  );
}

/** Floors for this event's quote: two numbers from 0 to 1, applied on submit; "defaults" goes back to the service's. */
function FloorsForm({ defaults, custom, onApply, busy }: { defaults: Floors | null; custom: boolean; onApply: (floors: Partial<Floors>) => void; busy: boolean }) {
  const ids = useId();
  const [long, setLong] = useState(defaults ? String(defaults.floorL) : '');
  const [short, setShort] = useState(defaults ? String(defaults.floorS) : '');
  const [problem, setProblem] = useState<{ long?: boolean; short?: boolean } | null>(null);
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const floorL = floorOf(long);
    const floorS = floorOf(short);
    if (floorL === null || floorS === null) {
      setProblem({ long: floorL === null, short: floorS === null });
      return;
    }
    setProblem(null);
    onApply({ floorL, floorS });
  };
  const reset = () => {
    setProblem(null);
    setLong(defaults ? String(defaults.floorL) : '');
    setShort(defaults ? String(defaults.floorS) : '');
    onApply({});
  };
  const help = 'A number from 0 to 1: what a unit pays at least. A higher floor means a better worst case and a higher cost.';
  return (
    <form className="form markets-floors" onSubmit={submit} noValidate aria-labelledby={`${ids}-title`}>
      <h3 id={`${ids}-title`}>Try other floors</h3>
      <div className="markets-floor-fields">
        <div className="field">
          <label htmlFor={`${ids}-long`}>LONG floor</label>
          <input
            id={`${ids}-long`}
            type="number"
            inputMode="decimal"
            min={0}
            max={1}
            step={0.01}
            value={long}
            onChange={(e) => setLong(e.target.value)}
            aria-invalid={problem?.long ? true : undefined}
            aria-describedby={`${ids}-help`}
          />
        </div>
        <div className="field">
          <label htmlFor={`${ids}-short`}>SHORT floor</label>
          <input
            id={`${ids}-short`}
            type="number"
            inputMode="decimal"
            min={0}
            max={1}
            step={0.01}
            value={short}
            onChange={(e) => setShort(e.target.value)}
            aria-invalid={problem?.short ? true : undefined}
            aria-describedby={`${ids}-help`}
          />
        </div>
      </div>
      <p id={`${ids}-help`} className={problem ? 'field-error small' : 'muted small'}>
        {problem ? `Each floor must be a number from 0 to 1. ${help}` : help}
      </p>
      <div className="actions">
        <button type="submit" className="button button-primary" disabled={busy}>
          {busy ? 'Recalculating…' : 'Recalculate'}
        </button>
        <button type="button" className="button button-secondary" onClick={reset} disabled={!custom}>
          Use the default floors
        </button>
      </div>
    </form>
  );
}

function BandsView({ quote, winner, trading }: { quote: Quote; winner: string | null; trading: boolean }) {
  const name = quote.event.name;
  const bidAsk = new Map(quote.slippage.bandPrices.map((b) => [b.bandIndex, b]));
  const labels = quote.bands.map((b) => b.label);
  return (
    <>
      <h3>Bands</h3>
      <Chart
        kind="bar"
        labels={labels}
        series={[
          { label: 'Price', data: quote.bands.map((b) => b.price) },
          { label: 'Bid', kind: 'line', data: quote.bands.map((b) => bidAsk.get(b.bandIndex)?.bid ?? null) },
          { label: 'Ask', kind: 'line', data: quote.bands.map((b) => bidAsk.get(b.bandIndex)?.ask ?? null) },
        ]}
        label={`Band prices of ${name}: the price of each of its ${quote.bands.length} bands as bars, best bid and ask as lines (the table below lists them)`}
        format={(v) => formatUnitCost(v)}
      />
      <div className="markets-scroll" role="region" aria-label={`Bands of ${name} table`} tabIndex={0}>
        <table className="table table-stack table-pairs markets-table">
          <caption className="visually-hidden">Bands of {name}</caption>
          <thead>
            <tr>
              <th scope="col">Band</th>
              <th scope="col">Price</th>
              <th scope="col">Bid</th>
              <th scope="col">Ask</th>
              <th scope="col">LONG weight</th>
              <th scope="col">LONG allocation</th>
              <th scope="col">LONG return if it wins</th>
              <th scope="col">SHORT weight</th>
              <th scope="col">SHORT allocation</th>
              <th scope="col">SHORT return if it wins</th>
            </tr>
          </thead>
          <tbody>
            {quote.breakdown.map((b) => {
              const book = bidAsk.get(b.bandIndex);
              const won = winner !== null && b.label === winner;
              return (
                <tr key={b.bandIndex}>
                  <th scope="row" data-label="Band">
                    <span className="markets-band-label">{b.label}</span>
                    {won ? (
                      <>
                        {' '}
                        <span className="badge market-status market-status-resolved">
                          <span aria-hidden="true">✓</span> Won
                        </span>
                      </>
                    ) : null}
                  </th>
                  <td data-label="Price" className="num">
                    {formatPrice(b.price)}
                  </td>
                  <td data-label="Bid" className="num">
                    {formatPrice(book?.bid)}
                  </td>
                  <td data-label="Ask" className="num">
                    {formatPrice(book?.ask)}
                  </td>
                  <td data-label="LONG weight" className="num">
                    {formatWeight(b.longWeight)}
                  </td>
                  <td data-label="LONG allocation" className="num">
                    {formatShare(b.longAllocation)}
                  </td>
                  <td data-label="LONG return if it wins" className="num">
                    {trading ? formatReturn(b.longReturnIfWins) : NO_RETURN}
                  </td>
                  <td data-label="SHORT weight" className="num">
                    {formatWeight(b.shortWeight)}
                  </td>
                  <td data-label="SHORT allocation" className="num">
                    {formatShare(b.shortAllocation)}
                  </td>
                  <td data-label="SHORT return if it wins" className="num">
                    {trading ? formatReturn(b.shortReturnIfWins) : NO_RETURN}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}
