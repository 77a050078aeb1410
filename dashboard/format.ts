/** Display formats: USD amounts with the precision they need, dates in the visitor's locale. */

const usd2 = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 });
const usd6 = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 6 });
const count = new Intl.NumberFormat('en-US');
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/**
 * USD: cents for ordinary amounts; amounts with fractions of a cent (per-request rates, small
 * metered spend) keep up to 6 decimals (one micro-USD, the service's precision) so $0.000125 never
 * shows as $0.00.
 */
export function formatUsd(amount: number | null | undefined): string {
  if (amount === null || amount === undefined || !Number.isFinite(amount)) return '—';
  const cents = Math.round(amount * 100) / 100;
  return Math.abs(amount - cents) < 1e-9 ? usd2.format(amount) : usd6.format(amount);
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
