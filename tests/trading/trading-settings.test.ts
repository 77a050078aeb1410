/**
 * Trading settings and venue credentials: defaults, updates, validation, tenancy, and credentials that
 * are checked with the venue, sealed at rest, never returned, and refuse to open when tampered with,
 * moved to another user, or read with the wrong key.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { and, eq } from 'drizzle-orm';
import { venueCredentials, webhooks } from '../../db/schema.ts';
import { runCli } from '../../server/commands/cli.ts';
import { CredentialCipher, keyIdOf } from '../../server/lib/credential-cipher.ts';
import { openCredentials } from '../../server/trading/credentials.ts';
import { PAPER_REFUSED_API_KEY } from '../../server/venues/paper.ts';
import { createTestApp, json, trpcClient, type TestApp } from '../harness/app.ts';
import { fundedAccount, newUserId, type FundedAccount } from '../harness/factories.ts';
import { openSecret, sealSecret } from '../../server/webhooks/signing.ts';

let t: TestApp;
let acct: FundedAccount;
beforeAll(async () => {
  t = await createTestApp();
  acct = await fundedAccount(t, { usd: 100 });
});
afterAll(() => t.close());

const call = async (method: string, path: string, userId: string, body?: unknown, headers = acct.headers) => {
  const res = await t.request(path, {
    method,
    headers: { ...headers, 'x-user-id': userId, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { res, body: await json(res) };
};
const SECRETS = { apiKey: 'venue-key-123', secret: 'c2VjcmV0LXZhbHVlLTQ1Ng==', passphrase: 'pass-phrase-789' };

describe('settings', () => {
  test('a new user has the default floors and no wallet or credentials; the route is billed', async () => {
    const { res, body } = await call('GET', '/api/trading/settings', newUserId());
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-cost-usd')).toBe('0.002');
    expect(body).toEqual({ floorL: 0.2, floorS: 0.15, walletAddress: null, hasCredentials: false, signerAddress: null });
  });

  test('PUT changes only what it is given and answers the full settings', async () => {
    const user = newUserId();
    expect((await call('PUT', '/api/trading/settings', user, { floorL: 0.35 })).body).toMatchObject({ floorL: 0.35, floorS: 0.15 });
    const wallet = '0x52908400098527886e0f7030069857d2e4169ee7';
    const { body } = await call('PUT', '/api/trading/settings', user, { floorS: 0, walletAddress: wallet });
    expect(body).toEqual({ floorL: 0.35, floorS: 0, walletAddress: '0x52908400098527886E0F7030069857D2E4169EE7', hasCredentials: false, signerAddress: null });
    expect((await call('PUT', '/api/trading/settings', user, { walletAddress: null })).body.walletAddress).toBeNull();
    expect((await call('GET', '/api/trading/settings', user)).body.floorL).toBe(0.35);
  });

  test.each([
    [{ floorL: 1.01 }, 'INVALID_FLOOR'],
    [{ floorS: -0.5 }, 'INVALID_FLOOR'],
    [{ floorL: '0.3' }, 'INVALID_FLOOR'],
    [{ walletAddress: '0x123' }, 'BAD_REQUEST'],
    [{ walletAddress: 'not-an-address' }, 'BAD_REQUEST'],
    [{ floorL: 0.3, colour: 'red' }, 'BAD_REQUEST'],
  ])('PUT %j → 400 %s, unbilled, nothing changed', async (change, code) => {
    const user = newUserId();
    const { res, body } = await call('PUT', '/api/trading/settings', user, change);
    expect(res.status).toBe(400);
    expect(body.code).toBe(code);
    expect(res.headers.get('x-request-cost-usd')).toBe('0');
    expect((await call('GET', '/api/trading/settings', user)).body.floorL).toBe(0.2);
  });

  test('x-user-id case variants of an address are one user', async () => {
    const user = newUserId();
    await call('PUT', '/api/trading/settings', user.toLowerCase(), { floorL: 0.6 });
    expect((await call('GET', '/api/trading/settings', user.toUpperCase().replace('0X', '0x'))).body.floorL).toBe(0.6);
  });

  test('another user, and the same user id under another account, see only their own settings', async () => {
    const user = newUserId();
    await call('PUT', '/api/trading/settings', user, { floorL: 0.9 });
    expect((await call('GET', '/api/trading/settings', newUserId())).body.floorL).toBe(0.2);
    const other = await fundedAccount(t);
    expect((await call('GET', '/api/trading/settings', user, undefined, other.headers)).body.floorL).toBe(0.2);
  });
});

describe('credentials', () => {
  test('stored after the venue accepts them; never returned; sealed at rest', async () => {
    const user = newUserId();
    const stored = await call('POST', '/api/trading/credentials', user, SECRETS);
    expect(stored.res.status).toBe(200);
    expect(stored.body).toEqual({ success: true, message: 'Venue credentials stored' });
    const settings = await call('GET', '/api/trading/settings', user);
    expect(settings.body.hasCredentials).toBe(true);
    for (const secret of Object.values(SECRETS)) {
      expect(JSON.stringify(stored.body) + JSON.stringify(settings.body)).not.toContain(secret);
    }
    const [row] = await t.database.db.select().from(venueCredentials).where(eq(venueCredentials.userId, user));
    for (const secret of Object.values(SECRETS)) expect(JSON.stringify(row)).not.toContain(secret);
    expect(Buffer.from(row!.iv, 'base64')).toHaveLength(12);
    expect(row!.keyId).toBe(keyIdOf('a'.repeat(64)));
    // Opened with the user as their owner: the paper venue's account is the user's, not the API key's.
    expect(await openCredentials(t.database.db, t.services.credentialCipher, { accountId: acct.accountId, userId: user })).toEqual({
      ...SECRETS,
      walletAddress: null,
      owner: { accountId: acct.accountId, userId: user },
    });
  });

  test('refused by the venue → 403 INVALID_CREDENTIALS, nothing stored, nothing charged', async () => {
    const user = newUserId();
    const { res, body } = await call('POST', '/api/trading/credentials', user, { ...SECRETS, apiKey: PAPER_REFUSED_API_KEY });
    expect(res.status).toBe(403);
    expect(body.code).toBe('INVALID_CREDENTIALS');
    expect(res.headers.get('x-request-cost-usd')).toBe('0');
    expect((await call('GET', '/api/trading/settings', user)).body.hasCredentials).toBe(false);
  });

  test.each([
    [{ apiKey: '', secret: 's', passphrase: 'p' }, 'apiKey'],
    [{ apiKey: 'k', secret: 's' }, 'passphrase'],
    [{ apiKey: 'k', secret: 'x'.repeat(513), passphrase: 'p' }, 'secret'],
    [{ apiKey: 5, secret: 's', passphrase: 'p' }, 'apiKey'],
  ])('invalid %j → 400 naming %s', async (bad, field) => {
    const { res, body } = await call('POST', '/api/trading/credentials', newUserId(), bad);
    expect(res.status).toBe(400);
    expect(body.message).toContain(field);
  });

  test('DELETE is idempotent', async () => {
    const user = newUserId();
    await call('POST', '/api/trading/credentials', user, SECRETS);
    expect((await call('DELETE', '/api/trading/credentials', user)).body).toEqual({ success: true, message: 'Venue credentials deleted' });
    expect((await call('DELETE', '/api/trading/credentials', user)).body).toEqual({ success: true, message: 'No venue credentials were stored' });
    expect((await call('GET', '/api/trading/settings', user)).body.hasCredentials).toBe(false);
  });

  describe('sealed credentials refuse to open', () => {
    const cipher = new CredentialCipher('1'.repeat(64));
    const sealed = cipher.seal(SECRETS, 'acct-a', 'user-a');

    test('with one byte changed', () => {
      const body = Buffer.from(sealed.ciphertext, 'base64');
      body[3] = body[3]! ^ 0x01;
      expect(() => cipher.open({ ...sealed, ciphertext: body.toString('base64') }, 'acct-a', 'user-a')).toThrow('cannot be read');
      const iv = Buffer.from(sealed.iv, 'base64');
      iv[0] = iv[0]! ^ 0x80;
      expect(() => cipher.open({ ...sealed, iv: iv.toString('base64') }, 'acct-a', 'user-a')).toThrow('cannot be read');
    });
    test('when moved to another user or account', () => {
      expect(() => cipher.open(sealed, 'acct-a', 'user-b')).toThrow('cannot be read');
      expect(() => cipher.open(sealed, 'acct-b', 'user-a')).toThrow('cannot be read');
    });
    test('with the wrong key, even under the right key id', () => {
      expect(() => new CredentialCipher('2'.repeat(64)).open(sealed, 'acct-a', 'user-a')).toThrow('cannot be read');
      expect(() => new CredentialCipher('2'.repeat(64)).open({ ...sealed, keyId: keyIdOf('2'.repeat(64)) }, 'acct-a', 'user-a')).toThrow('cannot be read');
    });
    test('a fresh IV every time', () => {
      expect(cipher.seal(SECRETS, 'acct-a', 'user-a').iv).not.toBe(sealed.iv);
      expect(cipher.open(sealed, 'acct-a', 'user-a')).toEqual(SECRETS);
    });
  });

  test('a row copied into another user\'s row does not open for them', async () => {
    const [owner, thief] = [newUserId(), newUserId()];
    await call('POST', '/api/trading/credentials', owner, SECRETS);
    await call('POST', '/api/trading/credentials', thief, { ...SECRETS, apiKey: 'thief-key' });
    const db = t.database.db;
    const [row] = await db.select().from(venueCredentials).where(eq(venueCredentials.userId, owner));
    await db
      .update(venueCredentials)
      .set({ iv: row!.iv, ciphertext: row!.ciphertext })
      .where(and(eq(venueCredentials.accountId, acct.accountId), eq(venueCredentials.userId, thief)));
    await expect(openCredentials(db, t.services.credentialCipher, { accountId: acct.accountId, userId: thief })).rejects.toMatchObject({ apiCode: 'INVALID_CREDENTIALS' });
  });

  test('key rotation: the CLI re-seals every row under the new key, and the old key is no longer needed', async () => {
    const user = newUserId();
    await call('POST', '/api/trading/credentials', user, SECRETS);
    // A webhook's signing secret (and one in its rotation overlap) is sealed with the same key.
    const secret = `whsec_${Buffer.from('a webhook secret of 32 bytes...').toString('base64')}`;
    const oldSecret = `whsec_${Buffer.from('an older secret, 24 hours left').toString('base64')}`;
    await t.database.db.insert(webhooks).values({
      id: 'wh_rotation',
      accountId: acct.accountId,
      url: 'https://example.com/hooks',
      events: ['order.filled'],
      secretSealed: sealSecret(t.services.credentialCipher, secret, acct.accountId, 'wh_rotation'),
      previousSecretSealed: sealSecret(t.services.credentialCipher, oldSecret, acct.accountId, 'wh_rotation'),
      previousSecretUntil: new Date(Date.now() + 3_600_000),
    });
    const rotated = await createTestApp({ TRADING_ENCRYPTION_KEY: 'c'.repeat(64), TRADING_ENCRYPTION_PREVIOUS_KEYS: 'a'.repeat(64) }, { database: t.database });
    const result = (await runCli(['reencrypt-credentials'], rotated.services)) as { reencrypted: number; unreadable: unknown[]; keyId: string };
    expect(result.reencrypted).toBeGreaterThanOrEqual(1);
    // The row an earlier test copied into another user's place cannot be opened: reported, left alone.
    expect(result.unreadable).toHaveLength(1);
    expect(result.keyId).toBe(keyIdOf('c'.repeat(64)));
    const onlyNew = await createTestApp({ TRADING_ENCRYPTION_KEY: 'c'.repeat(64) }, { database: t.database });
    expect(await openCredentials(t.database.db, onlyNew.services.credentialCipher, { accountId: acct.accountId, userId: user })).toEqual({
      ...SECRETS,
      walletAddress: null,
      owner: { accountId: acct.accountId, userId: user },
    });
    expect(result).toMatchObject({ webhookSecrets: { resealed: 1, unreadable: [] } });
    const [hook] = await t.database.db.select().from(webhooks).where(eq(webhooks.id, 'wh_rotation'));
    expect(openSecret(onlyNew.services.credentialCipher, hook!.secretSealed, acct.accountId, 'wh_rotation')).toBe(secret);
    expect(openSecret(onlyNew.services.credentialCipher, hook!.previousSecretSealed!, acct.accountId, 'wh_rotation')).toBe(oldSecret);
    await onlyNew.close();
    await rotated.close();
  });
});

describe('over the typed tRPC client', () => {
  test('settings and credentials', async () => {
    const client = trpcClient(t, { ...acct.headers, 'x-user-id': newUserId() });
    expect((await client.tradingSettings.update.mutate({ floorL: 0.4 })).floorL).toBe(0.4);
    expect(await client.tradingSettings.storeCredentials.mutate(SECRETS)).toEqual({ success: true, message: 'Venue credentials stored' });
    expect((await client.tradingSettings.get.query()).hasCredentials).toBe(true);
    const error = await client.tradingSettings.update.mutate({ floorS: 3 }).catch((e) => e);
    expect(error.data.api.code).toBe('INVALID_FLOOR');
  });
});
