/** /openapi.json: a valid OpenAPI 3.1 document that describes every route as it behaves. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createTestApp, json, type TestApp } from './harness/app.ts';

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

  test('documents integer and date parameters as their types', () => {
    const limit = doc.paths['/usage'].get.parameters.find((p: any) => p.name === 'limit');
    expect(limit.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 10000 });
    const from = doc.paths['/usage'].get.parameters.find((p: any) => p.name === 'from');
    expect(from.schema.type).toBe('string');
  });
});

describe('/docs', () => {
  test('serves the page and its assets from this server, with a self-only CSP', async () => {
    const page = await t.request('/docs');
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    const references = html.match(/(?:src|href)="[^"]+"/g) ?? [];
    expect(references.length).toBeGreaterThan(1);
    for (const ref of references) expect(ref).toMatch(/="(\/docs\/|data:)/);
    expect((await t.request('/docs/docs.js')).status).toBe(200);
    expect((await t.request('/docs/docs.css')).status).toBe(200);
    expect((await t.request('/docs/other.js')).status).toBe(404);
  });
});
