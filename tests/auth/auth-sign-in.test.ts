/**
 * Wallet sign-in hardening (docs/decisions.md §11), over the real HTTP surface:
 *  - nonces come from the CSPRNG: 49 consecutive ones share no long run with the previous, ≥ 128 bits;
 *  - a nonce works only with the `pipo_nonce` cookie set with it (missing or another client's: 401),
 *    on /api and on the dashboard's /trpc path; verify clears it; only its SHA-256 is stored;
 *  - a message's scheme, when it names one, must be the service's (evil:// is 401);
 *  - an account keeps at most SESSION_MAX_PER_ACCOUNT live sessions: 40 sign-ins (in concurrent
 *    waves) leave exactly that many, the oldest revoked;
 *  - nonces per client IP, verifications per client IP and per wallet are limited (429, Retry-After);
 *    forged signatures never use up a wallet's sign-ins.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { authNonces, authSessions } from '../../db/schema.ts';
import { createTestApp, type TestApp } from '../harness/app.ts';
import { cookieSet, newClient, signIn, signInMessage, verify } from '../harness/sign-in.ts';

const newWallet = () => privateKeyToAccount(generatePrivateKey());
const refusal = async (res: Response) => ({ status: res.status, ...(await res.json()) });
const sha256 = (text: string) => new Bun.CryptoHasher('sha256').update(text).digest('hex');

/** Sign-in limits out of the way (TEST_ENV sets none for them): the limits have an app of their own below. */
const UNLIMITED = { RATE_LIMIT_SIGN_IN_RPS: '100000', RATE_LIMIT_SIGN_IN_BURST: '100000' };

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(UNLIMITED);
});
afterAll(() => t.close());

/** The length of the longest substring two strings share. */
function longestCommonRun(a: string, b: string): number {
  let best = 0;
  let previous = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    const row = new Array<number>(b.length + 1).fill(0);
    for (let j = 1; j <= b.length; j++) if (a[i - 1] === b[j - 1]) best = Math.max(best, (row[j] = previous[j - 1]! + 1));
    previous = row;
  }
  return best;
}

describe('nonces', () => {
  test('49 consecutive nonces: alphanumeric, ≥ 128 bits, none sharing a run of 8 characters with the previous', async () => {
    const client = newClient();
    const nonces: string[] = [];
    for (let i = 0; i < 49; i++) nonces.push((await (await t.request('/api/auth/nonce', { clientIp: client.ip })).json()).nonce);
    for (const [i, nonce] of nonces.entries()) {
      expect(nonce).toMatch(/^[A-Za-z0-9]{8,}$/); // EIP-4361
      const alphabet = /^[0-9a-f]+$/.test(nonce) ? 16 : 62;
      expect(nonce.length * Math.log2(alphabet)).toBeGreaterThanOrEqual(128);
      if (i > 0) expect(longestCommonRun(nonces[i - 1]!, nonce)).toBeLessThan(8);
    }
    expect(new Set(nonces).size).toBe(49);
  });

  test('each comes with its pipo_nonce cookie; the database keeps only its SHA-256 and the asking address', async () => {
    const res = await t.request('/api/auth/nonce', { clientIp: '10.9.8.7' });
    const { nonce } = await res.json();
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('pipo_nonce='))!;
    expect(cookie).toMatch(/^pipo_nonce=[A-Za-z0-9_-]{43}; Path=\/api\/auth; HttpOnly; SameSite=Strict; Max-Age=\d+$/); // not Secure on http://localhost
    const binding = cookie.split(';')[0]!.split('=')[1]!;
    const [row] = await t.database.db.select().from(authNonces).where(eq(authNonces.nonce, nonce));
    expect(row).toMatchObject({ bindingHash: sha256(binding), clientIp: '10.9.8.7' });
  });
});

