/** /openapi.json: a valid OpenAPI 3.1 document that describes every route as it behaves. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ERROR_STATUS } from '../server/errors.ts';
import { DEFAULT_FLOORS } from '../server/valuation/index.ts';
import { createTestApp, json, type TestApp } from './harness/app.ts';
import { fundedAccount, newUserId } from './harness/factories.ts';

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
      const url = new RegExp(`'http://localhost:3000/api${route.template.replace(/\{[^}]+\}/g, '[^/?\']+')}(\\?[^']*)?'`);
      expect(curl.source).toStartWith('curl ');
      expect(curl.source).toMatch(url);
      expect(fetchSample.source).toMatch(url);
      if (route.method !== 'GET') expect(curl.source).toContain(`-X ${route.method}`);
      expect(fetchSample.source).toContain(`method: '${route.method}'`);
      expect(trpc.source).toContain(`client.${route.procedurePath}.${route.type === 'mutation' ? 'mutate' : 'query'}(`);
      if (route.meta.access === 'user') for (const sample of [curl, fetchSample, trpc]) expect(sample.source).toContain('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed');
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
