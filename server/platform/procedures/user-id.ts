import { getAddress, isAddress } from 'viem';
import { ApiError } from '../../errors.ts';
import { IDENTIFIER, IDENTIFIER_RULE } from '../../lib/identifiers.ts';

/**
 * x-user-id: an identifier (IDENTIFIER, server/lib/identifiers.ts). An EVM address is checksummed so
 * that case variants name one user (docs/decisions.md §1).
 */
export function normaliseUserId(raw: string | null): string {
  if (!raw) throw new ApiError('BAD_REQUEST', 'x-user-id: required header (a wallet address or account identifier)');
  if (!IDENTIFIER.test(raw)) throw new ApiError('BAD_REQUEST', `x-user-id: must be ${IDENTIFIER_RULE}`);
  return isAddress(raw, { strict: false }) ? getAddress(raw) : raw;
}

/**
 * The trading user of one call: the x-user-id header, or the input's `userId` member (buy and sell
 * take it, so each call of a tRPC batch names its own user; docs/decisions.md §7). Both may be sent
 * only when they name the same user.
 */
export function userIdOf(ctx: { headers: Headers }, rawInput: unknown): string {
  const header = ctx.headers.get('x-user-id');
  const member = typeof rawInput === 'object' && rawInput !== null && !Array.isArray(rawInput) ? (rawInput as { userId?: unknown }).userId : undefined;
  if (member === undefined) return normaliseUserId(header);
  if (typeof member !== 'string' || !IDENTIFIER.test(member)) throw new ApiError('BAD_REQUEST', `userId: must be ${IDENTIFIER_RULE}`);
  const fromInput = isAddress(member, { strict: false }) ? getAddress(member) : member;
  if (header !== null && normaliseUserId(header) !== fromInput) {
    throw new ApiError('BAD_REQUEST', 'userId: differs from the x-user-id header; send the user once (either is enough)');
  }
  return fromInput;
}
