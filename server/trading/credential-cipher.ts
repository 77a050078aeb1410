/**
 * Sealing venue credentials at rest: AES-256-GCM with a fresh 12-byte IV per write, the key's id
 * stored beside the ciphertext, and the (account, user) pair as additional authenticated data, so a
 * ciphertext copied into another user's row, or altered by one byte, fails to open.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { ApiError } from '../errors.ts';
import type { VenueCredentials } from '../venues/venue.ts';

export interface SealedCredentials {
  keyId: string;
  iv: string;
  ciphertext: string;
}

/** The id of a key: the first 16 hex digits of its SHA-256 (identifies, reveals nothing). */
export const keyIdOf = (hexKey: string) => createHash('sha256').update(Buffer.from(hexKey, 'hex')).digest('hex').slice(0, 16);

const aad = (accountId: string, userId: string) => Buffer.from(`venue-credentials\n${accountId}\n${userId}`);

export class CredentialCipher {
  private keys = new Map<string, Buffer>();
  readonly currentKeyId: string;

  /** `current` seals; `previous` keys only open rows not yet re-encrypted. All 64 hex chars. */
  constructor(current: string, previous: string[] = []) {
    for (const hex of [current, ...previous]) this.keys.set(keyIdOf(hex), Buffer.from(hex, 'hex'));
    this.currentKeyId = keyIdOf(current);
  }

  seal(credentials: VenueCredentials, accountId: string, userId: string): SealedCredentials {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.currentKeyId)!, iv);
    cipher.setAAD(aad(accountId, userId));
    const body = Buffer.concat([cipher.update(JSON.stringify(credentials), 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return { keyId: this.currentKeyId, iv: iv.toString('base64'), ciphertext: body.toString('base64') };
  }

  /** Opens sealed credentials, or throws INVALID_CREDENTIALS (unknown key, tampering, wrong owner). */
  open(sealed: SealedCredentials, accountId: string, userId: string): VenueCredentials {
    const key = this.keys.get(sealed.keyId);
    if (!key) throw new ApiError('INVALID_CREDENTIALS', 'Stored venue credentials cannot be read; store them again');
    try {
      const body = Buffer.from(sealed.ciphertext, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
      decipher.setAAD(aad(accountId, userId));
      decipher.setAuthTag(body.subarray(body.length - 16));
      const plain = Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString('utf8');
      return JSON.parse(plain) as VenueCredentials;
    } catch {
      throw new ApiError('INVALID_CREDENTIALS', 'Stored venue credentials cannot be read; store them again');
    }
  }
}
