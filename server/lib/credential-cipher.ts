/**
 * Sealing secrets at rest (venue credentials, webhook secrets): any JSON object, under AES-256-GCM
 * with a fresh 12-byte IV per write, the key's id stored beside the ciphertext, and the (account,
 * owner) pair as additional authenticated data — the owner is the trading user, or `webhook:<id>` —
 * so a ciphertext copied into another owner's row, or altered by one byte, fails to open.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { ApiError } from '../errors.ts';

export interface SealedCredentials {
  keyId: string;
  iv: string;
  ciphertext: string;
}

/** The id of a key: the first 16 hex digits of its SHA-256 (identifies, reveals nothing). */
export const keyIdOf = (hexKey: string) => createHash('sha256').update(Buffer.from(hexKey, 'hex')).digest('hex').slice(0, 16);

// The prefix dates from when only venue credentials were sealed; every stored ciphertext depends on it.
const aad = (accountId: string, owner: string) => Buffer.from(`venue-credentials\n${accountId}\n${owner}`);

export class CredentialCipher {
  private keys = new Map<string, Buffer>();
  readonly currentKeyId: string;

  /** `current` seals; `previous` keys only open rows not yet re-encrypted. All 64 hex chars. */
  constructor(current: string, previous: string[] = []) {
    for (const hex of [current, ...previous]) this.keys.set(keyIdOf(hex), Buffer.from(hex, 'hex'));
    this.currentKeyId = keyIdOf(current);
  }

  seal(value: object, accountId: string, owner: string): SealedCredentials {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.currentKeyId)!, iv);
    cipher.setAAD(aad(accountId, owner));
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return { keyId: this.currentKeyId, iv: iv.toString('base64'), ciphertext: body.toString('base64') };
  }

  /**
   * Opens what was sealed for (account, owner), or throws INVALID_CREDENTIALS (unknown key, tampering,
   * wrong owner). `T` is what the caller sealed for that owner: the authentication tag proves the
   * value is the one sealed, so its type is the sealer's (each kind of secret has owners of its own).
   */
  open<T>(sealed: SealedCredentials, accountId: string, owner: string): T {
    const key = this.keys.get(sealed.keyId);
    if (!key) throw new ApiError('INVALID_CREDENTIALS', 'Stored venue credentials cannot be read; store them again');
    try {
      const body = Buffer.from(sealed.ciphertext, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
      decipher.setAAD(aad(accountId, owner));
      decipher.setAuthTag(body.subarray(body.length - 16));
      const plain = Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString('utf8');
      return JSON.parse(plain) as T;
    } catch {
      throw new ApiError('INVALID_CREDENTIALS', 'Stored venue credentials cannot be read; store them again');
    }
  }
}
