import { getAddress, isAddress } from 'viem';
import { ApiError } from '../errors.ts';

const USER_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/**
 * x-user-id: 1–128 chars of [A-Za-z0-9._:@-]. An EVM address is checksummed so that case variants
 * name one user (decisions §1).
 */
export function normaliseUserId(raw: string | null): string {
  if (!raw) throw new ApiError('BAD_REQUEST', 'x-user-id: required header (a wallet address or account identifier)');
  if (!USER_ID.test(raw)) throw new ApiError('BAD_REQUEST', 'x-user-id: must be 1-128 characters of A-Z a-z 0-9 . _ : @ -');
  return isAddress(raw, { strict: false }) ? getAddress(raw) : raw;
}