describe('a nonce belongs to the client that asked for it', () => {
  test('without its cookie, or with another client\'s, it is refused (401 naming why) and stays usable by its own client', async () => {
    const wallet = newWallet();
    const owner = newClient();
    const message = await signInMessage(t, wallet, {}, owner);
    const signature = await wallet.signMessage({ message });
    const stranger = newClient();
    await signInMessage(t, newWallet(), {}, stranger); // the stranger's own nonce and cookie

    const noCookie = await refusal(await verify(t, message, signature, { ip: owner.ip, nonceCookie: null }));
    expect(noCookie).toMatchObject({ status: 401, code: 'UNAUTHORIZED', message: expect.stringContaining('no pipo_nonce cookie') });
    const othersCookie = await refusal(await verify(t, message, signature, { ip: owner.ip, nonceCookie: stranger.nonceCookie }));
    expect(othersCookie).toMatchObject({ status: 401, code: 'UNAUTHORIZED', message: expect.stringContaining('issued to another client') });
    const forged = await refusal(await verify(t, message, signature, { ip: owner.ip, nonceCookie: `pipo_nonce=${'A'.repeat(43)}` }));
    expect(forged).toMatchObject({ status: 401, message: expect.stringContaining('another client') });

    // Its own client, even from another address (a phone changing networks): signed in; the nonce cookie cleared.
    const res = await verify(t, message, signature, { ip: newClient().ip, nonceCookie: owner.nonceCookie });
    expect(res.status).toBe(200);
    expect(cookieSet(res, 'pipo_session')).toMatch(/^pipo_session=/);
    expect(res.headers.getSetCookie().find((c) => c.startsWith('pipo_nonce='))).toBe('pipo_nonce=; Path=/api/auth; HttpOnly; SameSite=Strict; Max-Age=0');
    expect((await verify(t, message, signature)).status).toBe(401); // and used once
  });

  test('the dashboard\'s path: over /trpc the cookie is scoped to /trpc and binds the same way', async () => {
    const wallet = newWallet();
    const ip = newClient().ip;
    const issued = await t.request('/trpc/auth.nonce', { clientIp: ip });
    expect(issued.headers.getSetCookie()[0]).toMatch(/^pipo_nonce=[A-Za-z0-9_-]{43}; Path=\/trpc; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    const nonce = (await issued.json()).result.data;
    const { createSiweMessage } = await import('viem/siwe');
    const message = createSiweMessage({ address: wallet.address, chainId: nonce.chainId, domain: nonce.domain, nonce: nonce.nonce, uri: nonce.uri, version: '1', issuedAt: new Date() });
    const body = JSON.stringify({ message, signature: await wallet.signMessage({ message }) });
    const post = (cookie?: string) => t.request('/trpc/auth.verify', { method: 'POST', clientIp: ip, headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) }, body });
    const refused = await post();
    expect(refused.status).toBe(401);
    expect((await refused.json()).error.data.api.message).toContain('no pipo_nonce cookie');
    const res = await post(cookieSet(issued, 'pipo_nonce')!);
    expect(res.status).toBe(200);
    expect(res.headers.getSetCookie().map((c) => c.split('=')[0])).toEqual(['pipo_session', 'pipo_nonce']);
  });
});

describe('the message\'s scheme', () => {
  test('evil:// is refused (401 naming it); the service\'s own scheme, or none, is accepted', async () => {
    const wallet = newWallet();
    const evil = await signInMessage(t, wallet, { scheme: 'evil' });
    expect(evil.startsWith('evil://localhost:')).toBe(true);
    expect(await refusal(await verify(t, evil, await wallet.signMessage({ message: evil })))).toMatchObject({ status: 401, code: 'UNAUTHORIZED', message: expect.stringContaining('scheme evil') });
    const https = await signInMessage(t, wallet, { scheme: 'https' }); // the service runs on http://localhost here
    expect(await refusal(await verify(t, https, await wallet.signMessage({ message: https })))).toMatchObject({ status: 401, message: expect.stringContaining('scheme https') });
    const own = await signInMessage(t, wallet, { scheme: 'http' });
    expect((await verify(t, own, await wallet.signMessage({ message: own }))).status).toBe(200);
  });
});

