/**
 * Query strings and path parameters arrive as text; procedures' schemas take JSON types (a `limit`
 * is a number on tRPC, where clients send numbers). So REST converts, before validation, the text of
 * each member whose schema is a number into that number, and a single value of a list member into a
 * list — read once per route from the input schema (zod's public `def`). Text that is not a plain
 * decimal stays text and fails the schema with its own message ("must be a whole number…").
 */
import type { z } from 'zod';

type Convert = (value: unknown) => unknown;
export type RestInputConversion = (input: Record<string, unknown>) => Record<string, unknown>;

const DECIMAL = /^-?\d+(\.\d+)?$/;

/** Digits too many for a double still make a (huge) number, so the answer names the range. */
function numberFromText(value: unknown): unknown {
  if (typeof value !== 'string' || !DECIMAL.test(value)) return value;
  const n = Number(value);
  return Number.isFinite(n) ? n : Math.sign(n) * Number.MAX_VALUE;
}

type Def = { type: string; innerType?: z.ZodType; in?: z.ZodType; element?: z.ZodType; shape?: Record<string, z.ZodType> };
const defOf = (schema: z.ZodType) => (schema as unknown as { def: Def }).def;

/** Wrappers whose inner schema decides the member's type. */
const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch', 'nonoptional']);

function unwrapped(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (let def = defOf(s); ; def = defOf(s)) {
    if (WRAPPERS.has(def.type) && def.innerType) s = def.innerType;
    else if (def.type === 'pipe' && def.in) s = def.in;
    else return s;
  }
}

function conversionOf(schema: z.ZodType): Convert | undefined {
  const inner = unwrapped(schema);
  const def = defOf(inner);
  if (def.type === 'number') return numberFromText;
  if (def.type === 'array' && def.element) {
    const element = conversionOf(def.element);
    return (value) => {
      const list = typeof value === 'string' ? [value] : value;
      return element && Array.isArray(list) ? list.map(element) : list;
    };
  }
  return undefined;
}

const unchanged: RestInputConversion = (input) => input;

/** The conversion of a route's text parameters, or none when its input has no number or list member. */
export function restInputConversion(schema: z.ZodType | undefined): RestInputConversion {
  if (!schema) return unchanged;
  const object = unwrapped(schema);
  const shape = (object as unknown as { shape?: Record<string, z.ZodType> }).shape;
  if (defOf(object).type !== 'object' || !shape) return unchanged;
  const members = Object.entries(shape).flatMap(([name, member]) => {
    const convert = conversionOf(member);
    return convert ? [[name, convert] as const] : [];
  });
  if (members.length === 0) return unchanged;
  return (input) => {
    let converted = input;
    for (const [name, convert] of members) {
      if (!Object.hasOwn(input, name)) continue;
      const value = convert(input[name]);
      if (value === input[name]) continue;
      if (converted === input) converted = Object.assign(Object.create(null), input);
      converted[name] = value;
    }
    return converted;
  };
}
