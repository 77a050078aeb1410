/** API key management with a dashboard key (docs/decisions.md §3), through /api and the typed tRPC client. */
import { SCOPES } from '../../server/accounts/scopes.ts';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createTestApp, DASHBOARD_KEY, json, trpcClient, type TestApp } from '../harness/app.ts';
import { dashboardHeaders } from '../harness/factories.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const dash = (accountId: string, extra: Record<string, string> = {}) => ({ ...dashboardHeaders(DASHBOARD_KEY, accountId), ...extra });
const createKey = (accountId: string, name: string) =>
  t.request('/api/keys', { method: 'POST', headers: dash(accountId, { 'content-type': 'application/json' }), body: JSON.stringify({ name }) });

describe('POST /api/keys', () => {
  test('returns 201 with the full key once; the key works at once', async () => {
    const res = await createKey('acme-create', 'ci bot');
    expect(res.status).toBe(201);
    const created = await json(res);
    expect(Object.keys(created).sort()).toEqual(['allScopes', 'capPeriod', 'createdAt', 'id', 'key', 'maskedKey', 'mode', 'name', 'scopes', 'spendCapUsd']);
    expect(created.mode).toBe('live');
    expect(created).toMatchObject({ spendCapUsd: null, capPeriod: null });
    expect(created.id).toMatch(/^key_[1-9A-HJ-NP-Za-km-z]+$/);
    expect(created.key).toMatch(/^pipo_live_[1-9A-HJ-NP-Za-km-z]{40,46}$/);
    expect(created.maskedKey).toBe(`${created.key.slice(0, 14)}…${created.key.slice(-4)}`);
    expect(new Date(created.createdAt).toISOString()).toBe(created.createdAt);
    // The new account has no funds yet: the key authenticates, then billing refuses.
    const use = await t.request('/api/billing', { headers: { 'x-api-key': created.key } });
    expect(use.status).toBe(402);
  });

  test('validates the name (and a refused creation creates no account)', async () => {
    for (const body of [{}, { name: '' }, { name: '   ' }, { name: 'x'.repeat(65) }, { name: 5 }, { name: 'ok', extra: 1 }]) {
      const res = await t.request('/api/keys', { method: 'POST', headers: dash('acme-v', { 'content-type': 'application/json' }), body: JSON.stringify(body) });
      expect(res.status).toBe(400);
      const error = await json(res);
      expect(error.code).toBe('BAD_REQUEST');
      expect(error.message).toMatch(/name|extra/);
    }
    expect((await t.request('/api/keys', { headers: dash('acme-v') })).status).toBe(404);
  });
});

describe('GET /api/keys', () => {
  test('lists masked keys only, newest first, with status and lastUsed', async () => {
    const a = await json(await createKey('acme-list', 'first'));
    // Two keys created within the database clock's resolution tie on createdAt (either order is newest first).
    await Bun.sleep(5);
    const b = await json(await createKey('acme-list', 'second'));
    await t.request('/api/billing', { headers: { 'x-api-key': a.key } });
    const res = await t.request('/api/keys', { headers: dash('acme-list') });
    expect(res.status).toBe(200);
    const text = await res.clone().text();
    expect(text).not.toContain(a.key);
    expect(text).not.toContain(b.key);
    const { keys } = await json(res);
    expect(keys.map((k: any) => k.name)).toEqual(['second', 'first']);
    expect(keys[0]).toEqual({ id: b.id, name: 'second', maskedKey: b.maskedKey, createdAt: b.createdAt, lastUsed: null, status: 'active', spendCapUsd: null, capPeriod: null, spentThisPeriodUsd: null, scopes: [...SCOPES], allScopes: true, mode: 'live' });
    expect(keys[1].lastUsed).not.toBeNull();
  });

  test('shows only the keys of the account named by x-account-id', async () => {
    await createKey('tenant-a', 'a-key');
    const own = await json(await createKey('tenant-b', 'b-key'));
    const { keys } = await json(await t.request('/api/keys', { headers: dash('tenant-b') }));
    expect(keys.map((k: any) => k.id)).toEqual([own.id]);
  });

  test('an account that does not exist is 404, not an empty list', async () => {
    const res = await t.request('/api/keys', { headers: dash('tenant-nobody') });
    expect(res.status).toBe(404);
    expect((await json(res)).message).toContain('POST /api/keys');
  });
});

describe('DELETE /api/keys/:id', () => {
  test('revokes permanently and immediately; a second revoke is 404', async () => {
    const created = await json(await createKey('acme-revoke', 'doomed'));
    const res = await t.request(`/api/keys/${created.id}`, { method: 'DELETE', headers: dash('acme-revoke') });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ success: true, id: created.id, status: 'revoked' });
    expect(new Date(body.revokedAt).toISOString()).toBe(body.revokedAt);
    const after = await t.request('/api/billing', { headers: { 'x-api-key': created.key } });
    expect(after.status).toBe(401);
    expect((await json(after)).message).toContain('revoked');
    const again = await t.request(`/api/keys/${created.id}`, { method: 'DELETE', headers: dash('acme-revoke') });
    expect(again.status).toBe(404);
    const { keys } = await json(await t.request('/api/keys', { headers: dash('acme-revoke') }));
    expect(keys[0].status).toBe('revoked');
  });

  test('cannot revoke another account\'s key', async () => {
    const created = await json(await createKey('owner', 'mine'));
    await createKey('intruder', 'theirs');
    const res = await t.request(`/api/keys/${created.id}`, { method: 'DELETE', headers: dash('intruder') });
    expect(res.status).toBe(404);
    expect((await t.request('/api/billing', { headers: { 'x-api-key': created.key } })).status).toBe(402);
  });
});

describe('over the typed tRPC client', () => {
  test('create, list and revoke', async () => {
    const client = trpcClient(t, dash('acme-trpc'));
    const created = await client.keys.create.mutate({ name: 'typed' });
    expect(created.key.startsWith('pipo_')).toBe(true);
    const listed = await client.keys.list.query();
    expect(listed.keys.map((k) => k.id)).toEqual([created.id]);
    const revoked = await client.keys.revoke.mutate({ id: created.id });
    expect(revoked.status).toBe('revoked');
    const error = await client.keys.revoke.mutate({ id: created.id }).catch((e) => e);
    expect(error.data.api).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect(error.data.httpStatus).toBe(404);
  });
});
