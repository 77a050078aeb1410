/**
 * Every venue call made by trading goes through `callVenue`: it gets a deadline, and anything the
 * venue throws that is not already one of our errors becomes VENUE_UNAVAILABLE. Errors the venue
 * raises on purpose (refused credentials, rejected order, no funds) pass through unchanged.
 */
import { ApiError, type ErrorCode } from '../errors.ts';

/** Venue answers that settle an order placement for certain: the order was not accepted. */
const DEFINITE_REFUSALS: ReadonlySet<ErrorCode> = new Set(['INVALID_CREDENTIALS', 'ORDER_REJECTED', 'INSUFFICIENT_BALANCE', 'BAD_REQUEST']);

export class VenueTimeout extends ApiError {
  constructor(what: string, ms: number) {
    super('VENUE_UNAVAILABLE', `The venue did not answer ${what} within ${ms} ms; retry shortly`);
  }
}

export async function callVenue<T>(what: string, timeoutMs: number, call: () => Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new VenueTimeout(what, timeoutMs)), timeoutMs);
  });
  try {
    return await Promise.race([call(), deadline]);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError('VENUE_UNAVAILABLE', `The venue failed ${what}; retry shortly`, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

/** True when the error proves the venue did not take the order (as opposed to: we do not know). */
export function isDefiniteRefusal(error: unknown): error is ApiError {
  return error instanceof ApiError && DEFINITE_REFUSALS.has(error.apiCode);
}
