/**
 * A client generated from the served /openapi.json by openapi-typescript (the generator
 * @pre-ipo/client/rest's committed types come from: client/scripts/generate-rest.ts) compiles a
 * program that calls EVERY operation with openapi-fetch the ways the README and docs document them:
 *  - the README's REST form: the headers as parameters (`params: { header: { 'x-user-id': …,
 *    'Idempotency-Key': … } }`), a dashboard key's `x-account-id`;
 *  - a trading route's user as the input's `userId` member instead of the header (the README: "every
 *    trading route takes the user as the `userId` input member as well as the `x-user-id` header");
 *  - a session's call of a dashboard route without x-account-id (the session acts for its own account).
 * Values are the document's own examples. Lines marked @ts-expect-error must still be errors (a
 * dashboard key's route without x-account-id, an unknown path), so the check can fail.
 * TypeScript 5 (client/node_modules: the repository's TypeScript 7 has no compiler API) type-checks it.
 */
import { expect, test } from 'bun:test';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { restClientSource } from '../../client/scripts/generate-rest.ts';
import type { Route } from '../../server/platform/http/route-table.ts';
import { servedDocument } from '../harness/served-document.ts';

const ROOT = join(import.meta.dir, '../..');
const TSC = join(ROOT, 'client/node_modules/typescript/bin/tsc');

const served = servedDocument('pipo-openapi-ts-');

const exampleOf = (p: any) => p.example ?? (Object.values(p.examples ?? {})[0] as any)?.value;
const literal = (value: unknown) => JSON.stringify(value);

interface CallShape {
  /** Send the trading user as the input's userId member instead of x-user-id. */
  userAsMember?: boolean;
  /** A session's call: no x-account-id. */
  session?: boolean;
}

/** One openapi-fetch call of a route, from the document's examples. */
function call(route: Route, shape: CallShape = {}): string {
  const op = served.doc.paths[route.template][route.method.toLowerCase()];
  const parameters: any[] = op.parameters ?? [];
  const path: Record<string, unknown> = {};
  const query: Record<string, unknown> = {};
  const header: Record<string, unknown> = {};
  for (const p of parameters) {
    if (p.in === 'path') path[p.name] = exampleOf(p);
    if (p.in === 'query' && p.required) query[p.name] = exampleOf(p);
  }
  const access = route.meta.access;
  if (access === 'user' && !shape.userAsMember) header['x-user-id'] = 'alice';
  if (access === 'dashboard' && !shape.session) header['x-account-id'] = 'acme';
  if (route.meta.idempotent) header['Idempotency-Key'] = 'a-unique-key-per-request';
  let body = op.requestBody?.content['application/json']?.example;
  if (access === 'user' && shape.userAsMember) {
    if (op.requestBody) body = { ...(body ?? {}), userId: 'alice' };
    else query.userId = 'alice';
  }
  const params: string[] = [];
  if (Object.keys(path).length) params.push(`path: ${literal(path)}`);
  if (Object.keys(query).length) params.push(`query: ${literal(query)}`);
  if (Object.keys(header).length) params.push(`header: ${literal(header)}`);
  const init: string[] = [];
  if (params.length) init.push(`params: { ${params.join(', ')} }`);
  if (body !== undefined) init.push(`body: ${literal(body)}`);
  const client = shape.session ? 'session' : 'rest';
  return `  answers.push(await ${client}.${route.method}(${literal(route.template)}${init.length ? `, { ${init.join(', ')} }` : ''}));`;
}

function program(routes: readonly Route[]): { source: string; calls: number } {
  const lines: string[] = [];
  for (const route of routes) {
    lines.push(`  // ${route.method} ${route.template} (${route.procedurePath}, ${route.meta.access})`);
    lines.push(call(route));
    if (route.meta.access === 'user') lines.push(call(route, { userAsMember: true }));
    if (route.meta.access === 'dashboard' && route.meta.session) lines.push(call(route, { session: true }));
  }
  const calls = lines.filter((l) => l.includes('answers.push')).length;
  const source = `import createClient from 'openapi-fetch';
import type { paths } from './openapi.js';

// The README's REST client: the key once, per-call headers as parameters.
const rest = createClient<paths>({ baseUrl: 'http://localhost:3000/api', headers: { 'x-api-key': 'pipo_example' } });
// A signed-in browser: the session cookie instead of a key.
const session = createClient<paths>({ baseUrl: 'http://localhost:3000/api', credentials: 'include' });

export async function callEveryOperation(): Promise<unknown[]> {
  const answers: unknown[] = [];
${lines.join('\n')}
  return answers;
}

export async function wrongCalls(): Promise<void> {
  // @ts-expect-error a dashboard key's route needs x-account-id
  await rest.POST('/accounts/credits', { body: ${literal(served.doc.paths['/accounts/credits'].post.requestBody.content['application/json'].example)} });
  // @ts-expect-error no such path
  await rest.GET('/no-such-route');
}

// The answers are typed: a trading quote's total and an error body's code.
export async function typedAnswers(): Promise<number | undefined> {
  const { data, error } = await rest.POST('/trading/quote', { params: { header: { 'x-user-id': 'alice' } }, body: ${literal(served.doc.paths['/trading/quote'].post.requestBody.content['application/json'].example)} });
  if (error) return error.status satisfies number;
  return data?.totalCost satisfies number | undefined;
}
`;
  return { source, calls };
}

async function typeCheck(document: unknown, name: string): Promise<{ errors: string[]; calls: number }> {
  const project = join(served.dir, name);
  mkdirSync(join(project, 'node_modules'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules/openapi-fetch'), join(project, 'node_modules/openapi-fetch'));
  writeFileSync(join(project, 'openapi.ts'), await restClientSource(document as object));
  const { source, calls } = program(served.t.app.routes);
  writeFileSync(join(project, 'calls.ts'), source);
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ESNext', 'DOM'], types: [], strict: true, noEmit: true, skipLibCheck: true },
      files: ['calls.ts', 'openapi.ts'],
    }),
  );
  writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  const run = Bun.spawn(['node', TSC, '-p', '.'], { cwd: project, stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
  return { errors: (stdout + stderr).split('\n').filter((l) => l.includes('error TS')), calls };
}

test('openapi-typescript types of /openapi.json compile a program calling every operation the documented ways (openapi-fetch)', async () => {
  const { errors, calls } = await typeCheck(served.doc, 'served');
  const users = served.t.app.routes.filter((r) => r.meta.access === 'user').length;
  const sessions = served.t.app.routes.filter((r) => r.meta.access === 'dashboard' && r.meta.session).length;
  expect(users).toBe(20);
  expect(sessions).toBe(6);
  expect(calls).toBe(served.t.app.routes.length + users + sessions);
  expect(errors).toEqual([]);
}, 180_000);

test('the same check fails for a document that declares x-user-id and x-account-id required (the calls that send userId, and the session calls, do not compile)', async () => {
  const strict = structuredClone(served.doc);
  for (const item of Object.values(strict.paths) as any[]) {
    for (const op of Object.values(item) as any[]) for (const p of op.parameters ?? []) if (p.name === 'x-user-id' || p.name === 'x-account-id') p.required = true;
  }
  const { errors } = await typeCheck(strict, 'strict');
  expect(errors.length).toBeGreaterThanOrEqual(19 + 6);
}, 180_000);
