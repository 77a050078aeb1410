/**
 * Our errors and tRPC's, both ways. tRPC picks a response's HTTP status from a code of its own, so an
 * ApiError leaving a procedure becomes a TRPCError of the code its status maps to (`toTrpcError`,
 * the builder's middleware and the /trpc path do it), carrying the ApiError as its cause; and a
 * TRPCError becomes our public body from that cause, or from tRPC's own code for the failures tRPC
 * raises itself (a malformed body, an unknown procedure…): `publicErrorOf`.
 */
import { TRPCError, getTRPCErrorFromUnknown } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import { ZodError } from 'zod';
import { ApiError, statusFor, toPublicError, type ErrorCode, type PublicError } from '../../errors.ts';

/** tRPC's code for each status our codes use. */
const TRPC_CODE_BY_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  402: 'PAYMENT_REQUIRED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_SUPPORTED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  503: 'SERVICE_UNAVAILABLE',
};

/** tRPC's own failures (malformed JSON, unknown procedure, …) in our vocabulary. */
const FROM_TRPC_CODE: Partial<Record<TRPC_ERROR_CODE_KEY, ErrorCode>> = {
  PARSE_ERROR: 'BAD_REQUEST',
  BAD_REQUEST: 'BAD_REQUEST',
  NOT_FOUND: 'NOT_FOUND',
  METHOD_NOT_SUPPORTED: 'METHOD_NOT_ALLOWED',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  UNAUTHORIZED: 'UNAUTHORIZED',
  TOO_MANY_REQUESTS: 'RATE_LIMITED',
};

/** The ApiError a value is, or that tRPC wrapped. */
function apiErrorIn(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  return error instanceof TRPCError && error.cause instanceof ApiError ? error.cause : undefined;
}

/** tRPC's code for any thrown value: an ApiError's by its status, a TRPCError's own, else internal. */
export function trpcCodeOf(error: unknown): TRPC_ERROR_CODE_KEY {
  const api = apiErrorIn(error);
  if (api) return TRPC_CODE_BY_STATUS[api.status] ?? 'INTERNAL_SERVER_ERROR';
  return error instanceof TRPCError ? error.code : 'INTERNAL_SERVER_ERROR';
}

/** Any thrown value as the TRPCError tRPC should answer: an ApiError (or its wrapper) under its status's code. */
export function toTrpcError(error: unknown): TRPCError {
  const api = apiErrorIn(error);
  if (api && !(error instanceof TRPCError && error.code === trpcCodeOf(api))) {
    return new TRPCError({ code: trpcCodeOf(api), message: api.message, cause: api });
  }
  return getTRPCErrorFromUnknown(error);
}

/** Any thrown value, tRPC's errors included, → the public body (errors.ts toPublicError for the rest). */
export function publicErrorOf(error: unknown, requestId: string): PublicError {
  if (!(error instanceof TRPCError)) return toPublicError(error, requestId);
  const api = apiErrorIn(error);
  if (api) return toPublicError(api, requestId);
  // An input that failed its schema inside tRPC; an output that failed is ours (500), not the caller's.
  if (error.cause instanceof ZodError && error.code === 'BAD_REQUEST') return toPublicError(error.cause, requestId);
  const code = FROM_TRPC_CODE[error.code];
  if (!code) return toPublicError(error, requestId);
  const message = error.code === 'PARSE_ERROR' ? 'Malformed JSON body' : error.message;
  return { code, message, status: statusFor(code), requestId };
}
