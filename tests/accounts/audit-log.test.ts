/**
 * The audit log (server/audit/log.ts): each listed action, made once through the HTTP surface by its
 * real actor (a named operator, an API key, a signed-in wallet, the CLI), is recorded exactly once
 * with that actor, its account and its address; a retry that changes nothing (a repeated credit
 * reference, a second delete, a second sign-out) and a refused change record nothing; the log is
 * append-only in the database itself; an account reads only its own entries (its test side's
 * included), an operator every entry.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { auditLog } from '../../db/schema.ts';
import { runCli } from '../../server/commands/cli.ts';
import { testSideOf } from '../../server/accounts/modes.ts';
import { createTestApp, json, type TestApp } from '../harness/app.ts';
import { fundedAccount, newUserId } from '../harness/factories.ts';
import { signIn } from '../harness/sign-in.ts';
import { startReceiver, type WebhookReceiver } from '../harness/webhook-receiver.ts';

const ALICE_KEY = 'dash_alice_0123456789abcdef0123456789abcd';
const BOB_KEY = 'dash_bob_0123456789abcdef0123456789abcdef';
const IP = '203.0.113.7';

let t: TestApp;
let receiver: WebhookReceiver;
const accountId = `audit-${process.pid}-${Date.now()}`;

const asOperator = (key: string, extra: Record<string, string> = {}) => ({ 'x-api-key': key, 'x-account-id': accountId, 'content-type': 'application/json', ...extra });
const call = (path: string, init: { method?: string; headers: Record<string, string>; body?: unknown }) =>
  t.request(path, { method: init.method ?? 'POST', headers: init.headers, body: init.body === undefined ? undefined : JSON.stringify(init.body), clientIp: IP });

/** The account's entries of one action, oldest first, from the database. */
const entries = async (action: string) =>
  (await t.database.db.select().from(auditLog).where(eq(auditLog.action, action)).orderBy(auditLog.seq)).filter((e) => e.accountId === null || e.accountId === accountId || e.accountId === testSideOf(accountId));

beforeAll(async () => {
  receiver = startReceiver();
  t = await createTestApp({ DASHBOARD_KEYS: `alice=${ALICE_KEY},${BOB_KEY}`, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
});
afterAll(async () => {
  await t.close();
  receiver.stop();
});

describe('each action, once, with its actor', () => {
  let keyId: string;
  let apiKey: string;

  test('operators are named: alice by name, a bare key by its position; GET /api/operators lists them', async () => {
    const created = await call('/api/keys', { headers: asOperator(ALICE_KEY), body: { name: 'bot', scopes: ['account:read', 'account:write', 'trading:write', 'trading:read'] } });
    expect(created.status).toBe(201);
    ({ id: keyId, key: apiKey } = await json(created));
    const operators = await json(await t.request('/api/operators', { headers: asOperator(BOB_KEY) }));
    expect(operators).toEqual({ operators: [{ name: 'alice' }, { name: 'operator-2' }], you: 'operator-2' });
    const [entry] = await entries('key.created');
    expect(entry).toMatchObject({ actorKind: 'operator', actorId: 'alice', accountId, targetId: keyId, clientIp: IP });
    expect(entry!.details).toMatchObject({ name: 'bot', mode: 'live', scopes: ['trading:read', 'trading:write', 'account:read', 'account:write'] });
    expect(JSON.stringify(entry)).not.toContain(apiKey); // never the key itself
  });

  test('credits, rates and plans by an operator; a repeated credit reference records nothing', async () => {
    for (let i = 0; i < 2; i++) expect((await call('/api/accounts/credits', { headers: asOperator(BOB_KEY), body: { amountUsd: 5, reference: 'inv-1' } })).status).toBe(200);
    expect((await call('/api/accounts/rate', { method: 'PUT', headers: asOperator(ALICE_KEY), body: { costPerRequestUsd: 0.001 } })).status).toBe(200);
    expect((await call('/api/accounts/billing-plan', { method: 'PUT', headers: asOperator(ALICE_KEY), body: { plan: 'prepaid' } })).status).toBe(200);
    expect((await entries('account.credited')).map((e) => [e.actorId, e.targetId, e.details])).toEqual([['operator-2', 'inv-1', { amountUsd: 5 }]]);
    expect((await entries('account.rate_set')).map((e) => [e.actorId, e.details])).toEqual([['alice', { costPerRequestUsd: 0.001 }]]);
    expect((await entries('account.plan_set')).length).toBe(1);
  });

  test('credentials and webhooks by an API key; a second delete records nothing', async () => {
    const user = newUserId();
    const headers = { 'x-api-key': apiKey, 'x-user-id': user, 'content-type': 'application/json' };
    expect((await call('/api/trading/credentials', { headers, body: { apiKey: 'k', secret: 'c2VjcmV0', passphrase: 'p' } })).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await call('/api/trading/credentials', { method: 'DELETE', headers })).status).toBe(200);
    const hook = await json(await call('/api/webhooks', { headers, body: { url: `${receiver.url}/a`, events: ['order.filled'] } }));
    expect((await call(`/api/webhooks/${hook.id}/rotate-secret`, { headers })).status).toBe(200);
    for (let i = 0; i < 2; i++) await call(`/api/webhooks/${hook.id}`, { method: 'DELETE', headers });
    const actor = { actorKind: 'key', actorId: keyId, accountId, clientIp: IP };
    for (const [action, target] of [['credentials.stored', user], ['credentials.deleted', user], ['webhook.created', hook.id], ['webhook.secret_rotated', hook.id], ['webhook.deleted', hook.id]] as const) {
      const found = await entries(action);
      expect([action, found.length]).toEqual([action, 1]);
      expect(found[0]).toMatchObject({ ...actor, targetId: target });
    }
    expect(JSON.stringify(await entries('webhook.created'))).not.toContain(hook.secret);
  });

  test('a revocation, and a refused one records nothing', async () => {
    expect((await call(`/api/keys/${keyId}`, { method: 'DELETE', headers: asOperator(ALICE_KEY) })).status).toBe(200);
    expect((await call(`/api/keys/${keyId}`, { method: 'DELETE', headers: asOperator(ALICE_KEY) })).status).toBe(404);
    expect((await entries('key.revoked')).map((e) => [e.actorId, e.targetId])).toEqual([['alice', keyId]]);
  });

  test('event resolution and listing by an operator (the service\'s entries, no account)', async () => {
    const body = { winningBandId: 'paper-anthropic-ipo-2' };
    for (let i = 0; i < 2; i++) {
      const res = await call('/api/events/anthropic-ipo/resolution', { headers: asOperator(ALICE_KEY), body });
      expect(`${res.status} ${await res.text()}`).toStartWith('200 ');
    }
    const resolved = (await entries('event.resolved')).filter((e) => e.targetId === 'anthropic-ipo');
    expect(resolved.map((e) => [e.actorId, e.accountId, e.details])).toEqual([['alice', null, { status: 'resolved', winningBandId: 'paper-anthropic-ipo-2', winningBandLabel: expect.any(String) }]]);
    // Listing changes; setting the same listing again changes nothing and records nothing.
    for (const listing of ['hidden', 'listed', 'listed']) expect((await call('/api/events/perplexity-ipo/listing', { headers: asOperator(BOB_KEY), body: { listing } })).status).toBe(200);
    const listings = (await entries('event.listing_set')).filter((e) => e.targetId === 'perplexity-ipo');
    expect(listings.map((e) => [e.actorId, e.details])).toEqual([['operator-2', { listing: 'hidden' }], ['operator-2', { listing: 'listed' }]]);
  });

  test('sign-in and sign-out by a wallet; a second sign-out records nothing', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const session = await signIn(t, wallet);
    const signedIn = (await t.database.db.select().from(auditLog).where(eq(auditLog.action, 'session.signed_in'))).filter((e) => e.actorId.toLowerCase() === wallet.address.toLowerCase());
    expect(signedIn.length).toBe(1);
    expect(signedIn[0]).toMatchObject({ actorKind: 'session', accountId: session.accountId });
    for (let i = 0; i < 2; i++) expect((await t.request('/api/auth/logout', { method: 'POST', headers: session.headers })).status).toBe(i === 0 ? 200 : 401);
    const out = (await t.database.db.select().from(auditLog).where(eq(auditLog.action, 'session.signed_out'))).filter((e) => e.accountId === session.accountId);
    expect(out.length).toBe(1);
  });

  test('the command line is an actor too', async () => {
    await runCli(['credit', '--account', accountId, '--usd', '2', '--reference', 'cli-1'], t.services);
    await runCli(['credit', '--account', accountId, '--usd', '2', '--reference', 'cli-1'], t.services);
    expect((await entries('account.credited')).filter((e) => e.actorKind === 'system').map((e) => [e.actorId, e.targetId])).toEqual([['cli', 'cli-1']]);
  });
});

