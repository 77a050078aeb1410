/**
 * Cheap, linear checks of a request's input against INPUT_LIMITS, run before it is parsed or walked.
 * Neither allocates nor recurses, so hostile input costs one pass over text the server already holds.
 */
import { ApiError } from '../../errors.ts';
import { MAX_BATCH_CALLS, MAX_JSON_DEPTH, MAX_QUERY_PARAMS } from '../../lib/input-limits.ts';

const AMPERSAND = 38;
const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_BRACE = 123;
const OPEN_BRACKET = 91;
const CLOSE_BRACE = 125;
const CLOSE_BRACKET = 93;
const COMMA = 44;
const PERCENT = 37;
const DIGIT_2 = 50;
const LETTER_C = 99;

/** Query parameters in a query string as URLSearchParams counts them (empty `&&` segments are none). */
export function queryParameterCount(search: string): number {
  let count = 0;
  let inSegment = false;
  for (let i = 0; i < search.length; i++) {
    if (search.charCodeAt(i) === AMPERSAND) inSegment = false;
    else if (!inSegment) (inSegment = true), count++;
  }
  return count;
}

/** 400 when a query string holds more than MAX_QUERY_PARAMS parameters (repeats count). */
export function assertQueryParameterCount(search: string): void {
  if (search.length > MAX_QUERY_PARAMS && queryParameterCount(search) > MAX_QUERY_PARAMS) {
    throw new ApiError('BAD_REQUEST', `Too many query parameters: at most ${MAX_QUERY_PARAMS}`);
  }
}

/**
 * True when JSON text nests objects and arrays deeper than MAX_JSON_DEPTH. Scans the text (brackets
 * inside strings do not count) instead of walking the parsed value, so even JSON.parse never sees a
 * 20,000-level document. For text that is not JSON, the answer does not matter: both are a 400.
 */
export function jsonTooDeep(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > MAX_JSON_DEPTH) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return false;
}

/**
 * Procedure calls a tRPC path names (`a,b,c` is three), counted on the path as sent: tRPC decodes it
 * before splitting, so `%2C` separates calls too. Counted whether or not `batch=1` is set.
 */
export function trpcCallCount(path: string): number {
  let calls = 1;
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c === COMMA) calls++;
    else if (c === PERCENT && path.charCodeAt(i + 1) === DIGIT_2 && (path.charCodeAt(i + 2) | 0x20) === LETTER_C) calls++;
  }
  return calls;
}

/** 400 when a tRPC request names more than MAX_BATCH_CALLS calls. */
export function assertBatchSize(calls: number): void {
  if (calls > MAX_BATCH_CALLS) {
    throw new ApiError('BAD_REQUEST', `Too many calls in one batch: ${calls}; at most ${MAX_BATCH_CALLS}`);
  }
}
