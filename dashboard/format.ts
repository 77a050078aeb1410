/** Display formats: USD amounts with the precision they need, dates in the visitor's locale. */

const usd2 = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 });
const usd6 = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 6 });
const count = new Intl.NumberFormat('en-US');
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/**
 * USD a customer reads as money (balances, costs, deposits, proceeds, P&L): dollars and cents,
 * rounded to the nearest cent ($143.01604 → $143.02). Prices keep their precision: a per-request
 * rate with formatRate, a per-unit price with formatUnitCost.
 */
export function formatUsd(amount: number | null | undefined): string {
  if (amount === null || amount === undefined || !Number.isFinite(amount)) return '—';
  return usd2.format(amount);
}

/**
 * A per-request price (the plan's rate, one request's cost): at least cents, up to 6 decimals (one
 * micro-USD, the service's precision) so $0.002 or $0.000125 never shows as $0.00.
 */
export function formatRate(amount: number | null | undefined): string {
  if (amount === null || amount === undefined || !Number.isFinite(amount)) return '—';
  return usd6.format(amount);
}

export const formatCount = (n: number): string => count.format(n);

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : dateTime.format(d);
}

/** 0x1234…abcd for long hashes and addresses (the full text stays in the title / copy). */
export function shortHex(hex: string, keep = 6): string {
  return hex.length <= keep * 2 + 3 ? hex : `${hex.slice(0, keep + 2)}…${hex.slice(-keep)}`;
}

const shares = new Intl.NumberFormat('en-US', { maximumFractionDigits: 6 });
const percent = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2, signDisplay: 'exceptZero' });

/** Shares and units: up to 6 decimals (a micro-share is the service's precision). */
export const formatShares = (n: number): string => shares.format(n);

/** A gain or loss in USD with its sign in words' place: +$1.20, −$0.35, $0.00. */
export function formatSignedUsd(amount: number): string {
  if (!Number.isFinite(amount)) return '—';
  const text = formatUsd(Math.abs(amount));
  return amount > 0 ? `+${text}` : amount < 0 ? `\u2212${text}` : text;
}

/** A percentage already in percent (12.5 → +12.5%). */
export const formatPercent = (n: number): string => (Number.isFinite(n) ? `${percent.format(n)}%` : '—');

/** The class that colours a gain or a loss (the sign is always in the text too, never colour alone). */
export const pnlClass = (n: number): string => (n > 0 ? 'pnl-up' : n < 0 ? 'pnl-down' : '');

const usdUnit = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 4, maximumFractionDigits: 4 });
const usdBillions = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 1, maximumFractionDigits: 1 });
const isNumber = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

/** Cost of one LONG or SHORT unit: USD with 4 decimals ("$0.8614"). */
export const formatUnitCost = (v: number | null | undefined): string => (isNumber(v) ? usdUnit.format(v) : '—');

/** An implied valuation, in billions of USD ("$2,098.0B"). */
export const formatBillions = (v: number | null | undefined): string => (isNumber(v) ? `${usdBillions.format(v)}B` : '—');

/** The start of an hour or day bucket (a chart's axis, a table's row), in UTC: "Nov 24 13:00" or "Nov 24". */
export function formatBucket(iso: string, unit: 'minute' | 'hour' | 'day'): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const day = d.toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
  return unit === 'day' ? day : `${day} ${d.toISOString().slice(11, 16)}`;
}