describe('live sessions per account', () => {
  test('40 sign-ins of one wallet leave SESSION_MAX_PER_ACCOUNT live sessions: the oldest are revoked, the newest work', async () => {
    const max = t.config.auth.sessionMaxPerAccount;
    expect(max).toBe(10); // the default
    const wallet = newWallet();
    const first = await signIn(t, wallet);
    const cookies = [first.cookie];
    // 38 more in concurrent waves (the cap must hold when sign-ins race), then the last one alone.
    for (let wave = 0; wave < 3; wave++) cookies.push(...(await Promise.all(Array.from({ length: wave < 2 ? 13 : 12 }, () => signIn(t, wallet)))).map((s) => s.cookie));
    const last = await signIn(t, wallet);
    cookies.push(last.cookie);
    expect(cookies.length).toBe(40);

    const live = await t.database.db
      .select({ n: sql<number>`count(*)::int` })
      .from(authSessions)
      .where(and(eq(authSessions.accountId, first.accountId), isNull(authSessions.revokedAt), gt(authSessions.expiresAt, sql`now()`)));
    expect(live[0]!.n).toBe(max);
    const statuses = await Promise.all(cookies.map(async (cookie) => (await t.request('/api/auth/session', { headers: { cookie } })).status));
    expect(statuses.filter((s) => s === 200).length).toBe(max);
    expect(statuses[0]).toBe(401); // the oldest
    expect(statuses[39]).toBe(200); // the newest
  }, 120_000);
});

describe('sign-ins per client IP and per wallet', () => {
  let limited: TestApp;
  beforeAll(async () => {
    // Three at once, then one per 100 s: nothing refills during the test.
    limited = await createTestApp({ RATE_LIMIT_SIGN_IN_RPS: '0.01', RATE_LIMIT_SIGN_IN_BURST: '3' });
  });
  afterAll(() => limited.close());

  const expectLimited = async (res: Response) => {
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await res.json()).code).toBe('RATE_LIMITED');
  };

  /** A signed message for `wallet` whose nonce another (fresh) client asked for, and that client. */
  const signed = async (wallet = newWallet()) => {
    const asker = newClient();
    const message = await signInMessage(limited, wallet, {}, asker);
    return { message, signature: await wallet.signMessage({ message }), cookie: asker.nonceCookie };
  };

  test('nonces per client IP: past the burst, 429 with Retry-After', async () => {
    const ip = newClient().ip;
    for (let i = 0; i < 3; i++) expect((await limited.request('/api/auth/nonce', { clientIp: ip })).status).toBe(200);
    await expectLimited(await limited.request('/api/auth/nonce', { clientIp: ip }));
    expect((await limited.request('/api/auth/nonce', { clientIp: newClient().ip })).status).toBe(200); // another address is not affected
  });

  test('verifications per client IP: past the burst, 429 before any check', async () => {
    const ip = newClient().ip;
    for (let i = 0; i < 3; i++) {
      const s = await signed();
      expect((await verify(limited, s.message, s.signature, { ip, nonceCookie: s.cookie })).status).toBe(200);
    }
    const s = await signed();
    await expectLimited(await verify(limited, s.message, s.signature, { ip, nonceCookie: s.cookie }));
    // The refused message's nonce was not used: from another address it still signs in.
    expect((await verify(limited, s.message, s.signature, { ip: newClient().ip, nonceCookie: s.cookie })).status).toBe(200);
  });

  test('verifications per wallet: past the burst, 429; forged signatures never use up a wallet\'s sign-ins', async () => {
    const wallet = newWallet();
    // Five forgeries for the wallet (another key signs), each from its own address: 401, and no token taken.
    for (let i = 0; i < 5; i++) {
      const { message, cookie } = await signed(wallet);
      const forged = await verify(limited, message, await newWallet().signMessage({ message }), { ip: newClient().ip, nonceCookie: cookie });
      expect(forged.status).toBe(401);
    }
    for (let i = 0; i < 3; i++) {
      const s = await signed(wallet);
      expect((await verify(limited, s.message, s.signature, { ip: newClient().ip, nonceCookie: s.cookie })).status).toBe(200);
    }
    const s = await signed(wallet);
    await expectLimited(await verify(limited, s.message, s.signature, { ip: newClient().ip, nonceCookie: s.cookie }));
  });
});
