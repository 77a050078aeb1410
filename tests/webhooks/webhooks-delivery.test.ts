/**
 * The webhook delivery worker against a local receiver: failures (5xx, a hung
 * receiver, connection refused, a redirect) are retried with the same webhook-id and counted, with
 * the backoff respected (time driven through `now`, never slept); the retry window ends in `failed`;
 * workers racing over the same deliveries send each once; a lease held is not taken, an expired one
 * is; SSRF is checked again at delivery, after DNS, and a refused address gets no connection at all;
 * startWebhookWorker delivers by itself, and a stop mid-attempt keeps the lease for
 * WEBHOOK_TIMEOUT_MS (the receiver may still be working) before the same webhook-id is sent again;
 * one hanging endpoint holds at most MAX_IN_FLIGHT_PER_WEBHOOK slots while the others keep
 * delivering, and a webhook that keeps failing is left aside for a while.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq, inArray } from 'drizzle-orm';
import { openDatabase } from '../../db/client.ts';
import { webhookDeliveries } from '../../db/schema.ts';
import { createApiKey } from '../../server/accounts/api-keys.ts';
import { createWebhook, deleteWebhook, sendTestEvent } from '../../server/webhooks/service.ts';
import { deliverDue, LEASE_MARGIN_MS, MAX_IN_FLIGHT_PER_WEBHOOK, PAUSE_AFTER_FAILURES, retryDelayMs, startWebhookWorker } from '../../server/webhooks/worker.ts';
import { createTestApp, type TestApp } from '../harness/app.ts';
import { fundedAccount } from '../harness/factories.ts';
import { freePort } from '../harness/server-process.ts';
import { connectionCounter, startReceiver, verifyWith, type WebhookReceiver } from '../harness/webhook-receiver.ts';

const TIMEOUT_MS = 500;
const ENV = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) };
const SECOND = 1_000;
const HOUR = 3_600_000;

let t: TestApp;
let receiver: WebhookReceiver;

beforeAll(async () => {
  t = await createTestApp(ENV);
  receiver = startReceiver();
});
afterAll(async () => {
  receiver?.stop();
  await t?.close();
});

async function hookTo(app: TestApp, url: string) {
  const { accountId } = await fundedAccount(app);
  const hook = await createWebhook(app.services, accountId, { url, events: ['order.filled'] });
  return { ...hook, accountId };
}
const queue = (app: TestApp, hook: { id: string; accountId: string }) => sendTestEvent(app.database.db, hook.accountId, hook.id);
type Delivery = Awaited<ReturnType<typeof queue>>;
async function state(app: TestApp, id: string) {
  const [row] = await app.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
  return row!;
}
const at = (ms: number) => new Date(ms);
/** Polls until `done` holds (a deadline, not a guess at the machine's speed). */
async function until(done: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000) {
  for (const deadline = Date.now() + timeoutMs; !(await done()); await Bun.sleep(10)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

describe('retries', () => {
  test('the backoff: 5 s, 10 s, 20 s … (±20%), never more than an hour', () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, () => 0.5))).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect(retryDelayMs(1, () => 0)).toBe(4_000);
    expect(retryDelayMs(1, () => 0.999999)).toBeLessThanOrEqual(6_000);
    expect(retryDelayMs(12, () => 0.5)).toBe(HOUR);
    expect(retryDelayMs(40, () => 1)).toBe(HOUR);
  });

  test('500s, then recovery: delivered with the same webhook-id, each attempt counted, the backoff respected', async () => {
    const hook = await hookTo(t, `${receiver.url}/flaky`);
    const delivery = await queue(t, hook);
    receiver.answer = () => 500;
    const t0 = Date.now() + SECOND;
    const pass = (ms: number) => deliverDue(t.services, { now: at(ms), random: () => 0.5 });

    expect(await pass(t0)).toEqual({ claimed: 1, succeeded: 0, retrying: 1, failed: 0 });
    let row = await state(t, delivery.id);
    expect([row.status, row.attempts, row.lastStatusCode, row.lastError, row.nextAttemptAt.getTime()]).toEqual(['pending', 1, 500, 'HTTP 500', t0 + 5_000]);

    expect((await pass(t0 + 4_999)).claimed).toBe(0); // not before its time
    expect(await pass(t0 + 5_000)).toEqual({ claimed: 1, succeeded: 0, retrying: 1, failed: 0 });
    row = await state(t, delivery.id);
    expect([row.attempts, row.nextAttemptAt.getTime()]).toEqual([2, t0 + 5_000 + 10_000]);

    receiver.answer = () => 204;
    expect((await pass(t0 + 14_999)).claimed).toBe(0);
    expect(await pass(t0 + 15_000)).toEqual({ claimed: 1, succeeded: 1, retrying: 0, failed: 0 });
    row = await state(t, delivery.id);
    expect([row.status, row.attempts, row.lastStatusCode, row.lastError, row.completedAt?.getTime()]).toEqual(['succeeded', 3, 204, null, t0 + 15_000]);
    expect((await pass(t0 + HOUR)).claimed).toBe(0);

    const sent = receiver.withId(delivery.id);
    expect(sent).toHaveLength(3);
    expect(new Set(sent.map((r) => r.body)).size).toBe(1); // the body fixed when the event happened
    for (const request of sent) verifyWith(hook.secret, request);

    const page = await (await t.request(`/api/webhooks/${hook.id}/deliveries`, { headers: (await accountHeaders(hook.accountId)) })).json();
    expect(page.deliveries[0]).toMatchObject({ id: delivery.id, status: 'succeeded', attempts: 3, lastStatusCode: 204 });
  });

  test('a hung receiver times out at WEBHOOK_TIMEOUT_MS; a refused connection; a redirect is not followed; then delivered', async () => {
    const redirectTarget = connectionCounter();
    try {
      const hook = await hookTo(t, `${receiver.url}/slow`);
      const delivery = await queue(t, hook);
      const t0 = Date.now() + SECOND;
      receiver.answer = () => 'hang';
      const started = performance.now();
      expect((await deliverDue(t.services, { now: at(t0) })).retrying).toBe(1);
      expect(performance.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      receiver.release();
      let row = await state(t, delivery.id);
      expect([row.attempts, row.lastStatusCode, row.lastError]).toEqual([1, null, `timeout: no answer within ${TIMEOUT_MS} ms`]);

      receiver.answer = () => new Response(null, { status: 302, headers: { location: `http://127.0.0.1:${redirectTarget.port}/elsewhere` } });
      expect((await deliverDue(t.services, { now: at(t0 + HOUR) })).retrying).toBe(1);
      row = await state(t, delivery.id);
      expect([row.attempts, row.lastStatusCode, row.lastError]).toEqual([2, 302, 'HTTP 302 (redirects are not followed)']);
      expect(redirectTarget.connections()).toBe(0);

      receiver.answer = () => 200;
      expect((await deliverDue(t.services, { now: at(t0 + 2 * HOUR) })).succeeded).toBe(1);
      expect(receiver.withId(delivery.id)).toHaveLength(3);
      for (const request of receiver.withId(delivery.id)) verifyWith(hook.secret, request);
    } finally {
      redirectTarget.stop();
    }

    // Nobody listening: connection refused, until a receiver comes up on that port.
    const port = freePort();
    const hook = await hookTo(t, `http://127.0.0.1:${port}/later`);
    const delivery = await queue(t, hook);
    const t0 = Date.now() + SECOND;
    expect((await deliverDue(t.services, { now: at(t0) })).retrying).toBe(1);
    expect((await state(t, delivery.id)).lastError).toBe('connection refused');
    const received: (string | null)[] = [];
    const late = Bun.serve({ hostname: '127.0.0.1', port, fetch: (r) => (received.push(r.headers.get('webhook-id')), new Response('ok')) });
    try {
      expect((await deliverDue(t.services, { now: at(t0 + HOUR) })).succeeded).toBe(1);
      expect(received).toEqual([delivery.id]);
      expect((await state(t, delivery.id)).attempts).toBe(2);
    } finally {
      late.stop(true);
    }
  });

  test('after WEBHOOK_RETRY_HOURS the last attempt marks it failed; nothing is tried after', async () => {
    const hook = await hookTo(t, `${receiver.url}/down`);
    const delivery = await queue(t, hook);
    receiver.answer = () => 503;
    const created = delivery.createdAt.getTime();
    const deadline = created + t.config.webhooks.retryHours * HOUR;
    // Late in the window: the next try is due at its end, not an hour later.
    expect((await deliverDue(t.services, { now: at(deadline - 2 * SECOND) })).retrying).toBe(1);
    expect((await state(t, delivery.id)).nextAttemptAt.getTime()).toBe(deadline);
    // (+1 ms: the database keeps microseconds, which a JavaScript Date of the deadline drops.)
    expect(await deliverDue(t.services, { now: at(deadline + 1) })).toEqual({ claimed: 1, succeeded: 0, retrying: 0, failed: 1 });
    const row = await state(t, delivery.id);
    expect([row.status, row.attempts, row.lastStatusCode, row.lastError, row.completedAt?.getTime()]).toEqual(['failed', 2, 503, 'HTTP 503', deadline + 1]);
    expect((await deliverDue(t.services, { now: at(deadline + 48 * HOUR) })).claimed).toBe(0);
    receiver.answer = () => 200;
  });
});

