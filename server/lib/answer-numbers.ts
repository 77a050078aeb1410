/**
 * The API's one rule for numbers (docs/api.md, "Numbers"): no number in an answer has more than
 * MAX_ANSWER_DECIMALS (6) decimal places — micro precision, the scale of our money and share units.
 * A number with more is rounded to 6, half away from zero, on the decimal JSON would have written
 * (its shortest round-trip form). Money and shares (micro-units / 10^6) and integers already fit and
 * are never changed; what the rule removes is the float noise of computed figures (an implied
 * valuation of 927.7777777777777, a unit cost, a return, a slippage, a weight, a band's midpoint).
 *
 * Applied to answers, not to the computations: where a procedure's answer is produced — its output
 * step (platform/procedures/runner.ts, which /api, /trpc and the stream routes' JSON run; and, for
 * tRPC's own pipeline — its fetch adapter and createCaller — the gate middleware of
 * platform/procedures/builder.ts) — and where a stream message is built (streams/sinks.ts:
 * server-sent events and tRPC subscriptions). Answers cached per market snapshot are rounded once,
 * before they are cached. Integers and strings cost a `typeof` / `Number.isInteger` each; an answer
 * with nothing to round is the same object afterwards, not a copy.
 */

export const MAX_ANSWER_DECIMALS = 6;
const SCALE = 1e6;
/** From 2^33 on a double's spacing is ≥ 2^-19 > 10^-6: its shortest decimal has at most 6 decimals already. */
const FITS_ABOVE = 2 ** 33;
/**
 * How far |x| × 10^6 (a double) may be from the shortest decimal of x times 10^6, relative to it: half
 * an ulp of x scaled, plus the product's half ulp (2 × 2^-53), doubled for margin.
 */
const TIE_SLACK = 2 ** -51;

/**
 * `x` rounded to 6 decimals, half away from zero on its shortest decimal (the digits JSON.stringify
 * writes): 927.7777777777777 → 927.777778, 1.0000005 → 1.000001, -0.3251333333333334 → -0.325133,
 * 4e-7 → 0. Integers, non-finite numbers and numbers that already fit are returned as they are.
 */
export function roundAnswerNumber(x: number): number {
  if (Number.isInteger(x) || !Number.isFinite(x)) return x;
  const abs = x < 0 ? -x : x;
  if (abs >= FITS_ABOVE) return x;
  const scaled = abs * SCALE;
  let n = Math.round(scaled);
  if (n / SCALE === abs) return x; // already at most 6 decimals
  // Within the product's binary error of a tie (1.0000005 × 10^6 = 1000000.4999…), the decimal digits decide.
  const fraction = scaled - Math.floor(scaled);
  if (Math.abs(fraction - 0.5) <= scaled * TIE_SLACK) n = roundedDecimal(abs);
  if (n === 0) return 0; // not -0
  const rounded = n / SCALE;
  return x < 0 ? -rounded : rounded;
}

/** |x| × 10^6 rounded half up on the digits of x's shortest decimal (for |x| < 2^33). */
function roundedDecimal(abs: number): number {
  const text = String(abs);
  const e = text.indexOf('e');
  if (e >= 0) return abs >= 5e-7 ? 1 : 0; // below 10^-6 (1e21 and up never reach here)
  const dot = text.indexOf('.');
  const whole = Number(text.slice(0, dot));
  const digits = text.slice(dot + 1);
  const kept = Number(digits.slice(0, MAX_ANSWER_DECIMALS).padEnd(MAX_ANSWER_DECIMALS, '0'));
  return whole * SCALE + kept + (digits.charCodeAt(MAX_ANSWER_DECIMALS) >= 53 /* '5' */ ? 1 : 0);
}

/**
 * An answer with every number rounded by the rule: the same value when nothing needs it (no copy),
 * otherwise a copy of the objects and arrays on the way to a number that changed (the rest shared;
 * the answer itself is never modified, so frozen and shared answers are safe). Plain data only
 * (what JSON.stringify writes): objects with a toJSON (Dates) and other non-plain objects are left as
 * they are.
 */
export function roundAnswerNumbers<T>(value: T): T {
  if (typeof value === 'number') return roundAnswerNumber(value) as T;
  if (typeof value !== 'object' || value === null) return value;
  return roundedContainer(value as object) as T;
}

function roundedContainer(value: object): object {
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      let next: unknown = item;
      if (typeof item === 'number') next = roundAnswerNumber(item);
      else if (typeof item === 'object' && item !== null) next = roundedContainer(item);
      if (next !== item) (copy ??= value.slice())[i] = next;
    }
    return copy ?? value;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  let copy: Record<string, unknown> | undefined;
  for (const key in value) {
    const item: unknown = (value as Record<string, unknown>)[key];
    let next: unknown = item;
    if (typeof item === 'number') next = roundAnswerNumber(item);
    else if (typeof item === 'object' && item !== null) next = roundedContainer(item);
    if (next !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = next;
  }
  return copy ?? value;
}
