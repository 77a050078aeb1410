/**
 * The limits every request's input is held to before any procedure runs, in one place (docs/decisions.md §9
 * and /openapi.json quote these). Each bounds the work one HTTP request can cost before
 * authentication: a batch fans out into procedure calls, parameters and nesting into parsing and walks.
 * The body size limit is MAX_BODY_BYTES (config.maxBodyBytes), enforced by server/platform/http/body-reader.ts.
 */
export const INPUT_LIMITS = {
  /** Calls in one tRPC batch (`/trpc/a,b,c?batch=1`); a larger batch is refused with 400 before any call runs. */
  maxBatchCalls: 20,
  /** Query parameters in one request, counting repeats (`?a=1&a=2` is two); more is a 400. */
  maxQueryParameters: 100,
  /** Nesting depth of a JSON body or tRPC `input` (`{}` and `[]` are one level); deeper is a 400. */
  maxJsonDepth: 32,
  /** Every date parameter names an instant from minDate 00:00:00Z to maxDate 23:59:59.999Z (400 otherwise). */
  minDate: '1970-01-01',
  maxDate: '9999-12-31',
} as const;

export const MAX_BATCH_CALLS = INPUT_LIMITS.maxBatchCalls;
export const MAX_QUERY_PARAMS = INPUT_LIMITS.maxQueryParameters;
export const MAX_JSON_DEPTH = INPUT_LIMITS.maxJsonDepth;
