/**
 * Sign-in with a wallet over /api and /trpc: an EIP-4361 message checked field by
 * field (domain, URI, chain id, issued-at, expiry, not-before, nonce once) and by signature; a first
 * sign-in creates the wallet's account; the session cookie (HttpOnly, SameSite=Lax, Secure off
 * localhost) acts for that account only on the account routes, unbilled, until it expires or the user
 * logs out; state changes need a trusted Origin. The rules every route follows are in security.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { getAddress, hashMessage } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import { startEvm } from '../harness/in-process-evm.ts';
import { accounts, authSessions } from '../../db/schema.ts';
import { createTestApp, DASHBOARD_KEY, trpcClient, type TestApp } from '../harness/app.ts';
import { dashboardHeaders, fundedAccount } from '../harness/factories.ts';
import { cookieSet, newClient, signIn, signInMessage, verify } from '../harness/sign-in.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const newWallet = () => privateKeyToAccount(generatePrivateKey());
const refusal = async (res: Response) => ({ status: res.status, ...(await res.json()) });

describe('the message', () => {
  test('a valid sign-in creates the wallet\'s account once; the next sign-in is the same account', async () => {
    const wallet = newWallet();
    const message = await signInMessage(t, wallet);
    const res = await verify(t, message, await wallet.signMessage({ message }));
    expect(res.status).toBe(200);
    const first = await res.json();
    const accountId = first.accountId as string;
    expect(first).toMatchObject({ accountId: expect.stringMatching(/^acct_/), address: wallet.address, created: true });
    const again = await signIn(t, wallet);
    expect(again.accountId).toBe(accountId);
    const me = await t.request('/api/accounts/me', { headers: again.headers });
    expect(await me.json()).toMatchObject({ accountId, balanceUsd: 0, wallets: [wallet.address] });
  });

  test('the cookie: HttpOnly, SameSite=Lax, not Secure on http://localhost, opaque and stored only hashed', async () => {
    const wallet = newWallet();
    const message = await signInMessage(t, wallet);
    const res = await verify(t, message, await wallet.signMessage({ message }));
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('pipo_session='))!;
    expect(cookie).toMatch(/^pipo_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    const token = cookie.split(';')[0]!.split('=')[1]!;
    const rows = await t.database.db.select().from(authSessions);
    expect(rows.some((r) => r.tokenHash === token)).toBe(false);
    expect(rows.some((r) => r.tokenHash === new Bun.CryptoHasher('sha256').update(token).digest('hex'))).toBe(true);
    // Served on a public https origin, the cookie is Secure.
    const secure = await createTestApp({ PUBLIC_URL: 'https://api.example.com' });
    try {
      const w = newWallet();
      const m = await signInMessage(secure, w);
      const r = await verify(secure, m, await w.signMessage({ message: m }));
      expect(r.headers.getSetCookie().map((c) => c.split('; ').includes('Secure'))).toEqual([true, true]); // the session's, the nonce's cleared
    } finally {
      await secure.close();
    }
  });

  test('a nonce works once, even for two verifications at the same moment', async () => {
    const wallet = newWallet();
    const message = await signInMessage(t, wallet);
    const signature = await wallet.signMessage({ message });
    const answers = await Promise.all([verify(t, message, signature), verify(t, message, signature), verify(t, message, signature)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 401, 401]);
    const again = await refusal(await verify(t, message, signature));
    expect(again).toMatchObject({ status: 401, code: 'UNAUTHORIZED', message: expect.stringContaining('nonce') });
  });

  test.each([
    ['another domain', { domain: 'evil.example' }, 'is for evil.example'],
    ['a URI on another origin', { uri: 'https://evil.example/login' }, 'URI'],
    ['another chain', { chainId: 1 }, 'chain 1'],
    ['an expired message', { expirationTime: new Date(Date.now() - 60_000) }, 'expired'],
    ['a message not valid yet', { notBefore: new Date(Date.now() + 3_600_000) }, 'not valid yet'],
    ['a message issued in the future', { issuedAt: new Date(Date.now() + 3_600_000) }, 'future'],
    ['a made-up nonce', { nonce: 'abcdefgh12345678' }, 'nonce'],
  ])('refuses %s (401 naming it)', async (_, overrides, reason) => {
    const wallet = newWallet();
    const message = await signInMessage(t, wallet, overrides);
    const answer = await refusal(await verify(t, message, await wallet.signMessage({ message })));
    expect(answer).toMatchObject({ status: 401, code: 'UNAUTHORIZED', message: expect.stringContaining(reason) });
  });

  test('a smart wallet (ERC-1271) signs in through the chain; its owner\'s signature for another contract does not', async () => {
    const evm = await startEvm();
    const chained = await createTestApp({}, { database: t.database, polygon: evm.client });
    try {
      const owner = newWallet();
      const wallet = await evm.deploy('DepositWallet', [owner.address, '0x00000000000Fb5C9ADea0298D729A0CB3823Cc07']);
      const message = await signInMessage(chained, { address: wallet } as never);
      const signature = await owner.sign({ hash: hashMessage(message) });
      const res = await verify(chained, message, signature);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ address: getAddress(wallet), created: true });
      // Without the chain (no POLYGON_RPC_URL) a contract wallet cannot be checked: refused.
      const again = await signInMessage(t, { address: wallet } as never);
      expect((await verify(t, again, await owner.sign({ hash: hashMessage(again) }))).status).toBe(401);
      // Another contract's owner cannot sign for this one.
      const stranger = newWallet();
      const third = await signInMessage(chained, { address: wallet } as never);
      expect((await verify(chained, third, await stranger.sign({ hash: hashMessage(third) }))).status).toBe(401);
    } finally {
      await chained.close();
      await evm.close();
    }
  }, 60_000);

  test('refuses a signature by another wallet (401), a malformed message or signature (400)', async () => {
    const wallet = newWallet();
    const message = await signInMessage(t, wallet);
    expect(await refusal(await verify(t, message, await newWallet().signMessage({ message })))).toMatchObject({ status: 401, message: expect.stringContaining('signature') });
    expect(await refusal(await verify(t, 'hello', await wallet.signMessage({ message: 'hello' })))).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
    expect(await refusal(await verify(t, message, 'not hex'))).toMatchObject({ status: 400, message: expect.stringContaining('signature') });
    const extra = await t.request('/api/auth/verify', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message, signature: '0x00', extra: 1 }) });
    expect(extra.status).toBe(400);
  });
});

describe('the session', () => {
  test('a billed read that a browser marks cross-site is refused (403) and costs nothing, unless its Origin is trusted', async () => {
    const customer = await signIn(t);
    await fundedAccount(t, { accountId: customer.accountId, usd: 1 });
    const usageCount = async () => (await t.database.db.select({ n: accounts.usageCount }).from(accounts).where(eq(accounts.id, customer.accountId)))[0]!.n;
    const before = await usageCount();
    for (const site of ['cross-site', 'same-site']) {
      // A link or a top-level navigation from another site: the Lax cookie rides along, no Origin on a GET.
      const res = await t.request('/api/billing', { headers: { cookie: customer.cookie, 'sec-fetch-site': site } });
      expect(res.status).toBe(403);
      const body = await res.json();
      expect(body.code).toBe('FORBIDDEN_ORIGIN');
      expect(body.message).toContain(`Sec-Fetch-Site: ${site}`);
    }
    expect(await usageCount()).toBe(before);
    // The dashboard's own requests (same-origin), scripts (no such header) and a trusted Origin pass, billed.
    const passing: Array<Record<string, string>> = [{ cookie: customer.cookie, 'sec-fetch-site': 'same-origin' }, { cookie: customer.cookie }, { ...customer.headers, 'sec-fetch-site': 'cross-site' }];
    for (const headers of passing) {
      const res = await t.request('/api/billing', { headers });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-cost-usd')).toBe('0.002');
    }
    expect(await usageCount()).toBe(before + 3);
  });

  test('acts for its own account on the account routes, over /api and /trpc, billed where a key is; x-account-id cannot point it elsewhere', async () => {
    const customer = await signIn(t);
    const other = await fundedAccount(t, { usd: 5 });
    // Keys: create, list, revoke — its own only.
    const created = await t.request('/api/keys', { method: 'POST', headers: { ...customer.headers, 'content-type': 'application/json', 'x-account-id': other.accountId }, body: JSON.stringify({ name: 'bot' }) });
    expect(created.status).toBe(201);
    const key = await created.json();
    const listed = await (await t.request('/api/keys', { headers: { ...customer.headers, 'x-account-id': other.accountId } })).json();
    expect(listed.keys.map((k: any) => k.id)).toEqual([key.id]);
    const foreign = await t.request(`/api/keys/${other.apiKeyId}`, { method: 'DELETE', headers: customer.headers });
    expect(foreign.status).toBe(404);
    // The operator sees the key under the customer's account.
    const ops = await (await t.request('/api/keys', { headers: dashboardHeaders(DASHBOARD_KEY, customer.accountId) })).json();
    expect(ops.keys.map((k: any) => k.id)).toEqual([key.id]);
    // Billing and usage with the session: the account's own, billed like a key's call (402 at $0).
    const broke = await t.request('/api/billing', { headers: customer.headers });
    expect(broke.status).toBe(402);
    expect((await broke.json()).code).toBe('INSUFFICIENT_BALANCE');
    await t.request('/api/accounts/credits', { method: 'POST', headers: { ...dashboardHeaders(DASHBOARD_KEY, customer.accountId), 'content-type': 'application/json' }, body: JSON.stringify({ amountUsd: 1, reference: `auth-${customer.accountId}` }) });
    const billing = await t.request('/api/billing', { headers: customer.headers });
    expect(billing.status).toBe(200);
    expect(billing.headers.get('x-request-cost-usd')).toBe('0.002');
    expect(await billing.json()).toMatchObject({ usageCount: 1, balanceUsd: 0.998 });
    const usage = await (await t.request('/api/usage', { headers: customer.headers })).json();
    expect(usage.records.map((r: any) => [r.path, r.keyId])).toEqual([['/api/usage', null], ['/api/billing', null]]);
    // The typed client, with the cookie.
    const client = trpcClient(t, customer.headers);
    expect(await client.auth.session.query()).toMatchObject({ accountId: customer.accountId, address: customer.wallet.address, wallets: [customer.wallet.address] });
    expect((await client.keys.list.query()).keys.map((k) => k.id)).toEqual([key.id]);
    const revoked = await client.keys.revoke.mutate({ id: key.id });
    expect(revoked).toMatchObject({ id: key.id, status: 'revoked' });
    // The key header wins: a key presented with a cookie is authenticated (and billed) as a key.
    const [row] = await t.database.db.select().from(accounts).where(eq(accounts.id, other.accountId));
    const withKey = await t.request('/api/billing', { headers: { ...customer.headers, 'x-api-key': other.apiKey } });
    expect(withKey.status).toBe(200);
    expect((await withKey.json()).usageCount).toBe(row!.usageCount + 1);
  });

  test('a state change needs a trusted Origin (CSRF): none or a foreign one is 403, the service\'s own or a CORS origin passes', async () => {
    const customer = await signIn(t);
    const create = (headers: Record<string, string>) => t.request('/api/keys', { method: 'POST', headers: { cookie: customer.cookie, 'content-type': 'application/json', ...headers }, body: JSON.stringify({ name: 'x' }) });
    expect(await refusal(await create({}))).toMatchObject({ status: 403, code: 'FORBIDDEN_ORIGIN', message: expect.stringContaining('missing') });
    expect((await create({ origin: 'https://evil.example' })).status).toBe(403);
    expect((await create({ origin: customer.origin })).status).toBe(201);
    const withCors = await createTestApp({ CORS_ORIGINS: 'https://app.example.com' }, { database: t.database });
    try {
      const r = await withCors.request('/api/keys', { method: 'POST', headers: { cookie: customer.cookie, origin: 'https://app.example.com', 'content-type': 'application/json' }, body: JSON.stringify({ name: 'y' }) });
      expect(r.status).toBe(201);
    } finally {
      await withCors.close();
    }
  });

  test('without PUBLIC_URL, localhost, 127.0.0.1 and [::1] on the port are one service: a sign-in at 127.0.0.1 carries its own domain, and its Origin is trusted', async () => {
    const port = new URL(t.services.config.auth.publicUrl).port;
    for (const host of [`127.0.0.1:${port}`, `[::1]:${port}`]) {
      // [::1] signs in as localhost (EIP-4361 tools refuse an IPv6 literal as the domain); its Origin is trusted all the same.
      const domain = host.startsWith('[') ? `localhost:${port}` : host;
      const client = newClient();
      const wallet = privateKeyToAccount(generatePrivateKey());
      // A browser at http://<host>/dashboard: its requests carry that Host, and its Origin.
      const issued = await t.request('/api/auth/nonce', { clientIp: client.ip, headers: { host } });
      const nonce = await issued.json();
      expect([nonce.domain, nonce.uri]).toEqual([domain, `http://${domain}`]);
      const message = createSiweMessage({ address: wallet.address, chainId: nonce.chainId, domain: nonce.domain, nonce: nonce.nonce, uri: nonce.uri, version: '1', issuedAt: new Date() });
      const verified = await t.request('/api/auth/verify', {
        method: 'POST',
        clientIp: client.ip,
        headers: { host, 'content-type': 'application/json', cookie: cookieSet(issued, 'pipo_nonce')! },
        body: JSON.stringify({ message, signature: await wallet.signMessage({ message }) }),
      });
      expect(verified.status).toBe(200);
      const cookie = cookieSet(verified, 'pipo_session')!;
      const created = await t.request('/api/keys', { method: 'POST', headers: { host, cookie, origin: `http://${host}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'from 127.0.0.1' }) });
      expect(created.status).toBe(201);
      // Another port is another service.
      const elsewhere = await t.request('/api/keys', { method: 'POST', headers: { cookie, origin: 'http://127.0.0.1:1', 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x' }) });
      expect(elsewhere.status).toBe(403);
    }
  });

  test('with PUBLIC_URL set, only it is the service: 127.0.0.1 is another origin, and the message must name PUBLIC_URL', async () => {
    const fixed = await createTestApp({ PUBLIC_URL: 'https://api.example.com' }, { database: t.database });
    try {
      const customer = await signIn(fixed);
      expect(customer.origin).toBe('https://api.example.com');
      const local = await fixed.request('/api/keys', { method: 'POST', headers: { cookie: customer.cookie, origin: `http://127.0.0.1:${fixed.config.port}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x' }) });
      expect(await refusal(local)).toMatchObject({ status: 403, code: 'FORBIDDEN_ORIGIN' });
      const nonce = await (await fixed.request('/api/auth/nonce', { headers: { host: `127.0.0.1:${fixed.config.port}` } })).json();
      expect(nonce.domain).toBe('api.example.com');
    } finally {
      await fixed.close();
    }
  });

  test('a stale cookie is limited per address in a bucket of its own: API keys from that address keep working; no cookie counts nowhere', async () => {
    const limited = await createTestApp({ RATE_LIMIT_AUTH_FAILURE_RPS: '1', RATE_LIMIT_AUTH_FAILURE_BURST: '5' }, { database: t.database });
    try {
      const key = await fundedAccount(limited, { usd: 1 });
      const stale = { cookie: 'pipo_session=' + 'A'.repeat(43) };
      const answers = [];
      for (let i = 0; i < 10; i++) answers.push((await limited.request('/api/auth/session', { headers: stale, clientIp: '198.51.100.7' })).status);
      expect(answers.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
      expect(answers.slice(6)).toEqual([429, 429, 429, 429]);
      expect((await limited.request('/api/billing', { headers: key.headers, clientIp: '198.51.100.7' })).status).toBe(200);
      for (let i = 0; i < 20; i++) expect((await limited.request('/api/auth/session', { clientIp: '198.51.100.8' })).status).toBe(401);
    } finally {
      await limited.close();
    }
  });

  test('a malformed date in the message is 400, never "no limit"', async () => {
    const wallet = newWallet();
    const message = (await signInMessage(t, wallet)).replace(/Issued At: .*/, 'Issued At: not-a-date');
    expect(await refusal(await verify(t, message, await wallet.signMessage({ message })))).toMatchObject({ status: 400 });
  });

  test('GET /api/auth/status answers signed in or not, never 401', async () => {
    const customer = await signIn(t);
    expect(await (await t.request('/api/auth/status', { headers: customer.headers })).json()).toMatchObject({ signedIn: true, accountId: customer.accountId, address: customer.wallet.address });
    const none = await t.request('/api/auth/status');
    expect(none.status).toBe(200);
    expect(await none.json()).toEqual({ signedIn: false, accountId: null, address: null, expiresAt: null });
    expect(await (await t.request('/api/auth/status', { headers: { cookie: 'pipo_session=' + 'B'.repeat(43) } })).json()).toMatchObject({ signedIn: false });
  });

  test('logout ends the session at once; an expired session is refused; operator-only routes never open to a session', async () => {
    const customer = await signIn(t);
    expect((await t.request('/api/auth/session', { headers: customer.headers })).status).toBe(200);
    const out = await t.request('/api/auth/logout', { method: 'POST', headers: customer.headers });
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
    expect(await refusal(await t.request('/api/auth/session', { headers: customer.headers }))).toMatchObject({ status: 401, message: expect.stringContaining('sign in again') });
    expect((await t.request('/api/keys', { headers: customer.headers })).status).toBe(401);

    const later = await signIn(t);
    await t.database.db.update(authSessions).set({ expiresAt: sql`now() - interval '1 second'` }).where(eq(authSessions.accountId, later.accountId));
    expect((await t.request('/api/accounts/me', { headers: later.headers })).status).toBe(401);

    const fresh = await signIn(t);
    const credit = await t.request('/api/accounts/credits', { method: 'POST', headers: { ...fresh.headers, 'content-type': 'application/json' }, body: JSON.stringify({ amountUsd: 5, reference: 'mine' }) });
    expect(credit.status).toBe(401);
    // Buying stays a program's work (with its key): a session never opens a position.
    const buy = await t.request('/api/trading/buy', { method: 'POST', headers: { ...fresh.headers, 'x-user-id': fresh.wallet.address, 'content-type': 'application/json' }, body: JSON.stringify({ eventId: 'openai-ipo', side: 'LONG', amount: 10 }) });
    expect(buy.status).toBe(401);
  });
});
