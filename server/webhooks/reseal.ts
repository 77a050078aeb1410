/**
 * After a TRADING_ENCRYPTION_KEY rotation (`npm run cli -- reencrypt-credentials`): every webhook
 * secret (and a rotated-out one still in its 24-hour overlap) sealed with an older key is opened
 * with that key (listed in TRADING_ENCRYPTION_PREVIOUS_KEYS) and sealed again with the current one.
 * The update is conditional on the sealed text read, so a rotation of the secret meanwhile wins.
 */
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { webhooks } from '../../db/schema.ts';
import type { CredentialCipher } from '../lib/credential-cipher.ts';
import { openSecret, sealSecret } from './signing.ts';

const keyIdOf = (sealed: string) => (JSON.parse(sealed) as { keyId?: string }).keyId;

export async function resealWebhookSecrets(db: Db, cipher: CredentialCipher): Promise<{ resealed: number; unreadable: string[] }> {
  const rows = await db.select().from(webhooks);
  let resealed = 0;
  const unreadable: string[] = [];
  for (const row of rows) {
    const stale = (sealed: string | null) => sealed !== null && keyIdOf(sealed) !== cipher.currentKeyId;
    if (!stale(row.secretSealed) && !stale(row.previousSecretSealed)) continue;
    const reseal = (sealed: string | null) => (sealed === null || !stale(sealed) ? sealed : sealSecret(cipher, openSecret(cipher, sealed, row.accountId, row.id), row.accountId, row.id));
    let secretSealed: string | null;
    let previousSecretSealed: string | null;
    try {
      secretSealed = reseal(row.secretSealed);
      previousSecretSealed = reseal(row.previousSecretSealed);
    } catch {
      unreadable.push(row.id);
      continue;
    }
    const updated = await db
      .update(webhooks)
      .set({ secretSealed: secretSealed!, previousSecretSealed })
      .where(and(eq(webhooks.id, row.id), eq(webhooks.secretSealed, row.secretSealed)))
      .returning({ id: webhooks.id });
    if (updated.length) resealed++;
  }
  return { resealed, unreadable };
}
