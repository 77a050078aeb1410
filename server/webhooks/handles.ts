/** What the webhooks domain is handed (server/handles.ts): the core and the cipher that seals the endpoints' signing secrets. */
import type { CoreHandles } from '../handles.ts';
import type { CredentialCipher } from '../lib/credential-cipher.ts';

export interface WebhookHandles extends CoreHandles {
  credentialCipher: CredentialCipher;
}