/** A second key of the account, to read its deliveries over HTTP. */
async function accountHeaders(accountId: string) {
  return { 'x-api-key': (await createApiKey(t.database.db, { accountId, name: 'reader' })).key };
}

describe('several workers', () => {
  test('workers racing over the same deliveries send each exactly once', async () => {
    const app = await createTestApp(ENV);
    // On PostgreSQL the second worker has its own connection pool, as another instance would.
    const other = app.database.url ? await openDatabase({ kind: 'postgres', url: app.database.url, poolSize: 4 }) : app.database;
    const second = await createTestApp(ENV, { database: other });
    try {
      const hooks = await Promise.all([1, 2, 3].map(() => hookTo(app, `${receiver.url}/race`)));
      const deliveries = [];
      for (let i = 0; i < 30; i++) deliveries.push(await queue(app, hooks[i % 3]!));
      receiver.answer = async () => (await Bun.sleep(5), 200);
      const passes = await Promise.all([
        deliverDue(app.services, { owner: 'worker-a', concurrency: 4 }),
        deliverDue(second.services, { owner: 'worker-b', concurrency: 4 }),
        deliverDue(app.services, { owner: 'worker-c', concurrency: 3 }),
        deliverDue(second.services, { owner: 'worker-d', concurrency: 5 }),
      ]);
      expect(passes.reduce((s, p) => s + p.succeeded, 0)).toBe(30);
      expect(passes.reduce((s, p) => s + p.claimed, 0)).toBe(30);
      for (const d of deliveries) expect(`${d.id} × ${receiver.withId(d.id).length}`).toBe(`${d.id} × 1`);
      const rows = await app.database.db.select().from(webhookDeliveries).where(inArray(webhookDeliveries.id, deliveries.map((d) => d.id)));
      expect(rows.map((r) => `${r.status}/${r.attempts}`)).toEqual(Array(30).fill('succeeded/1'));
    } finally {
      receiver.answer = () => 200;
      await second.close();
      if (other !== app.database) await other.close();
      await app.close();
    }
  });

  test('a held lease is not taken; an expired one is (the holder died): sent again with the same webhook-id, recorded once', async () => {
    // A long attempt deadline, so the holder is still waiting whatever the machine's speed.
    const slow = await createTestApp({ ...ENV, WEBHOOK_TIMEOUT_MS: '30000' }, { database: t.database });
    try {
      const hook = await hookTo(slow, `${receiver.url}/lease`);
      const delivery = await queue(slow, hook);
      const t0 = Date.now() + SECOND;
      receiver.answer = () => (receiver.withId(delivery.id).length === 1 ? 'hang' : 200);
      const holder = deliverDue(slow.services, { owner: 'holder', now: at(t0) });
      await until(() => receiver.withId(delivery.id).length > 0, 'the first attempt');
      expect((await state(slow, delivery.id)).leaseOwner).toBe('holder');
      expect((await deliverDue(slow.services, { owner: 'rival', now: at(t0) })).claimed).toBe(0);
      const expired = t0 + 30_000 + LEASE_MARGIN_MS;
      expect((await deliverDue(slow.services, { owner: 'rival', now: at(expired - 1) })).claimed).toBe(0);
      expect(await deliverDue(slow.services, { owner: 'rival', now: at(expired) })).toEqual({ claimed: 1, succeeded: 1, retrying: 0, failed: 0 });
      receiver.release();
      // The first holder's late answer finds the lease gone: nothing recorded twice.
      expect(await holder).toEqual({ claimed: 1, succeeded: 0, retrying: 0, failed: 0 });
      const row = await state(slow, delivery.id);
      expect([row.status, row.attempts]).toEqual(['succeeded', 1]);
      const sent = receiver.withId(delivery.id);
      expect(sent.map((r) => r.id)).toEqual([delivery.id, delivery.id]);
      for (const request of sent) verifyWith(hook.secret, request);
    } finally {
      receiver.answer = () => 200;
      await slow.close();
    }
  });

  test('startWebhookWorker delivers on its own; stop() mid-attempt keeps the lease for WEBHOOK_TIMEOUT_MS, then it is sent again with the same webhook-id', async () => {
    const app = await createTestApp({ ...ENV, WEBHOOK_INTERVAL_MS: '20' }, { database: t.database });
    const hook = await hookTo(app, `${receiver.url}/worker`);
    const worker = startWebhookWorker(app.services);
    try {
      const first = await queue(app, hook);
      await until(async () => (await state(app, first.id)).status === 'succeeded', 'the worker to deliver');
      receiver.answer = () => 'hang';
      const second = await queue(app, hook);
      await until(() => receiver.withId(second.id).length > 0, 'the attempt to start');
      const stoppedAt = Date.now();
      await worker.stop();
      // The request reached the receiver, which may still be working on it: nobody may send it again
      // until WEBHOOK_TIMEOUT_MS from the stop — not another instance, not this one restarted.
      const row = await state(app, second.id);
      expect([row.status, row.attempts, row.leaseOwner !== null]).toEqual(['pending', 0, true]);
      const leaseUntil = row.leaseUntil!.getTime();
      expect(leaseUntil).toBeGreaterThanOrEqual(stoppedAt + TIMEOUT_MS - 1);
      receiver.release();
      receiver.answer = () => 200;
      expect((await deliverDue(app.services, { owner: 'restarted', now: at(leaseUntil - 1) })).claimed).toBe(0);
      expect(receiver.withId(second.id)).toHaveLength(1);
      // Once the lease ends: sent again, the same webhook-id and body, recorded once.
      expect(await deliverDue(app.services, { owner: 'restarted', now: at(leaseUntil + 1) })).toEqual({ claimed: 1, succeeded: 1, retrying: 0, failed: 0 });
      const after = await state(app, second.id);
      expect([after.status, after.attempts, after.leaseOwner]).toEqual(['succeeded', 1, null]);
      const sent = receiver.withId(second.id);
      expect(sent.map((r) => r.id)).toEqual([second.id, second.id]);
      expect(sent[1]!.body).toBe(sent[0]!.body);
      for (const request of sent) verifyWith(hook.secret, request);
    } finally {
      await worker.stop();
      receiver.release();
      receiver.answer = () => 200;
      await app.close();
    }
    // WEBHOOK_INTERVAL_MS=0: no worker.
    const off = await createTestApp({ ...ENV, WEBHOOK_INTERVAL_MS: '0' }, { database: t.database });
    await startWebhookWorker(off.services).stop();
    await off.close();
  });
});

