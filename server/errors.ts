/**
 * The service's one error vocabulary. Every failure a caller can see is an ApiError with one of these
 * codes; `statusFor` is the only place a code becomes an HTTP status, and `toPublicError` the only
 * place any thrown value becomes the public body {code, message, status, requestId}.
 * ApiError is a plain error: the domains throw it without knowing any transport, and the tRPC layer
 * (platform/procedures/trpc-errors.ts) maps it to tRPC's codes and reads it back out of tRPC's errors.
 */
import { ZodError, type core } from 'zod';

export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  INVALID_FLOOR: 400,
  UNAUTHORIZED: 401,
  INSUFFICIENT_BALANCE: 402,
  INVALID_CREDENTIALS: 403,
  /** A key without the scope the route needs (server/accounts/scopes.ts). */
  FORBIDDEN: 403,
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

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly apiCode: ErrorCode;
  constructor(code: ErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.apiCode = code;
  }

  get status(): number {
    return statusFor(this.apiCode);
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

function fromZod(error: ZodError): ApiError {
  const first = error.issues[0];
  const field = first?.path[0];
  const code = (typeof field === 'string' && Object.hasOwn(FIELD_ERROR_CODES, field) && FIELD_ERROR_CODES[field]) || 'BAD_REQUEST';
  return new ApiError(code, error.issues.slice(0, 3).map(describeIssue).join('; ') || 'Invalid input', { cause: error });
}

/**
 * An input that failed its schema: the first issues in words (a ZodError), else the failure's own
 * message (an async refinement's error). This file imports nothing of ours: everything may import it.
 */
export function inputError(cause: unknown): ApiError {
  if (cause instanceof ZodError) return fromZod(cause);
  return new ApiError('BAD_REQUEST', (cause instanceof Error && cause.message) || 'Invalid input', { cause });
}

/** Connection-level database failures: the request may be retried, nothing about it is the caller's fault. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e: any = error, depth = 0; e && depth < 5; e = e.cause, depth++) {
    const code = String(e.code ?? '');
    if (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|CONNECT_TIMEOUT|CONNECTION_(CLOSED|ENDED|DESTROYED))$/.test(code)) return true;
    if (/^57P0[1-3]$/.test(code)) return true; // admin_shutdown, crash_shutdown, cannot_connect_now
  }
  return false;
}

/**
 * Any thrown value → the public body. Unknown errors never leak their message. (Errors that arrive
 * wrapped by tRPC are unwrapped first: platform/procedures/trpc-errors.ts.)
 */
export function toPublicError(error: unknown, requestId: string): PublicError {
  const known = error instanceof ApiError ? error : error instanceof ZodError ? fromZod(error) : undefined;
  if (known) return { code: known.apiCode, message: known.message, status: known.status, requestId };
  if (isDatabaseUnavailable(error)) return { code: 'SERVICE_UNAVAILABLE', message: 'The database is unavailable; retry shortly', status: statusFor('SERVICE_UNAVAILABLE'), requestId };
  return { code: 'INTERNAL_ERROR', message: 'Internal error; quote the request id to support', status: statusFor('INTERNAL_ERROR'), requestId };
}

/** A JSON Response carrying the public error body. */
export function errorResponse(body: PublicError, headers?: HeadersInit): Response {
  const res = Response.json(body, { status: body.status, headers });
  return res;
}
