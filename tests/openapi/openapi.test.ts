/** /openapi.json: a valid OpenAPI 3.1 document that describes every route as it behaves. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ERROR_STATUS } from '../../server/errors.ts';
import { DEFAULT_FLOORS } from '../../server/valuation/index.ts';
import { createTestApp, json, type TestApp } from '../harness/app.ts';
import { fundedAccount, newUserId } from '../harness/factories.ts';

let t: TestApp;
let doc: any;
beforeAll(async () => {
  t = await createTestApp();
  doc = await json(await t.request('/openapi.json'));
});
afterAll(() => t.close());

describe('/openapi.json', () => {
  test('validates against the OpenAPI 3.1 schema', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  test('is generated once: the same object on every request', async () => {
    const again = await t.request('/openapi.json');
    expect(await again.text()).toBe(JSON.stringify(doc));
  });

  test('lists every route of the router, and nothing else', () => {
    const documented = Object.entries(doc.paths).flatMap(([path, ops]: [string, any]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    const routed = t.app.routes.map((r) => `${r.method} ${r.template}`);
    expect(documented.sort()).toEqual(routed.sort());
  });

  test('each operation states its auth, headers, error body and cost header', () => {
    for (const route of t.app.routes) {
      const op = doc.paths[route.template][route.method.toLowerCase()];
      const where = `${route.method} ${route.template}`;
      const schemes = (op.security ?? []).map((s: object) => Object.keys(s)[0]);
      const expected = [...{ public: [], key: ['ApiKey', 'ApiKeyQuery'], user: ['ApiKey', 'ApiKeyQuery'], dashboard: ['DashboardKey'], session: ['Session'] }[route.meta.access!], ...(route.meta.session && route.meta.access !== 'session' ? ['Session'] : [])];
      expect(`${where}: ${schemes}`).toBe(`${where}: ${expected}`);
      const headerParams = op.parameters.filter((p: any) => p.in === 'header').map((p: any) => p.name);
      expect(headerParams).toContain('x-request-id');
      if (route.meta.access === 'user') expect(headerParams).toContain('x-user-id');
      if (route.meta.access === 'dashboard') expect(headerParams).toContain('x-account-id');

      const success = op.responses[String(route.meta.successStatus ?? 200)];
      expect(success.headers['X-Request-Id']).toBeDefined();
      expect(Boolean(success.headers['X-Request-Cost-USD'])).toBe(Boolean(route.meta.billing));
      const errors = Object.entries(op.responses).filter(([status]) => Number(status) >= 400);
      expect(errors.length).toBeGreaterThan(0);
      for (const [, response] of errors as Array<[string, any]>) {
        expect(response.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ApiError' });
      }
      if (route.meta.access !== 'public') expect(op.responses['401']).toBeDefined();
      if (route.meta.billing) expect(op.responses['402']).toBeDefined();
      expect(op.responses['429'].headers['Retry-After']).toBeDefined();
    }
  });

  test('the error schema is exactly our four fields, with every code', () => {
    const schema = doc.components.schemas.ApiError;
    expect(schema.required).toEqual(['code', 'message', 'status', 'requestId']);
    expect(schema.properties.code.enum).toContain('INSUFFICIENT_BALANCE');
    expect(Object.keys(doc.components.schemas).filter((n) => n.startsWith('error.'))).toEqual([]);
  });

  test('every operation has a description of its own', () => {
    for (const route of t.app.routes) {
      const op = doc.paths[route.template][route.method.toLowerCase()];
      const where = `${route.method} ${route.template}`;
      expect(`${where}: ${typeof op.description}`).toBe(`${where}: string`);
      expect(op.description.length).toBeGreaterThan(40);
      expect(op.description).not.toBe(op.summary);
    }
  });

  test('every parameter and body member has its own description and an example', () => {
    const missing: string[] = [];
    for (const route of t.app.routes) {
      const op = doc.paths[route.template][route.method.toLowerCase()];
      const where = `${route.method} ${route.template}`;
      for (const p of op.parameters) {
        const example = p.example ?? (Object.values(p.examples ?? {})[0] as any)?.value;
        if (!p.description) missing.push(`${where} ${p.in} ${p.name}: description`);
        if (example === undefined) missing.push(`${where} ${p.in} ${p.name}: example`);
      }
      const body = op.requestBody?.content['application/json'];
      if (!body) continue;
      for (const [name, member] of Object.entries(body.schema.properties ?? {}) as Array<[string, any]>) {
        if (!member.description) missing.push(`${where} body ${name}: description`);
        if (member.example === undefined) missing.push(`${where} body ${name}: example`);
      }
      // The body's example is what "Try it" sends: every required member is in it.
      for (const name of body.schema.required ?? []) if (body.example?.[name] === undefined) missing.push(`${where} body example: ${name}`);
    }
    expect(missing).toEqual([]);
  });

  test('every documented error status has examples of our error body, with codes of that status', () => {
    for (const route of t.app.routes) {
      const op = doc.paths[route.template][route.method.toLowerCase()];
      for (const [status, response] of Object.entries(op.responses) as Array<[string, any]>) {
        if (Number(status) < 400) continue;
        const examples = Object.values(response.content['application/json'].examples ?? {}) as any[];
        expect(`${route.method} ${route.template} ${status}: ${examples.length > 0}`).toBe(`${route.method} ${route.template} ${status}: true`);
        for (const { value } of examples) {
          expect(Object.keys(value)).toEqual(['code', 'message', 'status', 'requestId']);
          expect((ERROR_STATUS as Record<string, number>)[value.code]).toBe(Number(status));
          expect(value.status).toBe(Number(status));
          expect(value.message.length).toBeGreaterThan(0);
        }
      }
    }
  });

  test('every operation has curl, fetch and typed tRPC samples that call it', () => {
    for (const route of t.app.routes) {
      const op = doc.paths[route.template][route.method.toLowerCase()];
      const [curl, fetchSample, trpc] = op['x-codeSamples'];
      expect([curl.label, fetchSample.label, trpc.label]).toEqual(['curl', 'JavaScript (fetch)', 'tRPC (@pre-ipo/client)']);
      // The route's own URL, its path parameters filled in.
      const url = new RegExp(`'${new URL(t.config.auth.publicUrl).origin}/api${route.template.replace(/\{[^}]+\}/g, '[^/?\']+')}(\\?[^']*)?'`);
      expect(curl.source).toStartWith('curl ');
      expect(curl.source).toMatch(url);
      expect(fetchSample.source).toMatch(url);
      if (route.method !== 'GET') expect(curl.source).toContain(`-X ${route.method}`);
      expect(fetchSample.source).toContain(`method: '${route.method}'`);
      expect(trpc.source).toContain(`client.${route.procedurePath}.${route.type === 'mutation' ? 'mutate' : 'query'}(`);
      if (route.meta.access === 'user') for (const sample of [curl, fetchSample, trpc]) expect(sample.source).toContain('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed');
    }
  });

  test('the samples call the server\'s own origin: PUBLIC_URL, or localhost on its PORT', async () => {
    for (const [env, origin] of [[{ PORT: '3901' }, 'http://localhost:3901'], [{ PUBLIC_URL: 'https://api.example.com' }, 'https://api.example.com']] as const) {
      const other = await createTestApp(env, { database: t.database });
      try {
        const served = await json(await other.request('/openapi.json'));
        const [curl, fetchSample, trpc] = served.paths['/pricing'].get['x-codeSamples'];
        expect(curl.source).toContain(`'${origin}/api/pricing'`);
        expect(fetchSample.source).toContain(`'${origin}/api/pricing'`);
        expect(trpc.source).toContain(`baseUrl: '${origin}'`);
      } finally {
        await other.close();
      }
    }
  });

  test('the buy example buys an open event for a real amount at the default floors, and a quote of it plans that buy', async () => {
    const example = doc.paths['/trading/buy'].post.requestBody.content['application/json'].example;
    expect(example).toMatchObject({ side: 'LONG', floorL: DEFAULT_FLOORS.floorL, floorS: DEFAULT_FLOORS.floorS });
    expect(example.amount).toBeGreaterThanOrEqual(10);
    const { events } = await json(await t.request('/api/trading/events'));
    expect(events.find((e: any) => e.id === example.eventId)?.status).toBe('open');
    // The quote takes the buy's body: the example is accepted and under its own maxAveragePrice.
    const account = await fundedAccount(t);
    const quote = await t.request('/api/trading/quote', {
      method: 'POST',
      headers: { ...account.headers, 'x-user-id': newUserId(), 'content-type': 'application/json' },
      body: JSON.stringify(example),
    });
    expect(quote.status).toBe(200);
    const plan = await json(quote);
    expect(plan.averagePrice).toBeLessThanOrEqual(example.maxAveragePrice);
    expect(plan.totalCost).toBeLessThanOrEqual(example.amount);
  });

  test('documents integer and date parameters as their types', () => {
    const limit = doc.paths['/usage'].get.parameters.find((p: any) => p.name === 'limit');
    expect(limit.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 10000 });
    const from = doc.paths['/usage'].get.parameters.find((p: any) => p.name === 'from');
    expect(from.schema.type).toBe('string');
  });
});

describe('/docs', () => {
  test('serves the page and its assets from this server, with a strict CSP and no inline script', async () => {
    const page = await t.request('/docs');
    expect(page.status).toBe(200);
    const html = await page.text();
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("connect-src 'self';");
    expect(csp).not.toContain('unsafe-eval');
    // Scalar injects its stylesheet and sets style attributes at run time: only styles may be inline.
    expect(csp.match(/unsafe-inline/g)).toEqual(['unsafe-inline']);
    expect(csp).toContain("style-src 'self' 'unsafe-inline'");
    // Every script has a src on this server: nothing inline.
    for (const script of html.match(/<script\b[^>]*>[\s\S]*?<\/script>/g) ?? []) expect(script).toMatch(/^<script src="\/docs\/[a-z]+\.js"><\/script>$/);
    const references = (html.match(/(?:src|href)="[^"]+"/g) ?? []).filter((ref) => !ref.includes('/openapi.json'));
    expect(references.length).toBeGreaterThan(2);
    for (const ref of references) expect(ref).toMatch(/="(\/docs\/|data:)/);
    for (const asset of ['docs.js', 'docs.css', 'scalar.js']) expect((await t.request(`/docs/${asset}`)).status).toBe(200);
    expect((await t.request('/docs/other.js')).status).toBe(404);
  });

  test('the Scalar bundle is served gzipped to browsers that take gzip, and is configured to call nothing else', async () => {
    const plain = await t.request('/docs/scalar.js');
    const body = await plain.text();
    expect(body.length).toBeGreaterThan(1_000_000);
    expect(body).not.toContain('sourceMappingURL');
    const gzipped = await t.request('/docs/scalar.js', { headers: { 'accept-encoding': 'gzip, br' } });
    expect(gzipped.headers.get('content-encoding')).toBe('gzip');
    const bytes = new Uint8Array(await gzipped.arrayBuffer());
    expect(bytes.length).toBeLessThan(body.length / 2);
    expect(new TextDecoder().decode(Bun.gunzipSync(bytes))).toBe(body);

    const init = await (await t.request('/docs/docs.js')).text();
    for (const option of ['withDefaultFonts: false', 'telemetry: false', "proxyUrl: ''", 'agent: { disabled: true', 'mcp: { disabled: true }', 'hideClientButton: true']) {
      expect(init).toContain(option);
    }
    expect(init).not.toMatch(/https?:\/\//);
  });
});

describe('the document says what the service does', () => {
  const operations = () =>
    t.app.routes.map((route) => ({ route, op: doc.paths[route.template][route.method.toLowerCase()], where: `${route.method} ${route.template}` }));
  const headerParam = (op: any, name: string) => op.parameters.find((p: any) => p.in === 'header' && p.name === name);

  test('x-user-id is never declared required (the userId member may name the user); x-account-id only where a session cannot stand in', () => {
    const required = operations().flatMap(({ op, where }) => op.parameters.filter((p: any) => p.in === 'header' && p.required).map((p: any) => `${where} ${p.name}`));
    const expected = operations()
      .filter(({ route }) => route.meta.access === 'dashboard' && !route.meta.session)
      .map(({ where }) => `${where} x-account-id`);
    expect(required.sort()).toEqual(expected.sort());
    for (const { route, op, where } of operations()) {
      if (route.meta.access === 'user') {
        expect(`${where}: ${headerParam(op, 'x-user-id').description}`).toContain('Required unless the input\'s userId member names the user');
        const member = op.requestBody ? op.requestBody.content['application/json'].schema.properties.userId : op.parameters.find((p: any) => p.in === 'query' && p.name === 'userId');
        expect(`${where}: ${Boolean(member)}`).toBe(`${where}: true`);
      }
      if (route.meta.access === 'dashboard' && route.meta.session) expect(headerParam(op, 'x-account-id').description).toContain('with a session cookie it is neither needed nor read');
    }
  });

  test('the service accepts the calls the document now allows: the user as the userId member, without x-user-id', async () => {
    const account = await fundedAccount(t);
    const user = newUserId();
    const listed = await t.request(`/api/trading/positions?userId=${user}`, { headers: account.headers });
    expect(listed.status).toBe(200);
    const example = doc.paths['/trading/quote'].post.requestBody.content['application/json'].example;
    const quoted = await t.request('/api/trading/quote', { method: 'POST', headers: { ...account.headers, 'content-type': 'application/json' }, body: JSON.stringify({ ...example, userId: user }) });
    expect(quoted.status).toBe(200);
  });

  test('403 and 405 on every operation (405 with Allow), 413 and 415 on every method that carries a body, 401 on the sign-in, each with our error body\'s examples', () => {
    for (const { op, where } of operations()) {
      expect(`${where} 405: ${Boolean(op.responses['405']?.headers?.Allow)}`).toBe(`${where} 405: true`);
      expect(`${where} 403: ${(Object.values(op.responses['403']?.content['application/json'].examples ?? {}) as any[]).some((e) => e.value.code === 'FORBIDDEN_ORIGIN')}`).toBe(`${where} 403: true`);
      // A body is checked (size, content type) before the operation is known to need one.
      for (const status of ['413', '415']) expect(`${where} ${status}: ${Boolean(op.responses[status])}`).toBe(`${where} ${status}: ${!where.startsWith('GET ')}`);
      for (const status of ['405', '413', '415']) {
        if (!op.responses[status]) continue;
        const examples = Object.values(op.responses[status].content['application/json'].examples) as any[];
        expect(examples.map((e) => e.value.status)).toEqual([Number(status)]);
      }
    }
    const verify = doc.paths['/auth/verify'].post.responses['401'];
    expect(verify.description).toContain('Sign-in refused');
    expect(Object.values(verify.content['application/json'].examples).length).toBeGreaterThan(1);
  });

  test('RateLimit-* on every 2xx and 4xx but 405 and 413 (refused before any limit), Retry-After on every 429', () => {
    for (const { op, where } of operations()) {
      for (const [status, response] of Object.entries(op.responses) as Array<[string, any]>) {
        if (status.startsWith('5')) continue;
        const limited = status !== '405' && status !== '413';
        expect(`${where} ${status}: ${Boolean(response.headers?.['RateLimit-Limit'] && response.headers['RateLimit-Remaining'] && response.headers['RateLimit-Reset'])}`).toBe(`${where} ${status}: ${limited}`);
      }
      expect(op.responses['429'].headers['Retry-After']).toBeDefined();
    }
  });

  test('the service answers as documented: 405 with Allow, 415 and a refused sign-in\'s 401 carry our body; a 4xx carries RateLimit-* (they are documented there)', async () => {
    const wrongMethod = await t.request('/api/pricing', { method: 'DELETE' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET');
    expect((await json(wrongMethod)).code).toBe('METHOD_NOT_ALLOWED');

    const account = await fundedAccount(t);
    const plain = await t.request('/api/trading/quote', { method: 'POST', headers: { ...account.headers, 'x-user-id': newUserId(), 'content-type': 'text/plain' }, body: '{}' });
    expect(plain.status).toBe(415);
    expect((await json(plain)).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(doc.paths['/trading/quote'].post.responses['415']).toBeDefined();

    const missing = await t.request('/api/trading/positions/pos_8Hn3QwZr5KcV2mTy7LpX9d', { headers: { ...account.headers, 'x-user-id': newUserId() } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('ratelimit-limit')).toMatch(/^\d+$/);
    expect(doc.paths['/trading/positions/{id}'].get.responses['404'].headers['RateLimit-Limit']).toBeDefined();

    const { signInMessage, verify } = await import('../harness/sign-in.ts');
    const { generatePrivateKey, privateKeyToAccount } = await import('viem/accounts');
    const wallet = privateKeyToAccount(generatePrivateKey());
    const message = await signInMessage(t, wallet, { domain: 'evil.example' });
    const refused = await verify(t, message, await wallet.signMessage({ message }));
    expect(refused.status).toBe(401);
    expect((await json(refused)).code).toBe('UNAUTHORIZED');
  });

  test('the patterns the server enforces are stated: identifiers, wallet addresses, instants', async () => {
    const { IDENTIFIER } = await import('../../server/lib/identifiers.ts');
    const { ISO_INSTANT_PATTERN, EVM_ADDRESS_PATTERN } = await import('../../server/platform/http/openapi.ts');
    const { parseIsoInstant } = await import('../../routers/params.ts');
    for (const { route, op, where } of operations()) {
      for (const name of ['x-user-id', 'x-account-id']) {
        const p = headerParam(op, name);
        if (p) expect(`${where} ${name}: ${p.schema.pattern}`).toBe(`${where} ${name}: ${IDENTIFIER.source}`);
      }
      const wallet = op.requestBody?.content['application/json'].schema.properties?.walletAddress;
      if (wallet) expect(`${where}: ${wallet.pattern}`).toBe(`${where}: ${EVM_ADDRESS_PATTERN}`);
      for (const p of op.parameters.filter((p: any) => p.in === 'query' && ['from', 'to', 'startDate', 'endDate', 'updatedSince'].includes(p.name))) {
        expect(`${where} ${p.name}: ${p.schema.pattern}`).toBe(`${where} ${p.name}: ${ISO_INSTANT_PATTERN}`);
      }
      void route;
    }
    expect(doc.paths['/trading/settings'].put.requestBody.content['application/json'].schema.properties.walletAddress.pattern).toBe('^0x[0-9a-fA-F]{40}$');
    // The instant pattern and the parser agree on the form (the calendar and the range are the parser's alone).
    const pattern = new RegExp(ISO_INSTANT_PATTERN);
    for (const text of ['2026-11-22', '2026-11-22T06:00', '2026-11-22T06:00:00Z', '2026-11-22T06:00:00.123456789+05:30', '2026-11-22T06:00-0800', '2026-11-22 06:00', '2026/11/22', '26-11-22', '2026-11-22T06', '2026-11-22T06:00:00', 'x']) {
      const parsed = parseIsoInstant(text);
      const form = !(typeof parsed === 'string' && parsed.startsWith('must be an ISO 8601'));
      expect(`${text}: ${pattern.test(text)}`).toBe(`${text}: ${form}`);
    }
    // And the server refuses what the patterns refuse.
    const account = await fundedAccount(t);
    const badUser = await t.request('/api/trading/positions', { headers: { ...account.headers, 'x-user-id': 'no spaces allowed' } });
    expect(badUser.status).toBe(400);
    expect(pattern.test('2026-11-22 06:00')).toBe(false);
    const badDate = await t.request('/api/usage?from=2026-11-22%2006:00', { headers: account.headers });
    expect(badDate.status).toBe(400);
    const badWallet = await t.request('/api/trading/settings', { method: 'PUT', headers: { ...account.headers, 'x-user-id': newUserId(), 'content-type': 'application/json' }, body: JSON.stringify({ walletAddress: '0x1234' }) });
    expect(badWallet.status).toBe(400);
  });

  test('?apiKey= stays, documented as deprecated and discouraged, with the reason', () => {
    const scheme = doc.components.securitySchemes.ApiKeyQuery;
    expect(scheme).toMatchObject({ type: 'apiKey', in: 'query', name: 'apiKey', 'x-deprecated': true });
    expect(scheme.description).toContain('Deprecated');
    expect(scheme.description).toContain('URLs end up in logs');
    expect(doc.info.description).toContain('deprecated and discouraged');
  });

  test('sessions are described as billed like keys on billed routes, never as unbilled', () => {
    const text = JSON.stringify([doc.info.description, doc.tags, doc.components.securitySchemes.Session]);
    expect(text).toContain('billed to that account exactly like a key');
    expect(text).not.toMatch(/never billed|, unbilled[.;]/);
  });
});

describe('webhooks (OpenAPI 3.1 `webhooks`)', () => {
  test('every event type, with its data schema and the Standard Webhooks headers', async () => {
    const { WEBHOOK_EVENT_TYPES, TEST_EVENT_TYPE } = await import('../../server/webhooks/service.ts');
    expect(Object.keys(doc.webhooks).sort()).toEqual([...WEBHOOK_EVENT_TYPES, TEST_EVENT_TYPE].sort());
    for (const [type, item] of Object.entries(doc.webhooks) as Array<[string, any]>) {
      const headers = item.post.parameters.filter((p: any) => p.in === 'header');
      expect(headers.map((p: any) => [p.name, p.required])).toEqual([['webhook-id', true], ['webhook-timestamp', true], ['webhook-signature', true]]);
      const ref = item.post.requestBody.content['application/json'].schema.$ref;
      const schema = doc.components.schemas[ref.replace('#/components/schemas/', '')];
      expect(schema.properties.type).toMatchObject({ const: type });
      expect(schema.required).toEqual(['id', 'type', 'timestamp', 'data']);
      expect(Object.keys(schema.properties.data.properties).length).toBeGreaterThan(1);
    }
  });

  test('real payloads of a trading round trip, a resolution, a low balance and a test event match their schemas', async () => {
    const { default: Ajv2020 } = await import('ajv/dist/2020');
    const { default: addFormats } = await import('ajv-formats');
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    let rows: Array<{ payload: string }> | undefined;
    addFormats(ajv);
    const { WEBHOOK_EVENT_TYPES, createWebhook, sendTestEvent } = await import('../../server/webhooks/service.ts');
    const { checkBalanceLow } = await import('../../server/webhooks/balance-low.ts');
    const { webhookDeliveries } = await import('../../db/schema.ts');
    const { eq } = await import('drizzle-orm');
    const { DASHBOARD_KEY } = await import('../harness/app.ts');
    const { createTradingApp } = await import('../harness/trading-venue.ts');
    const { trader, buy, sell } = await import('../harness/trading.ts');

    const app = await createTradingApp({ MARKET_DATA_TTL_MS: '0' });
    try {
      const account = await fundedAccount(app, { usd: 1.01 });
      const hook = await createWebhook(app.services, account.accountId, { url: 'https://hooks.example.com/pipo', events: [...WEBHOOK_EVENT_TYPES] }, { lookup: async () => ['93.184.216.34'] });
      const who = await trader(app, { account });
      const { events } = await json(await app.request('/api/trading/events'));
      const [first, second] = events.filter((e: any) => e.status === 'open');
      const bought = await buy(app, who, { eventId: first.id, side: 'LONG', amount: 40 });
      expect(`${bought.res.status} ${JSON.stringify(bought.body)}`).toStartWith('200 ');
      expect((await sell(app, who, { positionId: bought.body.positionId, percentage: 100 })).res.status).toBe(200);
      expect((await buy(app, who, { eventId: second.id, side: 'LONG', amount: 40 })).res.status).toBe(200);
      const resolved = await app.request(`/api/events/${second.id}/resolution`, {
        method: 'POST',
        headers: { 'x-api-key': DASHBOARD_KEY, 'x-account-id': account.accountId, 'content-type': 'application/json' },
        body: JSON.stringify({ winningBandId: second.bands[0].id }),
      });
      expect(resolved.status).toBe(200);
      // Spend the balance under BALANCE_LOW_USD ($1) with billed calls, then run the check.
      for (let i = 0; i < 6; i++) await app.request('/api/billing', { headers: account.headers });
      await checkBalanceLow(app.services);
      await sendTestEvent(app.database.db, account.accountId, hook.id);
      rows = await app.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, hook.id));
    } finally {
      await app.close();
    }
    const seen = new Set<string>();
    for (const row of rows!) {
      const body = JSON.parse(row.payload);
      const validate = ajv.compile(doc.components.schemas[`Webhook_${body.type.replace(/\./g, '_')}`]);
      const ok = validate(body);
      expect(`${body.type}: ${ok ? 'valid' : JSON.stringify(validate.errors)}`).toBe(`${body.type}: valid`);
      seen.add(body.type);
    }
    expect([...seen].sort()).toEqual(['balance.low', 'event.resolved', 'order.filled', 'position.closed', 'position.opened', 'position.settled', 'webhook.test']);
  }, 180_000);
});
