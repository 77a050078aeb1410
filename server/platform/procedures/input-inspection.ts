/**
 * What every base procedure checks in its raw input before the handler: an input the transport could
 * not read (procedures/deferred-input.ts), then text with a NUL character (which PostgreSQL cannot store).
 */
import { ApiError } from '../../errors.ts';
import { throwIfDeferredInputError } from './deferred-input.ts';

/**
 * The path of the first string in `input` holding a NUL character (PostgreSQL cannot store one).
 * Iterative (an explicit stack), so no nesting depth can overflow it; the path is built only for a hit.
 */
function nulPath(input: unknown): string | undefined {
  if (typeof input === 'string') return input.includes('\u0000') ? '' : undefined;
  if (typeof input !== 'object' || input === null) return undefined;
  // Most inputs are flat (query parameters, small bodies): no stack for them (every public request
  // comes here, /api/pricing's `{}` included).
  let flat = true;
  for (const name in input) {
    const value = (input as Record<string, unknown>)[name];
    if (typeof value === 'object' && value !== null) flat = false;
    else if (flat && typeof value === 'string' && value.includes('\u0000')) return name;
  }
  if (flat) return undefined;
  // Every node met: its value, its key and its parent's index. The stack holds the nodes still to visit.
  const values: unknown[] = [input];
  const keys: string[] = [''];
  const parents: number[] = [-1];
  const stack: number[] = [0];
  while (stack.length > 0) {
    const at = stack.pop()!;
    const value = values[at];
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return pathTo(at, keys, parents);
    } else if (typeof value === 'object' && value !== null) {
      const names = Object.keys(value);
      // Pushed in reverse, so the first NUL in document order is the one named.
      for (let i = names.length - 1; i >= 0; i--) {
        stack.push(values.length);
        values.push((value as Record<string, unknown>)[names[i]!]);
        keys.push(names[i]!);
        parents.push(at);
      }
    }
  }
  return undefined;
}

function pathTo(at: number, keys: string[], parents: number[]): string {
  const names: string[] = [];
  for (let node = at; node > 0; node = parents[node]!) names.push(keys[node]!);
  return names.reverse().join('.');
}

/** A path in a message is cut to its last MAX_PATH_IN_MESSAGE characters (deep input makes long paths). */
const MAX_PATH_IN_MESSAGE = 120;

/**
 * What every route checks in its raw input before the handler: an input the transport could not read
 * (malformed JSON, wrong Content-Type, too deep; see procedures/deferred-input.ts), then NUL text.
 */
export function inspectInput(input: unknown) {
  throwIfDeferredInputError(input);
  const found = nulPath(input);
  if (found === undefined) return;
  const path = found.length > MAX_PATH_IN_MESSAGE ? `…${found.slice(-MAX_PATH_IN_MESSAGE)}` : found || 'input';
  throw new ApiError('BAD_REQUEST', `${path}: must not contain the NUL character`);
}