describe('reading the log', () => {
  test('an account reads its own entries (newest first, by cursor), never another\'s; an operator reads every entry', async () => {
    const reader = await fundedAccount(t, { usd: 1, accountId });
    const first = await json(await t.request('/api/audit-log?limit=3', { headers: reader.headers }));
    expect(first.entries.length).toBe(3);
    expect(first.entries.every((e: { accountId: string }) => e.accountId === accountId)).toBe(true);
    const seqs: string[] = [];
    let cursor: string | null = null;
    let all: { id: string; action: string }[] = [];
    do {
      const page: { entries: { id: string; action: string }[]; nextCursor: string | null } = await json(await t.request(`/api/audit-log?limit=3${cursor ? `&cursor=${cursor}` : ''}`, { headers: reader.headers }));
      all = all.concat(page.entries);
      cursor = page.nextCursor;
      if (cursor) seqs.push(cursor);
    } while (cursor);
    const ours = (await t.database.db.select().from(auditLog).where(eq(auditLog.accountId, accountId))).length;
    expect(all.length).toBe(ours);
    expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
    const other = await fundedAccount(t, { usd: 1 });
    const theirs = await json(await t.request('/api/audit-log', { headers: other.headers }));
    expect(theirs.entries.some((e: { accountId: string }) => e.accountId === accountId)).toBe(false);
    const everything = await json(await t.request('/api/operator/audit-log?everyAccount=true&limit=100', { headers: asOperator(ALICE_KEY) }));
    expect(everything.entries.some((e: { action: string; accountId: string | null }) => e.action === 'event.resolved' && e.accountId === null)).toBe(true);
    const refused = await t.request('/api/audit-log?cursor=not-a-cursor', { headers: reader.headers });
    expect(refused.status).toBe(400);
  });

  test('the database refuses to change or remove an entry', async () => {
    const run = async (statement: ReturnType<typeof sql>) => {
      await t.database.db.execute(statement);
    };
    for (const statement of [sql`update audit_log set actor_id = 'mallory'`, sql`delete from audit_log`, sql`truncate audit_log`]) {
      const error = await run(statement).then(() => null, (e: Error & { cause?: Error }) => e);
      expect(String(error?.cause?.message ?? error?.message)).toMatch(/append-only/);
    }
    expect((await t.database.db.select().from(auditLog).where(eq(auditLog.actorId, 'mallory'))).length).toBe(0);
  });
});
