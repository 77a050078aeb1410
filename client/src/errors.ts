/**
 * The service's errors as one typed class. Every error the service answers carries the same public
 * body as REST, `{code, message, status, requestId}`, inside tRPC's error `data.api`; the client
 * turns such an answer into a PreIpoApiError. It extends TRPCClientError, so code written for tRPC
 * (`error.data`, `error.shape`, `safe()`) keeps working; an error without that body (the network
 * failed, a proxy answered) stays a plain TRPCClientError.
 */
import { TRPCClientError } from '@trpc/client';
import type { AppRouter, ErrorShape } from './app-router.js';
import type { CallInfo } from './call-info.js';

/** The service's error codes (BAD_REQUEST, INSUFFICIENT_BALANCE, IDEMPOTENCY_MISMATCH, …). */
export type ApiErrorCode = ErrorShape['data']['api']['code'];

/** The public error body, the same on /api and /trpc. */
export interface ApiErrorBody {
  code: ApiErrorCode;
  message: string;
  status: number;
  requestId: string;
}

export class PreIpoApiError extends TRPCClientError<AppRouter> {
  readonly code: ApiErrorCode;
  readonly status: number;
  readonly requestId: string;
  /** The failed call: its procedure, request id and cost (failures are refunded: 0). */
  readonly callInfo: CallInfo;

  constructor(body: ApiErrorBody, cause: TRPCClientError<AppRouter>, callInfo: CallInfo) {
    super(body.message, { result: cause.shape ? { error: cause.shape } : undefined, cause, meta: cause.meta });
    // TRPCClientError's constructor resets the prototype to its own, which would lose this class.
    Object.setPrototypeOf(this, new.target.prototype);
    this.name = 'PreIpoApiError';
    this.code = body.code;
    this.status = body.status;
    this.requestId = body.requestId;
    this.callInfo = callInfo;
  }

  /** The public body, as REST would have answered it. */
  toJSON(): ApiErrorBody {
    return { code: this.code, message: this.message, status: this.status, requestId: this.requestId };
  }
}

export function isPreIpoApiError(error: unknown): error is PreIpoApiError {
  return error instanceof PreIpoApiError;
}

/** A tRPC client error with the service's body → PreIpoApiError; anything else as it was. */
export function toApiError(error: unknown, callInfo: CallInfo): unknown {
  if (!(error instanceof TRPCClientError) || error instanceof PreIpoApiError) return error;
  const body = (error as TRPCClientError<AppRouter>).data?.api;
  if (!body || typeof body.code !== 'string') return error;
  return new PreIpoApiError(body, error as TRPCClientError<AppRouter>, { ...callInfo, requestId: body.requestId ?? callInfo.requestId });
}