describe('stopping before anything was sent', () => {
  test('stop() while the name is being resolved: nothing was sent, so the lease is released, not kept', async () => {
    const app = await createTestApp({ ...ENV, WEBHOOK_INTERVAL_MS: '20' }, { database: t.database });
    let lookups = 0;
    // DNS that answers only at its deadline (WEBHOOK_TIMEOUT_MS): the stop comes first.
    const lookup = () => (lookups++, new Promise<string[]>(() => {}));
    const { accountId } = await fundedAccount(app);
    const hook = await createWebhook(app.services, accountId, { url: `http://slow-dns.pre-ipo.test:${receiver.port}/dns`, events: ['order.filled'] }, { lookup: async () => ['127.0.0.1'] });
    const worker = startWebhookWorker(app.services, { lookup });
    try {
      const delivery = await sendTestEvent(app.database.db, accountId, hook.id);
      await until(() => lookups > 0, 'the lookup to start');
      await worker.stop();
      const row = await state(app, delivery.id);
      expect([row.status, row.attempts, row.leaseOwner, row.leaseUntil]).toEqual(['pending', 0, null, null]);
      expect(receiver.withId(delivery.id)).toEqual([]);
      await deleteWebhook(app.database.db, accountId, hook.id);
    } finally {
      await worker.stop();
      await app.close();
    }
  });
});

