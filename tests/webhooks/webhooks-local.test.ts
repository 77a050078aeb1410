/**
 * Webhooks to a receiver on the developer's machine (docs/webhooks.md, "Trying webhooks locally"):
 * WEBHOOK_LOCAL_RECEIVERS lists loopback host:port pairs (anything else stops the configuration);
 * they are accepted, over http too, only while NODE_ENV is not production and the service's origin
 * (PUBLIC_URL) is on this machine, and only for the pairs listed, resolving to loopback addresses
 * alone. End to end: a development app registers http://localhost:PORT, delivers a test event that
 * the official `standardwebhooks` library verifies; a production app on the same database refuses
 * the URL at registration and refuses to send the delivery already queued for it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { and, eq } from 'drizzle-orm';
import { webhookDeliveries } from '../../db/schema.ts';
import { ConfigError, loadConfig } from '../../server/config.ts';
import { ApiError } from '../../server/errors.ts';
import type { WebhookHandles } from '../../server/webhooks/handles.ts';
import { checkedUrl } from '../../server/webhooks/service.ts';
import { localReceiversOf, resolveTarget, type Lookup } from '../../server/webhooks/ssrf.ts';
import { deliverDue } from '../../server/webhooks/worker.ts';
import { createTestApp, type TestApp } from '../harness/app.ts';
import { fundedAccount } from '../harness/factories.ts';
import { startReceiver, verifyWith, type WebhookReceiver } from '../harness/webhook-receiver.ts';

const loopback: Lookup = async () => ['127.0.0.1', '::1'];
const handles = (env: Record<string, string>) => ({ config: loadConfig({ NODE_ENV: 'development', ...env }) }) as unknown as WebhookHandles;

/** The stored URL, or the 400's message. */
async function check(env: Record<string, string>, url: string, lookup: Lookup = loopback): Promise<string> {
  try {
    return await checkedUrl(handles(env), url, { lookup });
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    expect(error.apiCode).toBe('BAD_REQUEST');
    return `400 ${error.message}`;
  }
}

describe('WEBHOOK_LOCAL_RECEIVERS: the configuration', () => {
  test('lists loopback host:port pairs (lower-cased); anything else stops the configuration naming the variable', () => {
    const config = loadConfig({ WEBHOOK_LOCAL_RECEIVERS: 'localhost:9000, 127.0.0.1:9001,[::1]:9002,LocalHost:65535' });
    expect(config.webhooks.localReceivers).toEqual(['localhost:9000', '127.0.0.1:9001', '[::1]:9002', 'localhost:65535']);
    expect(loadConfig({}).webhooks.localReceivers).toEqual([]);
    for (const bad of ['localhost', '10.0.0.5:80', '169.254.169.254:80', 'example.com:443', '127.0.0.2:80', '::1:9000', 'localhost:0', 'localhost:65536', 'http://localhost:9000', 'localhost:9000/hooks']) {
      expect(() => loadConfig({ WEBHOOK_LOCAL_RECEIVERS: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ WEBHOOK_LOCAL_RECEIVERS: bad }), bad).toThrow(/WEBHOOK_LOCAL_RECEIVERS: must list receivers on this machine as host:port/);
    }
  });

  test('applied only on a developer machine: not with NODE_ENV=production, not with a PUBLIC_URL elsewhere', () => {
    const listed = { WEBHOOK_LOCAL_RECEIVERS: 'localhost:9000' };
    const of = (env: Record<string, string>) => localReceiversOf(handles({ ...listed, ...env }).config);
    expect(of({})).toEqual({ receivers: ['localhost:9000'], ignoredBecause: null });
    expect(of({ NODE_ENV: 'test' })).toEqual({ receivers: ['localhost:9000'], ignoredBecause: null });
    expect(of({ PUBLIC_URL: 'http://localhost:3000' })).toEqual({ receivers: ['localhost:9000'], ignoredBecause: null });
    expect(of({ PUBLIC_URL: 'http://127.0.0.1:3000' })).toEqual({ receivers: ['localhost:9000'], ignoredBecause: null });
    expect(of({ NODE_ENV: 'production' })).toEqual({ receivers: [], ignoredBecause: 'NODE_ENV is production' });
    expect(of({ NODE_ENV: 'production', PUBLIC_URL: 'http://localhost:3000' })).toEqual({ receivers: [], ignoredBecause: 'NODE_ENV is production' });
    expect(of({ PUBLIC_URL: 'https://api.example.com' })).toEqual({ receivers: [], ignoredBecause: 'PUBLIC_URL is not on this machine' });
    expect(localReceiversOf(handles({}).config)).toEqual({ receivers: [], ignoredBecause: null });
  });
});

