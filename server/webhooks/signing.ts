/**
 * Webhook secrets and signatures (Standard Webhooks, https://www.standardwebhooks.com): a secret is
 * `whsec_` + base64 of 32 random bytes, shown once at creation or rotation and stored only sealed by
 * the credential cipher (AES-256-GCM under TRADING_ENCRYPTION_KEY, bound to the account and the
 * webhook). Signatures come from the specification's official library (`standardwebhooks`):
 * `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`; during a rotation's
 * overlap both secrets sign, space-separated, and a receiver holding either one verifies.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { CredentialCipher, SealedCredentials } from '../lib/credential-cipher.ts';

export const SECRET_PREFIX = 'whsec_';

export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** What is sealed for a webhook. */
interface SealedSecret {
  webhookSecret: string;
}

/** The sealing's owner half of its authenticated data: a sealed secret opens only for its own webhook. */
const owner = (webhookId: string) => `webhook:${webhookId}`;

/** The secret sealed, as the text stored in `webhooks.secret_sealed`. */
export function sealSecret(cipher: CredentialCipher, secret: string, accountId: string, webhookId: string): string {
  return JSON.stringify(cipher.seal({ webhookSecret: secret } satisfies SealedSecret, accountId, owner(webhookId)));
}

/** The stored text opened; throws when it cannot be (another TRADING_ENCRYPTION_KEY, tampering). */
export function openSecret(cipher: CredentialCipher, sealed: string, accountId: string, webhookId: string): string {
  const opened = cipher.open<Partial<SealedSecret>>(JSON.parse(sealed) as SealedCredentials, accountId, owner(webhookId));
  // Sealed by sealSecret for this webhook, unless a row was written by hand: checked, not assumed.
  if (typeof opened.webhookSecret !== 'string') throw new Error('not a sealed webhook secret');
  return opened.webhookSecret;
}

/** The three headers of one attempt. `secrets`: the current secret first, then the previous one during a rotation's overlap. */
export function signatureHeaders(deliveryId: string, sentAt: Date, body: string, secrets: string[]): Record<string, string> {
  return {
    'webhook-id': deliveryId,
    'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(deliveryId, sentAt, body)).join(' '),
  };
}
