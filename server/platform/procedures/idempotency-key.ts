import { ApiError } from '../../errors.ts';
import { IDEMPOTENCY_KEY, IDEMPOTENCY_KEY_RULE } from '../../lib/identifiers.ts';

/**
 * The idempotency key of one call of a route whose meta says `idempotent` (buy, sell): the
 * Idempotency-Key header, or the input's `idempotencyKey` member (per call, for the calls of one
 * tRPC batch; docs/decisions.md §7); both only when equal; null when neither is sent. The gate
 * checks it with the input, before the charge, so a bad key is a 400 even on an empty balance.
 */
export function idempotencyKeyOf(ctx: { headers: Headers }, rawInput: unknown): string | null {
  const header = ctx.headers.get('idempotency-key');
  if (header !== null && !IDEMPOTENCY_KEY.test(header)) throw new ApiError('BAD_REQUEST', `Idempotency-Key: ${IDEMPOTENCY_KEY_RULE}`);
  const member = typeof rawInput === 'object' && rawInput !== null && !Array.isArray(rawInput) ? (rawInput as { idempotencyKey?: unknown }).idempotencyKey : undefined;
  if (member === undefined) return header;
  if (typeof member !== 'string' || !IDEMPOTENCY_KEY.test(member)) throw new ApiError('BAD_REQUEST', `idempotencyKey: ${IDEMPOTENCY_KEY_RULE}`);
  if (header !== null && header !== member) throw new ApiError('BAD_REQUEST', 'idempotencyKey: differs from the Idempotency-Key header; send the key once (either place is enough)');
  return member;
}
