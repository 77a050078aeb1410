/**
 * Input and output building blocks shared by the routers. Query strings arrive as text on REST and as
 * JSON values on tRPC; these schemas accept both the same way, so the two transports never differ.
 * Each call returns a new schema instance (nothing is shared, nothing is mutated later).
 */
import { z } from 'zod';
import { hasMicroPrecision } from '../server/lib/money.ts';

const DECIMAL_INT = /^-?\d{1,16}$/;

/** A whole number given as a JSON number or a plain decimal string (`0x2`, `1e2`, `1.5`, `` are refused). */
export function wholeNumber(opts: { min?: number; max?: number } = {}) {
  let n = z
    .number({ error: (issue) => (issue.input === undefined ? undefined : 'must be a whole number in decimal digits') })
    .int({ error: 'must be a whole number in decimal digits' });
  if (opts.min !== undefined) n = n.min(opts.min);
  if (opts.max !== undefined) n = n.max(opts.max);
  return z.preprocess((v) => (typeof v === 'string' && DECIMAL_INT.test(v) ? Number(v) : v), n);
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * An ISO 8601 instant, or a date (`2026-11-22`). A date means the start of that UTC day, or its last
 * millisecond with `endOfDay` (so `to=2026-11-22` includes the whole day).
 */
export function isoInstant(opts: { endOfDay?: boolean; description?: string } = {}) {
  return z
    .string()
    .meta({ description: opts.description, example: '2026-11-22' })
    .refine((s) => DATE_ONLY.test(s) || DATE_TIME.test(s), 'must be an ISO 8601 date or date-time, e.g. 2026-11-22 or 2026-11-22T06:00:00Z')
    .transform((s, ctx) => {
      const date = DATE_ONLY.test(s) ? new Date(`${s}T${opts.endOfDay ? '23:59:59.999' : '00:00:00.000'}Z`) : new Date(s);
      if (Number.isNaN(date.getTime())) {
        ctx.addIssue({ code: 'custom', message: 'is not a real date' });
        return z.NEVER;
      }
      return date;
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

/** Identifier texts of decisions §1/§3: 1–128 chars of [A-Za-z0-9._:@-]. */
export const identifier = () => z.string().regex(/^[A-Za-z0-9._:@-]{1,128}$/, 'must be 1-128 characters of A-Z a-z 0-9 . _ : @ -');

/** Outputs: timestamps travel as ISO 8601 UTC strings with milliseconds. */
export const isoString = () => z.string().meta({ format: 'date-time', example: '2026-11-22T06:00:00.000Z' });
export const iso = (d: Date) => d.toISOString();
export const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * Query or body parameters that are all optional: strict (an unknown parameter is a 400 naming it),
 * and absent input counts as `{}` so typed clients may call `.query()` with no argument.
 * `prefault` (unlike `default`) still runs the inner defaults.
 */
export function optionalParams<Shape extends z.core.$ZodLooseShape>(shape: Shape) {
  return z.strictObject(shape).prefault({} as never);
}

/** No parameters at all. */
export const noInput = () => optionalParams({});
