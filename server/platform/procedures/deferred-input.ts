/**
 * Input errors answered after authentication (docs/decisions.md §4: 401 comes first). A transport that finds
 * the body malformed, of the wrong Content-Type or nested too deep does not answer; it hands the
 * procedure a marker as its raw input, and the procedure's middleware calls throwIfDeferredInputError
 * once the caller is authenticated.
 *
 * The marker is a plain JSON object with one reserved member, so it travels the same way on /api
 * (as the raw input) and on /trpc (inside a rewritten body, since tRPC parses the body itself).
 * A client sending the reserved member gets the same 400 as for any reserved input. Every input
 * schema is a strict object, so even a procedure that never called this refuses the marker with 400.
 * Only the reason travels: messages are fixed here, a client cannot choose them.
 *
 * 413 (body too large) is not deferred: the body is refused before it is read. The transports read
 * their input text with http/json-input.ts.
 */
import { ApiError, type ErrorCode } from '../../errors.ts';
import { MAX_JSON_DEPTH } from '../../lib/input-limits.ts';

/** The reserved input member carrying the reason. */
export const DEFERRED_INPUT_MEMBER = '$deferredInputError';

const REASONS = {
  'malformed-json': ['BAD_REQUEST', 'Malformed JSON body'],
  'unsupported-media-type': ['UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json'],
  'too-deep': ['BAD_REQUEST', `JSON nested deeper than ${MAX_JSON_DEPTH} levels`],
  'not-an-object': ['BAD_REQUEST', 'The JSON body must be an object'],
  'batch-not-an-object': ['BAD_REQUEST', 'The input of a batch call must be an object of inputs by call index'],
} as const satisfies Record<string, readonly [ErrorCode, string]>;

export type DeferredReason = keyof typeof REASONS;

export type DeferredInput = { readonly [DEFERRED_INPUT_MEMBER]: DeferredReason };

/** The raw input standing for a rejected one (JSON-serializable). */
export function deferredInput(reason: DeferredReason): DeferredInput {
  return { [DEFERRED_INPUT_MEMBER]: reason };
}

/** The error a deferred reason stands for. */
export function deferredInputError(reason: DeferredReason): ApiError {
  const [code, message] = REASONS[reason];
  return new ApiError(code, message);
}

/** Throws the error a marker carries; does nothing for any other value. Cheap: one property check. */
export function throwIfDeferredInputError(raw: unknown): void {
  if (typeof raw !== 'object' || raw === null || !Object.hasOwn(raw, DEFERRED_INPUT_MEMBER)) return;
  const reason = (raw as Record<string, unknown>)[DEFERRED_INPUT_MEMBER];
  if (typeof reason === 'string' && Object.hasOwn(REASONS, reason)) throw deferredInputError(reason as DeferredReason);
  throw new ApiError('BAD_REQUEST', `${DEFERRED_INPUT_MEMBER}: reserved input member`);
}
