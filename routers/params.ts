/**
 * Input and output building blocks shared by the routers. Inputs take JSON types (a number is a
 * number): the REST bridge converts query and path text to them first (server/platform/http/rest-input.ts),
 * so both transports validate the same values with the same messages. Each call returns a new schema
 * instance (nothing is shared, nothing is mutated later).
 */
import { z } from 'zod';
import { IDENTIFIER, IDENTIFIER_RULE } from '../server/lib/identifiers.ts';
import { INPUT_LIMITS } from '../server/lib/input-limits.ts';
import { hasMicroPrecision } from '../server/lib/money.ts';

const NOT_WHOLE = 'must be a whole number in decimal digits';

/**
 * A whole number from `min` to `max` (on REST, a query parameter's plain decimal digits; `0x2`, `1e2`,
 * `1.5`, `` are refused). Each failure says its own rule: not a whole number, or out of range
 * ("must be from 1 to 200"; a range failure stops there, so it is the one message).
 */
export function wholeNumber(opts: { min: number; max: number }) {
  const range = { error: `must be from ${opts.min} to ${opts.max}`, abort: true };
  return z
    .number({ error: (issue) => (issue.input === undefined ? undefined : NOT_WHOLE) })
    .min(opts.min, range)
    .max(opts.max, range)
    .int({ error: NOT_WHOLE });
}

// The instants a date parameter may name (INPUT_LIMITS.minDate/maxDate): both databases store them,
// and JavaScript prints them as four-digit ISO 8601 years.
const EARLIEST = Date.parse(`${INPUT_LIMITS.minDate}T00:00:00.000Z`);
const LATEST = Date.parse(`${INPUT_LIMITS.maxDate}T23:59:59.999Z`);

const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|([+-])(\d{2}):?(\d{2})))?$/;
const NOT_ISO = 'must be an ISO 8601 date or date-time, e.g. 2026-11-22 or 2026-11-22T06:00:00Z';

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const daysIn = (year: number, month: number) => (month === 2 && isLeap(year) ? 29 : DAYS_IN_MONTH[month - 1]!);
const END_OF_DAY_MS = 86_400_000 - 1;

/**
 * The one ISO 8601 parser for every date input: a real calendar date (no 2026-02-31 rolling over
 * into March), a real time (hours 00–23, minutes and seconds 00–59), an offset within ±14:00, and
 * an instant within INPUT_LIMITS.minDate–maxDate. A date alone means the start of that UTC day, or its last
 * millisecond with `endOfDay`. Returns the Date, or the rule the text broke.
 */
export function parseIsoInstant(text: string, opts: { endOfDay?: boolean } = {}): Date | string {
  const m = ISO_INSTANT.exec(text);
  if (!m) return NOT_ISO;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return 'is not a real calendar date';
  let ms: number;
  if (m[4] === undefined) {
    ms = opts.endOfDay ? END_OF_DAY_MS : 0;
  } else {
    const [hour, minute, second] = [Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
    if (hour > 23 || minute > 59 || second > 59) return 'is not a real time of day';
    const offsetMinutes = m[8] === 'Z' ? 0 : (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11]));
    if (Number(m[11]) > 59 || Math.abs(offsetMinutes) > 14 * 60) return 'has an offset outside -14:00 to +14:00';
    ms = ((hour * 60 + minute - offsetMinutes) * 60 + second) * 1000 + Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  }
  // Date.UTC maps years 0-99 to 1900-1999: set the year itself.
  const midnight = new Date(0);
  midnight.setUTCFullYear(year, month - 1, day);
  const instant = midnight.getTime() + ms;
  if (instant < EARLIEST || instant > LATEST) return `must be from ${INPUT_LIMITS.minDate} to ${INPUT_LIMITS.maxDate} (UTC)`;
  return new Date(instant);
}

/** A date parameter (see parseIsoInstant); a 400 names the parameter and the rule it broke. */
export function isoInstant(opts: { endOfDay?: boolean; description?: string } = {}) {
  return z
    .string()
    .max(40, { error: NOT_ISO, abort: true }) // the longest form, 2026-11-22T06:00:00.123456789+05:30, is 35
    .meta({ description: opts.description, example: '2026-11-22' })
    .transform((s, ctx) => {
      const parsed = parseIsoInstant(s, opts);
      if (typeof parsed === 'string') {
        ctx.addIssue({ code: 'custom', message: parsed });
        return z.NEVER;
      }
      return parsed;
    });
}

/** A USD amount as a JSON number with at most 6 decimals (one micro-USD). */
export function usdAmount(opts: { min: number; max: number }) {
  return z
    .number()
    .min(opts.min)
    .max(opts.max)
    .refine(hasMicroPrecision, 'must have at most 6 decimal places');
}

/** Identifier texts of docs/decisions.md §1/§3: the one pattern of server/lib/identifiers.ts. */
/** A boolean parameter: a boolean on tRPC, its text on REST (a query string has no booleans); one pipe, so the OpenAPI generator takes it as a query parameter. */
export const queryBoolean = (description: string, example: boolean) =>
  z
    .union([z.boolean(), z.enum(['true', 'false'])], { error: 'must be true or false' })
    .transform((v) => v === true || v === 'true')
    .meta({ description, example })
    .optional();

export const identifier = () => z.string().regex(IDENTIFIER, `must be ${IDENTIFIER_RULE}`);

/** Outputs: timestamps travel as ISO 8601 UTC strings with milliseconds. */
export const isoString = () => z.string().meta({ format: 'date-time', example: '2026-11-22T06:00:00.000Z' });
export const iso = (d: Date) => d.toISOString();
export const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * Query or body parameters that are all optional: strict (an unknown parameter is a 400 naming it),
 * and absent input counts as `{}` so typed clients may call `.query()` with no argument.
 * `prefault` (unlike `default`) still runs the inner defaults.
 */
export function optionalParams<Shape extends z.core.$ZodLooseShape>(shape: Shape, rules: ParamRules<z.output<z.ZodObject<Shape, z.core.$strict>>> = {}) {
  return withRules(z.strictObject(shape), rules).prefault({} as never);
}

/** The object of parameters with its rules between parameters (ParamRules) added. */
export function withRules<Params extends z.ZodObject>(params: Params, rules: ParamRules<z.output<Params>>): Params {
  const { ordered = [], check } = rules;
  if (ordered.length === 0 && !check) return params;
  return params.superRefine((value, ctx) => {
    for (const [low, high] of ordered) {
      const [a, b] = [value[low], value[high]] as unknown[];
      if (a === undefined || b === undefined || !((a as number) > (b as number))) continue;
      ctx.addIssue({ code: 'custom', path: [low as string], message: `must not be ${typeof a === 'number' ? 'greater than' : 'after'} ${String(high)}` });
    }
    const problem = check?.(value);
    if (problem) ctx.addIssue({ code: 'custom', path: [problem.parameter as string], message: problem.rule });
  });
}

/**
 * Rules between parameters, checked with the input so that breaking one is a 400 before any charge
 * (the billing gate parses the input before it reserves; a handler's own 400 would come after a 402).
 * `ordered`: [low, high] pairs that, when both are given, must have low ≤ high (numbers, dates, or
 * YYYY-MM-DD texts); `check`: any other rule, answering the parameter it blames and the rule, or null.
 */
export interface ParamRules<T> {
  ordered?: ReadonlyArray<readonly [keyof T, keyof T]>;
  check?: (value: T) => { parameter: keyof T; rule: string } | null;
}

/** No parameters at all. */
export const noInput = () => optionalParams({});
