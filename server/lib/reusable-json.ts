/**
 * JSON bodies serialized once. An answer object that is served many times unchanged (market data
 * within one snapshot, the price list) is marked reusable; the REST bridge then serializes it once
 * and reuses the text, and validates it against a procedure's output schema once (platform/procedures/runner.ts).
 * Serializing a valuation (~180 numbers) costs more than computing it.
 */
const bodies = new WeakMap<object, string>();
const reusable = new WeakSet<object>();

/** Marks an answer that will never be mutated, so its JSON text may be kept. */
export function markReusable<T extends object>(answer: T): T {
  reusable.add(answer);
  return answer;
}

/** Shared by every request from now on: nothing may change it (a reusable answer, all the way down). */
export function deepFreeze<T extends object>(value: T): T {
  for (const inner of Object.values(value)) if (typeof inner === 'object' && inner !== null && !Object.isFrozen(inner)) deepFreeze(inner);
  return Object.freeze(value);
}

export function isReusable(answer: unknown): answer is object {
  return typeof answer === 'object' && answer !== null && reusable.has(answer);
}

export function jsonText(data: unknown): string {
  if (typeof data !== 'object' || data === null || !reusable.has(data)) return JSON.stringify(data);
  let text = bodies.get(data);
  if (text === undefined) bodies.set(data, (text = JSON.stringify(data)));
  return text;
}
