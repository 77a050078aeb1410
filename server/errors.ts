/**
 * The service's one error vocabulary. Every failure a caller can see is an ApiError with one of these
 * codes; `statusFor` is the only place a code becomes an HTTP status, and `toPublicError` the only
 * place any thrown value becomes the public body {code, message, status, requestId}.
 */
import { TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import { ZodError, type core } from 'zod';

export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  INVALID_FLOOR: 400,
  UNAUTHORIZED: 401,
  INSUFFICIENT_BALANCE: 402,
  INVALID_CREDENTIALS: 403,
  FORBIDDEN_ORIGIN: 403,
  NOT_FOUND: 404,
  POSITION_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  IDEMPOTENCY_IN_PROGRESS: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  ORDER_REJECTED: 422,
  IDEMPOTENCY_MISMATCH: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  VENUE_UNAVAILABLE: 503,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface PublicError {
  code: ErrorCode;
  message: string;
  status: number;
  requestId: string;
}

export function statusFor(code: ErrorCode): number {
  return ERROR_STATUS[code];
}

/** tRPC needs one of its own codes to pick the HTTP status on /trpc; derived from ours. */
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

export class ApiError extends TRPCError {
  readonly apiCode: ErrorCode;
  constructor(code: ErrorCode, message: string, options: { cause?: unknown } = {}) {
    super({ code: TRPC_CODE_BY_STATUS[statusFor(code)] ?? 'INTERNAL_SERVER_ERROR', message, cause: options.cause });
    this.apiCode = code;
  }
}

/** Input fields whose validation failure has its own public code (docs/decisions.md §2). */
const FIELD_ERROR_CODES: Record<string, ErrorCode> = { floorL: 'INVALID_FLOOR', floorS: 'INVALID_FLOOR' };

function describeIssue(issue: core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    const where = issue.path.length ? ` in ${issue.path.join('.')}` : '';
    return `Unknown parameter${issue.keys.length > 1 ? 's' : ''}${where}: ${issue.keys.join(', ')}`;
  }
  const name = issue.path.length ? issue.path.join('.') : 'input';
  // zod reports a missing value as an invalid type "received undefined".
  if (issue.code === 'invalid_type' && /received undefined$/.test(issue.message)) return `${name}: required`;
  return `${name}: ${issue.message}`;
}

function fromZod(error: ZodError): { code: ErrorCode; message: string } {
  const first = error.issues[0];
  const field = first?.path[0];
  const code = (typeof field === 'string' && Object.hasOwn(FIELD_ERROR_CODES, field) && FIELD_ERROR_CODES[field]) || 'BAD_REQUEST';
  return { code, message: error.issues.slice(0, 3).map(describeIssue).join('; ') || 'Invalid input' };
}

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

/** Connection-level database failures: the request may be retried, nothing about it is the caller's fault. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e: any = error, depth = 0; e && depth < 5; e = e.cause, depth++) {
    const code = String(e.code ?? '');
    if (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|CONNECT_TIMEOUT|CONNECTION_(CLOSED|ENDED|DESTROYED))$/.test(code)) return true;
    if (/^57P0[1-3]$/.test(code)) return true; // admin_shutdown, crash_shutdown, cannot_connect_now
  }
  return false;
}

/** Any thrown value → the public body. Unknown errors never leak their message. */
export function toPublicError(error: unknown, requestId: string): PublicError {
  let code: ErrorCode = 'INTERNAL_ERROR';
  let message = 'Internal error; quote the request id to support';
  const cause = error instanceof TRPCError ? error.cause : undefined;
  if (error instanceof ApiError) {
    code = error.apiCode;
    message = error.message;
  } else if (error instanceof ZodError || cause instanceof ZodError) {
    ({ code, message } = fromZod((error instanceof ZodError ? error : cause) as ZodError));
  } else if (isDatabaseUnavailable(error)) {
    code = 'SERVICE_UNAVAILABLE';
    message = 'The database is unavailable; retry shortly';
  } else if (error instanceof TRPCError && FROM_TRPC_CODE[error.code]) {
    code = FROM_TRPC_CODE[error.code]!;
    message = error.code === 'PARSE_ERROR' ? 'Malformed JSON body' : error.message;
  }
  return { code, message, status: statusFor(code), requestId };
}

/** A JSON Response carrying the public error body. */
export function errorResponse(body: PublicError, headers?: HeadersInit): Response {
  const res = Response.json(body, { status: body.status, headers });
  return res;
}
