/**
 * Refusals of the stream routes that are about this instance, not the caller: both are 503
 * SERVICE_UNAVAILABLE (with Retry-After), so a client or a load balancer retries, here later or on
 * another instance.
 */
import { ApiError } from '../errors.ts';

/** Seconds a refused client is told to wait (Retry-After). */
export const INSTANCE_RETRY_AFTER_S = 1;

/** The instance is shutting down (stopStreams ran): no stream opens here any more. */
export function shuttingDown(): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', 'This server is shutting down; retry (another instance will answer)');
}

/** The instance holds its maximum of public streams (MAX_PUBLIC_STREAMS). */
export function instanceFull(limit: number): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', `This server holds its maximum of ${limit} public streams; retry shortly (another instance may have room)`);
}
