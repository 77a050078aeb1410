/**
 * Selling a position from the dashboard: the customer picks a percentage, sees the sale's quote
 * (POST /trading/sell/quote: proceeds, average price per unit, P&L, any band that would not sell)
 * and the price protection the sale will carry — `minAveragePrice`, the quoted average less a
 * tolerance they choose — and only then confirms. If the bids fall further before the sale reaches
 * the venue, the sale is refused with nothing sent, rather than filled at a worse price.
 * Each confirmation carries one Idempotency-Key, made with its quote: a retry sells once.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { microsToUsd, usdToMicros } from '../../../server/lib/money.ts';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { formatShares, formatSignedUsd, formatUnitCost, formatUsd, pnlClass } from '../../format.ts';
import { forUser, problemOf, saleClient, type Outputs } from '../../trpc.ts';
import { useNames } from './events.ts';

type Quote = Outputs['trading']['sellQuote'];
type Sale = Outputs['trading']['sell'];
/** The partial percentages a sale accepts (the position's `partialSaleRange`), or null: 100% only. */
export type SaleRange = Outputs['positions']['get']['partialSaleRange'];

/** The protection a sale gets by default: refused below 2% under the quoted average. */
const DEFAULT_TOLERANCE_PERCENT = 2;

/**
 * The least average price per unit the sale accepts: the quote less the tolerance, rounded down to a
 * micro-dollar (the direction that lets a sale at the quoted price through). In integer micros, so a
 * 0% tolerance is exactly the quote.
 */
export function protectionFor(averagePrice: number, tolerancePercent: number): number {
  const micros = usdToMicros(averagePrice);
  return microsToUsd(Math.floor((micros * Math.round((100 - tolerancePercent) * 100)) / 10_000));
}

/** What the form says before anything is asked: the percentages this position's sale accepts. */
export function rangeText(range: SaleRange): string {
  if (!range) return 'You can sell 100% only: a smaller sale would leave a band under the venue minimum.';
  // Every partial percentage up to 99.99 works: the range runs on to 100.
  if (range.highest >= 99.99) return `You can sell ${range.lowest}%–100%.`;
  return `You can sell ${range.lowest}%–${range.highest}%, or 100%.`;
}

/** Why `pct` is refused before anything is sent (outside the range), or null when a sale accepts it. */
export function outsideRange(pct: number, range: SaleRange): string | null {
  if (pct === 100) return null;
  if (!range) return `Only 100% can be sold: a partial sale would leave a band under the venue minimum.`;
  if (pct < range.lowest) return `${pct}% is too small: a band's order would be under the venue minimum. ${rangeText(range)}`;
  if (pct > range.highest) return `${pct}% would leave a band with fewer shares than the venue minimum. ${rangeText(range)}`;
  return null;
}

