/**
 * kill -9 of a server process in the middle of a webhook delivery: the receiver holds
 * the request, the process dies, nothing is recorded; after a restart on the same database the
 * delivery's lease runs out and it is sent again, with the same webhook-id and body, and recorded
 * succeeded once. On both databases (PGlite: one process per data directory, handed over).
 *
 * The process is the real server (`server/main.ts`) once it starts the webhook worker; until then,
 * a child that builds the server the same way (openServices → createApp → Bun.serve →
 * startWebhookWorker) stands in for it.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { webhookDeliveries } from '../../db/schema.ts';
import { creditAccount, ensureAccount } from '../../server/accounts/accounts.ts';
import { createApiKey } from '../../server/accounts/api-keys.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/lib/logger.ts';
import { MemoryRateLimiter } from '../../server/platform/ratelimit/rate-limiter.ts';
import { createServices } from '../../server/platform/services.ts';
import { createWebhook, sendTestEvent } from '../../server/webhooks/service.ts';
import { handedOverDatabase, type HandedOverDatabase } from '../harness/handed-over-database.ts';
import { freePort, startServer, type RunningServer } from '../harness/server-process.ts';
import { startReceiver, verifyWith, type WebhookReceiver } from '../harness/webhook-receiver.ts';

const root = new URL('../..', import.meta.url).pathname;
const KEY = 'd'.repeat(64);
const TIMEOUT_MS = 1000;
/** The real server runs the worker once server/main.ts starts it. */
const mainRunsWorker = readFileSync(join(root, 'server/main.ts'), 'utf8').includes('startWebhookWorker');

let scratch: string;
let database: HandedOverDatabase;
let receiver: WebhookReceiver;

const env = () => ({
  TRADING_ENCRYPTION_KEY: KEY,
  SEED_ON_START: 'false',
  LOG_LEVEL: 'warn',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_INTERVAL_MS: '50',
  WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
  ...database.env,
});

/** The stand-in for server/main.ts: the same parts, wired the same way. */
const CHILD = `
import { createApp } from '${root}server/app.ts';
import { loadConfig } from '${root}server/config.ts';
import { openServices } from '${root}server/platform/start.ts';
import { startWebhookWorker } from '${root}server/webhooks/worker.ts';
const config = loadConfig(process.env);
const services = await openServices(config, { seed: false });
const app = createApp(services);
Bun.serve({ port: config.port, hostname: '127.0.0.1', fetch: (request, srv) => app.handle(request, { clientIp: () => srv.requestIP(request)?.address }) });
startWebhookWorker(services);
`;

async function startProcess(): Promise<RunningServer | { url: string; process: ReturnType<typeof Bun.spawn>; stop(): Promise<number> }> {
  if (mainRunsWorker) return startServer(env());
  const port = freePort();
  const child = Bun.spawn([process.execPath, join(scratch, 'server-with-worker.ts')], {
    cwd: root,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', ...env(), PORT: String(port) },
    stdout: 'ignore',
    stderr: 'pipe',
  });
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 30_000; ; ) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start: ${await new Response(child.stderr).text()}`);
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch {}
    await Bun.sleep(50);
  }
  return { url, process: child, stop: async () => (child.kill('SIGTERM'), child.exited) };
}

let apiKey: string;
let hook: { id: string; secret: string };
let deliveryId: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'pipo-webhooks-crash-'));
  writeFileSync(join(scratch, 'server-with-worker.ts'), CHILD);
  receiver = startReceiver();
  database = await handedOverDatabase(scratch);
  await database.use(async (db) => {
    const services = createServices({ config: loadConfig(env()), database: db, rateLimiter: new MemoryRateLimiter(), logger: createLogger('silent') });
    await ensureAccount(db.db, 'webhook-crash');
    await creditAccount(db.db, { accountId: 'webhook-crash', amountMicros: 10_000_000, reference: 'crash' });
    apiKey = (await createApiKey(db.db, { accountId: 'webhook-crash', name: 'reader' })).key;
    hook = await createWebhook(services, 'webhook-crash', { url: `${receiver.url}/crash`, events: ['order.filled'] });
    deliveryId = (await sendTestEvent(db.db, 'webhook-crash', hook.id)).id;
  });
}, 60_000);
afterAll(async () => {
  receiver?.stop();
  await database?.close();
  rmSync(scratch, { recursive: true, force: true });
});

test(`kill -9 mid-delivery (${mainRunsWorker ? 'server/main.ts' : 'a server process with the worker'}): after a restart it is delivered with the same webhook-id, recorded once`, async () => {
  receiver.answer = () => 'hang';
  const first = await startProcess();
  let second: Awaited<ReturnType<typeof startProcess>> | undefined;
  try {
    await receiver.waitFor(1, 30_000);
    first.process.kill('SIGKILL');
    await first.process.exited;
    receiver.release(200); // the connection died with the process: nobody reads this answer

    // Nothing was recorded: the delivery is pending, still leased to the dead process, never attempted.
    const [row] = await database.use((db) => db.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId)));
    expect([row!.status, row!.attempts, row!.leaseOwner !== null]).toEqual(['pending', 0, true]);

    receiver.answer = () => 200;
    second = await startProcess();
    await receiver.waitFor(2, 30_000); // once the dead process's lease ran out
    let page: any;
    for (const deadline = Date.now() + 30_000; ; ) {
      page = await (await fetch(`${second.url}/api/webhooks/${hook.id}/deliveries`, { headers: { 'x-api-key': apiKey } })).json();
      if (page.deliveries?.[0]?.status !== 'pending' || Date.now() > deadline) break;
      await Bun.sleep(50);
    }
    expect(page.deliveries).toEqual([expect.objectContaining({ id: deliveryId, status: 'succeeded', attempts: 1, lastStatusCode: 200 })]);
    const sent = receiver.withId(deliveryId);
    expect(sent).toHaveLength(2);
    expect(sent[1]!.body).toBe(sent[0]!.body);
    for (const request of sent) verifyWith(hook.secret, request);
  } finally {
    if (first.process.exitCode === null) first.process.kill('SIGKILL');
    await second?.stop();
  }
}, 120_000);
