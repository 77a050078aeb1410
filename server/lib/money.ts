/**
 * Money is integer micro-USD everywhere inside the service (1 USD = 1,000,000 micros), and shares are
 * micro-shares on the same scale (1 share = 1,000,000), so these constants and conversions serve both.
 * Conversion to and from JSON numbers happens only at the API edge, through these functions.
 */
export const MICROS_PER_USD = 1_000_000;
/** The same scale for BigInt arithmetic (shares × price, amount × units). */
export const MICROS_PER_USD_BIGINT = BigInt(MICROS_PER_USD);

/** For already-validated inputs (see `usdAmount` in routers/params.ts): at most 6 decimals. */
export function usdToMicros(usd: number): number {
  return Math.round(usd * MICROS_PER_USD);
}

/** Micro-units → a JSON number (USD or shares). */
export function microsToUsd(micros: number): number {
  return micros / MICROS_PER_USD;
}

/** A JSON number rounded to the nearest micro (6 decimals), e.g. a price per share. */
export const roundToMicro = (value: number) => microsToUsd(usdToMicros(value));

/** a / b rounded to 6 decimals (an average price, a payout per unit); 0 when b is 0. */
export const microRatio = (a: number, b: number) => (b === 0 ? 0 : roundToMicro(a / b));

/** True when a JSON number has no more precision than a micro-USD. */
export function hasMicroPrecision(usd: number): boolean {
  const scaled = usd * MICROS_PER_USD;
  return Number.isFinite(scaled) && Math.abs(scaled - Math.round(scaled)) < 1e-6;
}

/** Header form: `0.002`, `0.02`, `0`, `1.5` — exact decimal, no float noise, no trailing zeros. */
export function formatUsd(micros: number): string {
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(Math.trunc(micros));
  const whole = Math.floor(abs / MICROS_PER_USD);
  const fraction = String(abs % MICROS_PER_USD).padStart(6, '0').replace(/0+$/, '');
  return `${sign}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** Parses a decimal string such as `0.002` exactly (used for configuration). */
export function parseUsd(text: string): number | undefined {
  const match = /^(\d{1,9})(?:\.(\d{1,6}))?$/.exec(text.trim());
  if (!match) return undefined;
  return Number(match[1]) * MICROS_PER_USD + Number((match[2] ?? '').padEnd(6, '0'));
}