export function SellPanel({ userId, positionId, title, range, onSaleStarted }: { userId: string; positionId: string; title: string; range: SaleRange; onSaleStarted: () => void }) {
  const ids = useId();
  const queryClient = useQueryClient();
  const [percentage, setPercentage] = useState('100');
  const [tolerance, setTolerance] = useState(String(DEFAULT_TOLERANCE_PERCENT));
  // One quote, one Idempotency-Key; the protection is frozen into it at the first confirmation, so a
  // retry of that confirmation is the very same request (the same key with another body is a 409).
  const [quoted, setQuoted] = useState<{ quote: Quote; idempotencyKey: string; sentMinAveragePrice?: number } | null>(null);
  // Set synchronously on the first click: a second click before React re-renders sends nothing.
  const sending = useRef(false);
  const [problem, setProblem] = useState<string | null>(null);
  const summary = useRef<HTMLHeadingElement>(null);
  const names = useNames();

  const quote = useMutation({
    mutationFn: (pct: number) => forUser(userId).trading.sellQuote.mutate({ positionId, percentage: pct }),
    onSuccess: (q) => setQuoted({ quote: q, idempotencyKey: crypto.randomUUID() }),
  });
  const sale = useMutation({
    mutationFn: ({ q, key, minAveragePrice }: { q: Quote; key: string; minAveragePrice: number }) =>
      saleClient(userId, key).trading.sell.mutate({ positionId, percentage: q.percentage, minAveragePrice }),
    onSettled: () => {
      sending.current = false;
      for (const key of ['positions.list', 'positions.get', 'orders.list', 'orders.history', 'settlements.list', 'tradingUsers.list']) void queryClient.invalidateQueries({ queryKey: [key] });
    },
  });
  useEffect(() => {
    if (quoted) summary.current?.focus();
  }, [quoted]);

  const tolerancePercent = Number(tolerance);
  const toleranceOk = /^\d{1,2}(\.\d{1,2})?$/.test(tolerance.trim()) && tolerancePercent <= 50;
  const minAveragePrice = quoted?.sentMinAveragePrice ?? (quoted && toleranceOk ? protectionFor(quoted.quote.averagePrice, tolerancePercent) : null);
  // A sale whose outcome is unknown (no answer, 5xx, still running) may have sold: only the same
  // request again (same key, same body) is offered until it answers.
  const outcomeUnknown = sale.isError && !isDefiniteRefusal(sale.error);
  const locked = sale.isPending || outcomeUnknown;

  const confirm = () => {
    if (!quoted || minAveragePrice === null || sending.current) return;
    sending.current = true;
    onSaleStarted();
    setQuoted({ ...quoted, sentMinAveragePrice: minAveragePrice });
    sale.mutate({ q: quoted.quote, key: quoted.idempotencyKey, minAveragePrice });
  };

  const askQuote = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (locked) return;
    const pct = range ? Number(percentage) : 100;
    if (!/^\d{1,3}(\.\d{1,2})?$/.test(percentage.trim()) || pct < 1 || pct > 100) {
      setProblem(`Enter a percentage from 1 to 100 (up to two decimals). ${rangeText(range)}`);
      return;
    }
    // Outside the range the sale would be refused: said here, nothing sent.
    const outside = outsideRange(pct, range);
    if (outside) {
      setProblem(outside);
      return;
    }
    setProblem(null);
    setQuoted(null);
    sale.reset();
    quote.mutate(pct);
  };

  if (sale.isSuccess) return <SaleDone sale={sale.data} title={title} />;

  return (
    <section className="sell" aria-labelledby={`${ids}-title`}>
      <h4 id={`${ids}-title`}>Sell</h4>
      <form className="form" onSubmit={askQuote}>
        <fieldset className="plain-fieldset" disabled={locked}>
          <legend className="visually-hidden">The sale</legend>
        <div className="field-row">
          <div className="field">
            <label htmlFor={`${ids}-pct`}>Percentage to sell</label>
            <input
              id={`${ids}-pct`}
              type="text"
              inputMode="decimal"
              autoComplete="off"
              // 100% only: nothing else to type (read-only, so it stays focusable and its reason is read with it).
              value={range ? percentage : '100'}
              readOnly={!range}
              onChange={(e) => {
                setPercentage(e.target.value);
                setQuoted(null);
                setProblem(null);
              }}
              aria-invalid={problem ? true : undefined}
              aria-describedby={`${ids}-pct-range ${ids}-pct-help`}
            />
            <p id={`${ids}-pct-range`} className="small sell-range">
              <strong>{rangeText(range)}</strong>
            </p>
            <p id={`${ids}-pct-help`} className={problem ? 'field-error small' : 'muted small'}>
              {problem ?? 'Every band sells the same fraction; 100% closes the position.'}
            </p>
          </div>
          <div className="field">
            <label htmlFor={`${ids}-tol`}>Price protection (% under the quote)</label>
            <input
              id={`${ids}-tol`}
              type="text"
              inputMode="decimal"
              autoComplete="off"
              value={tolerance}
              onChange={(e) => setTolerance(e.target.value)}
              aria-invalid={toleranceOk ? undefined : true}
              aria-describedby={`${ids}-tol-help`}
            />
            <p id={`${ids}-tol-help`} className={toleranceOk ? 'muted small' : 'field-error small'}>
              {toleranceOk ? 'The sale is refused, with nothing sent, if the bids fall further than this before it reaches the venue.' : 'Enter 0 to 50.'}
            </p>
          </div>
        </div>
        <div className="actions">
          <button type="submit" className="button button-secondary" disabled={quote.isPending}>
            {quote.isPending ? 'Quoting…' : quoted ? 'Quote again' : 'Preview sale'}
          </button>
        </div>
        </fieldset>
      </form>
      {quote.isError ? <ErrorMessage error={quote.error} title="The sale could not be quoted" /> : null}
      {quoted ? (
        <div className="quote" role="region" aria-labelledby={`${ids}-quote`}>
          <h5 id={`${ids}-quote`} ref={summary} tabIndex={-1}>
            Selling {quoted.quote.percentage}% of {title}
          </h5>
          <dl className="facts facts-inline">
            <dt>Units sold</dt>
            <dd>{formatShares(quoted.quote.units)}</dd>
            <dt>Proceeds at the bids now (before venue fees)</dt>
            <dd className="figure">{formatUsd(quoted.quote.totalProceeds)}</dd>
            <dt>Average per unit</dt>
            <dd>{formatUnitCost(quoted.quote.averagePrice)}</dd>
            <dt>Estimated P&amp;L</dt>
            <dd className={pnlClass(quoted.quote.estimatedPnl)}>{formatSignedUsd(quoted.quote.estimatedPnl)}</dd>
            <dt>Price protection</dt>
            <dd>{minAveragePrice === null ? '—' : <>refused below {formatUnitCost(minAveragePrice)} per unit</>}</dd>
          </dl>
          {!quoted.quote.allSellable ? (
            <p className="notice notice-warning">
              Some bands would not sell (no bids, or fewer shares than the venue minimum): their shares stay in the position.
            </p>
          ) : null}
          <table className="table table-stack table-pairs">
            <caption>Orders the sale would send</caption>
            <thead>
              <tr>
                <th scope="col">Band</th>
                <th scope="col" className="num">Shares</th>
                <th scope="col" className="num">Worst bid reached</th>
                <th scope="col" className="num">Proceeds</th>
              </tr>
            </thead>
            <tbody>
              {quoted.quote.bands.map((b) => (
                <tr key={b.bandId}>
                  <th scope="row" data-label="Band">
                    {names.band(b.bandId)}
                    {b.unsellable ? <span className="muted small"> (would not sell: {b.unsellable})</span> : null}
                  </th>
                  <td data-label="Shares" className="num">
                    {formatShares(b.shares)}
                  </td>
                  <td data-label="Worst bid reached" className="num">
                    {formatUnitCost(b.worstPrice)}
                  </td>
                  <td data-label="Proceeds" className="num">
                    {formatUsd(b.proceeds)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <div className="actions">
            <button type="button" className="button button-danger" disabled={sale.isPending || minAveragePrice === null || (sale.isError && !outcomeUnknown)} onClick={confirm}>
              {sale.isPending ? 'Selling…' : outcomeUnknown ? 'Retry the same sale' : `Confirm sale of ${quoted.quote.percentage}%`}
            </button>
            {outcomeUnknown ? null : (
              <button type="button" className="button button-secondary" disabled={sale.isPending} onClick={() => setQuoted(null)}>
                Cancel
              </button>
            )}
          </div>
          {sale.isError ? (
            <ErrorMessage
              error={sale.error}
              title={outcomeUnknown ? 'The sale\'s outcome is not known yet: retry it (it cannot sell twice), or check the orders below' : 'The sale did not go through'}
            />
          ) : null}
        </div>
      ) : null}
    </section>
  );
}

function SaleDone({ sale, title }: { sale: Sale; title: string }) {
  const heading = useRef<HTMLParagraphElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <div className="notice notice-success" role="status">
      <p className="notice-title" ref={heading} tabIndex={-1}>
        Sold {sale.percentage}% of {title}: the position is {sale.status}.
      </p>
      <p>
        Proceeds {formatUsd(sale.totalProceeds)}, realized P&amp;L <span className={pnlClass(sale.realizedPnl)}>{formatSignedUsd(sale.realizedPnl)}</span>.
      </p>
      {sale.unsold.length ? (
        <p>
          Not sold (the shares stay in the position):{' '}
          {sale.unsold.map((u) => `${u.bandId} ${formatShares(u.shares)} shares (${u.reason})`).join('; ')}
        </p>
      ) : null}
    </div>
  );
}

/**
 * An answer that says the sale did not happen: a 4xx refusal (protection, shape, rate limit…).
 * Not: no answer at all, a 5xx, or 409 (the same sale is still running).
 */
function isDefiniteRefusal(error: unknown): boolean {
  const { status } = problemOf(error);
  return status >= 400 && status < 500 && status !== 409;
}