describe('registration of a local receiver', () => {
  const dev = { WEBHOOK_LOCAL_RECEIVERS: 'localhost:9000,[::1]:9001' };

  test('in development: the pairs listed are accepted over http or https, nothing else opens', async () => {
    expect(await check(dev, 'http://localhost:9000/hooks')).toBe('http://localhost:9000/hooks');
    expect(await check(dev, 'http://LOCALHOST:9000/hooks#x')).toBe('http://localhost:9000/hooks');
    expect(await check(dev, 'https://localhost:9000/hooks')).toBe('https://localhost:9000/hooks');
    expect(await check(dev, 'http://[::1]:9001/')).toBe('http://[::1]:9001/');
    expect(await check({ ...dev, NODE_ENV: 'test' }, 'http://localhost:9000/hooks')).toBe('http://localhost:9000/hooks');

    // Another port, another loopback spelling than the one listed, a private or metadata address: refused as before.
    expect(await check(dev, 'http://localhost:9002/hooks')).toBe('400 url: must use https (got http) (WEBHOOK_LOCAL_RECEIVERS allows localhost:9000, [::1]:9001 only)');
    expect(await check(dev, 'https://localhost:9002/hooks')).toStartWith('400 url: refused: localhost names a host inside a private network');
    expect(await check(dev, 'http://127.0.0.1:9000/hooks')).toStartWith('400 url: must use https (got http)');
    expect(await check(dev, 'https://127.0.0.1:9000/hooks')).toStartWith('400 url: refused: 127.0.0.1, a loopback address');
    expect(await check(dev, 'http://10.0.0.8:9000/')).toBe('400 url: must use https (got http)');
    expect(await check(dev, 'https://169.254.169.254/latest/meta-data')).toStartWith('400 url: refused: 169.254.169.254, a link-local (cloud metadata) address');
    // A listed name that resolves anywhere but loopback (an /etc/hosts entry, say) is refused.
    expect(await check(dev, 'http://localhost:9000/hooks', async () => ['127.0.0.1', '192.168.1.20'])).toBe(
      '400 url: refused: localhost resolves to 192.168.1.20, not a loopback address (WEBHOOK_LOCAL_RECEIVERS names receivers on this machine only); webhooks are delivered only to public internet addresses (WEBHOOK_LOCAL_RECEIVERS allows localhost:9000, [::1]:9001 only)',
    );
  });

  test('refused with NODE_ENV=production or a PUBLIC_URL elsewhere, saying why; a development server without the variable says how', async () => {
    expect(await check({ ...dev, NODE_ENV: 'production' }, 'http://localhost:9000/hooks')).toBe('400 url: must use https (got http) (WEBHOOK_LOCAL_RECEIVERS is not applied: NODE_ENV is production)');
    expect(await check({ ...dev, NODE_ENV: 'production' }, 'https://localhost:9000/hooks')).toStartWith('400 url: refused: localhost names a host inside a private network');
    expect(await check({ ...dev, PUBLIC_URL: 'https://api.example.com' }, 'http://localhost:9000/hooks')).toBe('400 url: must use https (got http) (WEBHOOK_LOCAL_RECEIVERS is not applied: PUBLIC_URL is not on this machine)');
    expect(await check({}, 'http://localhost:9000/hooks')).toBe(
      '400 url: must use https (got http) (to try webhooks with a receiver on this machine, list its host:port in WEBHOOK_LOCAL_RECEIVERS: docs/webhooks.md, "Trying webhooks locally")',
    );
    // A production server that does not set it hints at nothing.
    expect(await check({ NODE_ENV: 'production' }, 'http://localhost:9000/hooks')).toBe('400 url: must use https (got http)');
    // Nor does any refusal of a host that is not loopback.
    expect(await check({}, 'https://10.1.2.3/hooks')).toBe('400 url: refused: 10.1.2.3, a private address; webhooks are delivered only to public internet addresses');
  });

  test('at delivery, the same rule: a production configuration passes no local receivers, so the address is refused', async () => {
    const url = new URL('http://localhost:9000/hooks');
    const target = (env: Record<string, string>) =>
      resolveTarget(url, { allowPrivate: false, localReceivers: localReceiversOf(handles({ ...dev, ...env }).config).receivers, lookup: loopback, timeoutMs: 1000 });
    expect(await target({})).toEqual({ ok: true, addresses: ['127.0.0.1', '::1'] });
    expect(await target({ NODE_ENV: 'production' })).toMatchObject({ ok: false, refused: true });
    expect(await target({ PUBLIC_URL: 'https://api.example.com' })).toMatchObject({ ok: false, refused: true });
  });
});