describe('SSRF at delivery', () => {
  test('a name that resolves to a private address when it is delivered is refused, and nothing connects to it', async () => {
    const strict = await createTestApp({ WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) });
    const counter = connectionCounter();
    try {
      const { accountId } = await fundedAccount(strict);
      // Registered while the name pointed to a public address (DNS rebinding: it changes afterwards).
      const url = `https://rebind.pre-ipo.test:${counter.port}/hook`;
      const hook = await createWebhook(strict.services, accountId, { url, events: ['order.filled'] }, { lookup: async () => ['93.184.216.34'] });
      for (const addresses of [['127.0.0.1'], ['93.184.216.34', '127.0.0.1'], ['::ffff:127.0.0.1'], ['169.254.169.254'], ['10.0.0.7']]) {
        const delivery = await sendTestEvent(strict.database.db, accountId, hook.id);
        expect(await deliverDue(strict.services, { lookup: async () => addresses })).toEqual({ claimed: 1, succeeded: 0, retrying: 0, failed: 1 });
        const row = await state(strict, delivery.id);
        expect([row.status, row.attempts, row.lastStatusCode]).toEqual(['failed', 1, null]);
        expect(row.lastError).toStartWith('refused address: rebind.pre-ipo.test resolves to');
      }
      expect(counter.connections()).toBe(0);

      // A literal address is checked again too (a webhook registered while private networks were allowed).
      const permissive = await createTestApp(ENV, { database: strict.database });
      const literal = await createWebhook(permissive.services, accountId, { url: `http://127.0.0.1:${counter.port}/x`, events: ['order.filled'] });
      await permissive.close();
      const delivery = await sendTestEvent(strict.database.db, accountId, literal.id);
      expect((await deliverDue(strict.services)).failed).toBe(1);
      expect((await state(strict, delivery.id)).lastError).toBe('refused address: 127.0.0.1, a loopback address');
      expect(counter.connections()).toBe(0);
    } finally {
      counter.stop();
      await strict.close();
    }
  });
});

