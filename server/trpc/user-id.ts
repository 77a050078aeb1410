import { getAddress, isAddress } from 'viem';
import { ApiError } from '../errors.ts';
import { IDENTIFIER, IDENTIFIER_RULE } from '../lib/identifiers.ts';


/**
 * x-user-id: 1–128 chars of [A-Za-z0-9._:@-]. An EVM address is checksummed so that case variants
 * name one user (decisions §1).
 */
export function normaliseUserId(raw: string | null): string {
  if (!raw) throw new ApiError('BAD_REQUEST', 'x-user-id: required header (a wallet address or account identifier)');
  if (!IDENTIFIER.test(raw)) throw new ApiError('BAD_REQUEST', `x-user-id: must be ${IDENTIFIER_RULE}`);
  return isAddress(raw, { strict: false }) ? getAddress(raw) : raw;
}