describe('end to end: a receiver on this machine', () => {
  let receiver: WebhookReceiver;
  let dev: TestApp;
  let production: TestApp;

  beforeAll(async () => {
    receiver = startReceiver(); // on 127.0.0.1; the URL names it as localhost, as a developer would
    const env = { WEBHOOK_LOCAL_RECEIVERS: `localhost:${receiver.port}`, WEBHOOK_TIMEOUT_MS: '5000' };
    dev = await createTestApp({ ...env, NODE_ENV: 'development' });
    production = await createTestApp({ ...env, NODE_ENV: 'production' }, { database: dev.database });
  });
  afterAll(async () => {
    receiver?.stop();
    await production?.close();
    await dev?.close();
  });

  const post = (app: TestApp, path: string, headers: Record<string, string>, body?: unknown) =>
    app.request(path, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

  test('development: registered over http, delivered to localhost, verified by the official library; production refuses both', async () => {
    const account = await fundedAccount(dev);
    const url = `http://localhost:${receiver.port}/hooks`;
    const created = await post(dev, '/api/webhooks', account.headers, { url, events: ['order.filled'] });
    const webhook = await created.json();
    expect(`${created.status} ${JSON.stringify(webhook)}`).toStartWith('201 ');
    expect(webhook.url).toBe(url);

    const queued = await post(dev, `/api/webhooks/${webhook.id}/test`, account.headers);
    expect(queued.status).toBe(202);
    while ((await deliverDue(dev.services)).claimed > 0);
    const [request] = await receiver.waitFor(1);
    expect(request!.host).toBe(`localhost:${receiver.port}`);
    expect(request!.path).toBe('/hooks');
    expect(verifyWith(webhook.secret, request!)).toMatchObject({ type: 'webhook.test', data: { webhookId: webhook.id } });
    const deliveries = await (await dev.request(`/api/webhooks/${webhook.id}/deliveries`, { headers: account.headers })).json();
    expect(deliveries.deliveries).toMatchObject([{ status: 'succeeded', attempts: 1, lastStatusCode: 200 }]);

    // The same URL on a production server: refused at registration, and a delivery queued for it is refused unsent.
    const refused = await post(production, '/api/webhooks', account.headers, { url, events: ['order.filled'] });
    expect(refused.status).toBe(400);
    expect((await refused.json()).message).toBe('url: must use https (got http) (WEBHOOK_LOCAL_RECEIVERS is not applied: NODE_ENV is production)');
    const again = await (await post(dev, `/api/webhooks/${webhook.id}/test`, account.headers)).json();
    const before = receiver.received.length;
    while ((await deliverDue(production.services)).claimed > 0);
    const [row] = await production.database.db.select().from(webhookDeliveries).where(and(eq(webhookDeliveries.id, again.id), eq(webhookDeliveries.webhookId, webhook.id)));
    expect(row).toMatchObject({ status: 'failed', lastError: expect.stringMatching(/^refused address: localhost/) });
    expect(receiver.received.length).toBe(before);
  });
});