describe('one slow endpoint does not hold up the others', () => {
  // Attempts hang until the test releases them (the longest deadline allowed, far beyond the test's),
  // on a database of their own: nothing here depends on the machine's speed, and no other test sees
  // these deliveries.
  const HANG_ENV = { ...ENV, WEBHOOK_TIMEOUT_MS: '120000' };
  const hangs = (path: string) => (request: { path: string }) => (request.path === path ? ('hang' as const) : 200);

  test(`a receiver that hangs for one webhook takes at most ${MAX_IN_FLIGHT_PER_WEBHOOK} slots; another webhook's deliveries go through meanwhile`, async () => {
    const app = await createTestApp(HANG_ENV);
    try {
      const stuck = await hookTo(app, `${receiver.url}/stuck`);
      const healthy = await hookTo(app, `${receiver.url}/healthy`);
      // The hanging webhook's deliveries are older: they come first in the queue.
      const stuckDeliveries: Delivery[] = [];
      for (let i = 0; i < 6; i++) stuckDeliveries.push(await queue(app, stuck));
      const healthyDeliveries: Delivery[] = [];
      for (let i = 0; i < 3; i++) healthyDeliveries.push(await queue(app, healthy));
      receiver.answer = hangs('/stuck');
      const pass = deliverDue(app.services, { concurrency: 4 });
      await until(async () => {
        const rows = await app.database.db.select().from(webhookDeliveries).where(inArray(webhookDeliveries.id, healthyDeliveries.map((d) => d.id)));
        return rows.every((r) => r.status === 'succeeded');
      }, "the healthy webhook's deliveries, while the other receiver hangs");
      const stuckIds = new Set(stuckDeliveries.map((d) => d.id));
      expect(receiver.received.filter((r) => stuckIds.has(r.id))).toHaveLength(MAX_IN_FLIGHT_PER_WEBHOOK);
      receiver.answer = () => 200;
      receiver.release();
      expect(await pass).toEqual({ claimed: 9, succeeded: 9, retrying: 0, failed: 0 });
      for (const d of [...stuckDeliveries, ...healthyDeliveries]) expect(receiver.withId(d.id)).toHaveLength(1);
    } finally {
      receiver.answer = () => 200;
      receiver.release();
      await app.close();
    }
  });

  test('the running worker keeps delivering new events of other webhooks while one receiver hangs', async () => {
    const app = await createTestApp({ ...HANG_ENV, WEBHOOK_INTERVAL_MS: '20' });
    const worker = startWebhookWorker(app.services);
    try {
      const stuck = await hookTo(app, `${receiver.url}/stuck-worker`);
      const healthy = await hookTo(app, `${receiver.url}/healthy-worker`);
      receiver.answer = hangs('/stuck-worker');
      const stuckDeliveries = [await queue(app, stuck), await queue(app, stuck), await queue(app, stuck)];
      await until(() => receiver.received.filter((r) => r.path === '/stuck-worker').length === MAX_IN_FLIGHT_PER_WEBHOOK, 'the hanging attempts');
      // Queued after the hang began: sent at once, not after the hanging attempts' deadline.
      for (let i = 0; i < 3; i++) {
        const next = await queue(app, healthy);
        await until(async () => (await state(app, next.id)).status === 'succeeded', `healthy delivery ${i + 1}`);
      }
      expect(receiver.received.filter((r) => r.path === '/stuck-worker')).toHaveLength(MAX_IN_FLIGHT_PER_WEBHOOK);
      // One of the three waits its turn, unclaimed (which one: deliveries due at the same instant are taken in id order).
      const owners = await Promise.all(stuckDeliveries.map(async (d) => (await state(app, d.id)).leaseOwner));
      expect(owners.filter((owner) => owner === null)).toHaveLength(stuckDeliveries.length - MAX_IN_FLIGHT_PER_WEBHOOK);
    } finally {
      await worker.stop();
      receiver.answer = () => 200;
      receiver.release();
      await app.close();
    }
  });

  test('a pass has at most `concurrency` attempts in flight, however many are due', async () => {
    const app = await createTestApp(HANG_ENV);
    try {
      const hooks: Awaited<ReturnType<typeof hookTo>>[] = [];
      for (let i = 0; i < 5; i++) hooks.push(await hookTo(app, `${receiver.url}/slots`));
      for (const hook of hooks) await queue(app, hook);
      receiver.answer = hangs('/slots');
      const pass = deliverDue(app.services, { concurrency: 3 });
      await until(() => receiver.received.filter((r) => r.path === '/slots').length >= 3, 'three attempts');
      // No fourth request while the three hang: every claim took only the free slots.
      const leased = await app.database.db.select().from(webhookDeliveries).where(inArray(webhookDeliveries.webhookId, hooks.map((h) => h.id)));
      expect(leased.filter((r) => r.leaseOwner !== null)).toHaveLength(3);
      expect(receiver.received.filter((r) => r.path === '/slots')).toHaveLength(3);
      receiver.answer = () => 200;
      receiver.release();
      expect(await pass).toEqual({ claimed: 5, succeeded: 5, retrying: 0, failed: 0 });
    } finally {
      receiver.answer = () => 200;
      receiver.release();
      await app.close();
    }
  });

  test(`the cap holds over several instances: ${MAX_IN_FLIGHT_PER_WEBHOOK} leases of a webhook running elsewhere leave none to take here`, async () => {
    const app = await createTestApp(HANG_ENV);
    try {
      const stuck = await hookTo(app, `${receiver.url}/stuck-shared`);
      for (let i = 0; i < 4; i++) await queue(app, stuck);
      receiver.answer = hangs('/stuck-shared');
      const elsewhere = deliverDue(app.services, { owner: 'instance-a' });
      await until(() => receiver.received.filter((r) => r.path === '/stuck-shared').length === MAX_IN_FLIGHT_PER_WEBHOOK, 'the first instance to hang');
      expect((await deliverDue(app.services, { owner: 'instance-b' })).claimed).toBe(0);
      receiver.answer = () => 200;
      receiver.release();
      expect(await elsewhere).toEqual({ claimed: 4, succeeded: 4, retrying: 0, failed: 0 });
    } finally {
      receiver.answer = () => 200;
      receiver.release();
      await app.close();
    }
  });

  test(`a webhook failing ${PAUSE_AFTER_FAILURES} times in a row is left aside for a while; its deliveries wait, not failed or counted`, async () => {
    const app = await createTestApp(ENV);
    try {
      const down = await hookTo(app, `${receiver.url}/down-pause`);
      const up = await hookTo(app, `${receiver.url}/up-pause`);
      const downDeliveries: Delivery[] = [];
      for (let i = 0; i < 6; i++) downDeliveries.push(await queue(app, down));
      const upDelivery = await queue(app, up);
      receiver.answer = (request) => (request.path === '/down-pause' ? 503 : 200);
      const frozen = () => 1_000_000; // the pause's clock: it never ends during this pass
      const pass = await deliverDue(app.services, { concurrency: 1, clock: frozen });
      expect(pass).toEqual({ claimed: PAUSE_AFTER_FAILURES + 1, succeeded: 1, retrying: PAUSE_AFTER_FAILURES, failed: 0 });
      const rows = await app.database.db.select().from(webhookDeliveries).where(inArray(webhookDeliveries.id, downDeliveries.map((d) => d.id)));
      expect(rows.map((r) => r.attempts).sort()).toEqual([0, 0, 0, 1, 1, 1]);
      expect((await state(app, upDelivery.id)).status).toBe('succeeded');
      // The pause is the pool's memory (the worker keeps one pool): a new pass sends the rest.
      receiver.answer = () => 200;
      expect((await deliverDue(app.services, { concurrency: 1 })).succeeded).toBe(3);
    } finally {
      receiver.answer = () => 200;
      await app.close();
    }
  });
});
