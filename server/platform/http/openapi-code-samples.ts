/**
 * /openapi.json, `x-codeSamples`: each operation called three ways — curl, JavaScript's fetch, and
 * the typed tRPC client of @pre-ipo/client (`createClient`) — with the operation's own examples:
 * its path parameters, its required query parameters (or else its first one with an example), its
 * body, and the headers its access rule needs (openapi.ts). /docs shows them beside each operation.
 */
import type { OpenAPIObject, OperationObject, ParameterObject, ReferenceObject, RequestBodyObject } from 'openapi3-ts/oas31';
import { EXAMPLE_USER } from '../procedures/user-member.ts';
import { parameterExample } from './openapi-examples.ts';
import type { Route } from './route-table.ts';

/** Where the samples call when the server names no origin of its own: the README's local server. */
const DEFAULT_ORIGIN = 'http://localhost:3000';
const EXAMPLE_ACCOUNT = 'acme';

interface CodeSample {
  lang: string;
  label: string;
  source: string;
}

interface CallExample {
  /** Where the sample calls: the server's own origin. */
  origin: string;
  method: string;
  /** Path and query string, relative to /api. */
  target: string;
  /** Header name → the literal or (for secrets) environment variable a sample sends. */
  headers: Array<[string, { literal: string } | { env: string }]>;
  body: unknown;
  /** The route streams server-sent events when asked to (curl shows the stream; the others its JSON form). */
  streams: boolean;
  /** The route answers a file (meta `files`): curl saves it, fetch reads it as it streams, tRPC cannot have it. */
  file: boolean;
  /** The tRPC input: path, query and body members together. */
  input: Record<string, unknown>;
}

const isParameter = (p: ParameterObject | ReferenceObject): p is ParameterObject => !('$ref' in p);

export function addCodeSamples(doc: OpenAPIObject, routes: readonly Route[], origin = DEFAULT_ORIGIN): void {
  for (const route of routes) {
    const operation = doc.paths?.[route.template]?.[route.method.toLowerCase() as 'get'];
    if (!operation) throw new Error(`OpenAPI document lacks ${route.method} ${route.template}`);
    (operation as Record<string, unknown>)['x-codeSamples'] = codeSamples(route, operation, origin);
  }
}

function codeSamples(route: Route, operation: OperationObject, origin: string): CodeSample[] {
  const call = callExample(route, operation, origin);
  return [
    { lang: 'shell', label: 'curl', source: curl(call) },
    { lang: 'javascript', label: 'JavaScript (fetch)', source: fetchSample(call) },
    { lang: 'typescript', label: 'tRPC (@pre-ipo/client)', source: trpcSample(route, call) },
  ];
}

function callExample(route: Route, operation: OperationObject, origin: string): CallExample {
  const parameters = (operation.parameters ?? []).filter(isParameter);
  const input: Record<string, unknown> = {};
  let path = route.template;
  for (const p of parameters.filter((p) => p.in === 'path')) {
    path = path.replace(`{${p.name}}`, encodeURIComponent(String(parameterExample(p))));
    input[p.name] = parameterExample(p);
  }
  const query = parameters.filter((p) => p.in === 'query' && p.name !== 'apiKey' && parameterExample(p) !== undefined);
  const shown = query.some((p) => p.required) ? query.filter((p) => p.required) : query.slice(0, 1);
  const search = new URLSearchParams();
  for (const p of shown) {
    const example = parameterExample(p);
    for (const value of Array.isArray(example) ? example : [example]) search.append(p.name, String(value));
    input[p.name] = example;
  }
  const body = (operation.requestBody as RequestBodyObject | undefined)?.content?.['application/json']?.example;
  if (body && typeof body === 'object') Object.assign(input, body);

  const access = route.meta.access ?? 'public';
  const headers: CallExample['headers'] = [];
  if (access === 'key' || access === 'user') headers.push(['x-api-key', { env: 'PIPO_API_KEY' }]);
  if (access === 'user') headers.push(['x-user-id', { literal: EXAMPLE_USER }]);
  if (access === 'dashboard') headers.push(['x-api-key', { env: 'PIPO_DASHBOARD_KEY' }], ['x-account-id', { literal: EXAMPLE_ACCOUNT }]);
  if (access === 'session') headers.push(['cookie', { env: 'PIPO_SESSION_COOKIE' }]);
  if (route.meta.idempotent) {
    const header = parameters.find((p) => p.in === 'header' && p.name === 'Idempotency-Key');
    const key = String((header && parameterExample(header)) ?? 'a-unique-key-per-request');
    headers.push(['Idempotency-Key', { literal: key }]);
    // The typed client names the key per call (a batch's calls share their headers).
    input.idempotencyKey = key;
  }
  if (body !== undefined) headers.push(['content-type', { literal: 'application/json' }]);
  const streams = Boolean(operation.responses?.['200']?.content?.['text/event-stream']);
  return { origin, method: route.method, target: `${path}${search.size ? `?${search}` : ''}`, headers, body, streams, file: Boolean(route.meta.files), input };
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

function curl(call: CallExample): string {
  // A file is saved under the name the answer gives (Content-Disposition).
  const lines = [`curl ${call.method === 'GET' ? '' : `-X ${call.method} `}${call.streams ? '-N ' : ''}${call.file ? '-OJ ' : ''}${shellQuote(`${call.origin}/api${call.target}`)}`];
  if (call.streams) lines.push(`-H 'Accept: text/event-stream'`);
  for (const [name, value] of call.headers) {
    // Secrets come from the environment: double quotes so the shell expands them.
    lines.push('literal' in value ? `-H ${shellQuote(`${name}: ${value.literal}`)}` : `-H "${name}: $${value.env}"`);
  }
  if (call.body !== undefined) lines.push(`-d ${shellQuote(JSON.stringify(call.body))}`);
  return lines.join(' \\\n  ');
}

/** A value as a JavaScript literal the way people write one: bare keys, single quotes, two-space indents. */
function jsValue(value: unknown, indent: string): string {
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
  if (Array.isArray(value)) return `[${value.map((item) => jsValue(item, indent)).join(', ')}]`;
  if (value && typeof value === 'object') {
    const inner = `${indent}  `;
    const members = Object.entries(value).map(([key, member]) => `${inner}${/^[A-Za-z_$][\w$]*$/.test(key) ? key : jsValue(key, inner)}: ${jsValue(member, inner)},`);
    return members.length ? `{\n${members.join('\n')}\n${indent}}` : '{}';
  }
  return JSON.stringify(value);
}

function fetchSample(call: CallExample): string {
  const headers = call.headers.map(([name, value]) => `    ${jsValue(name, '')}: ${'literal' in value ? jsValue(value.literal, '') : `process.env.${value.env}`},`);
  const lines = [
    `const response = await fetch(${jsValue(`${call.origin}/api${call.target}`, '')}, {`,
    `  method: ${jsValue(call.method, '')},`,
    ...(headers.length ? ['  headers: {', ...headers, '  },'] : []),
    ...(call.body !== undefined ? [`  body: JSON.stringify(${jsValue(call.body, '  ')}),`] : []),
    '});',
    ...(call.file
      ? [
          '// Every error is {code, message, status, requestId}.',
          'if (!response.ok) {',
          '  const error = await response.json();',
          '  throw new Error(`${error.code}: ${error.message} (request ${error.requestId})`);',
          '}',
          "console.log('cost (USD):', response.headers.get('x-request-cost-usd'));",
          '// The file streams as it is produced: take it chunk by chunk.',
          'for await (const chunk of response.body) process.stdout.write(chunk);',
        ]
      : [
          'const answer = await response.json();',
          '// Every error is {code, message, status, requestId}.',
          'if (!response.ok) throw new Error(`${answer.code}: ${answer.message} (request ${answer.requestId})`);',
          "console.log(answer, 'cost (USD):', response.headers.get('x-request-cost-usd'));",
        ]),
  ];
  return lines.join('\n');
}

function trpcSample(route: Route, call: CallExample): string {
  const access = route.meta.access ?? 'public';
  const options = [`baseUrl: ${jsValue(call.origin, '')}`];
  if (access === 'key' || access === 'user') options.push('apiKey: process.env.PIPO_API_KEY');
  if (access === 'user') options.push(`userId: ${jsValue(EXAMPLE_USER, '')}`);
  if (access === 'dashboard') options.push('apiKey: process.env.PIPO_DASHBOARD_KEY', `headers: { 'x-account-id': ${jsValue(EXAMPLE_ACCOUNT, '')} }`);
  if (access === 'session') options.push('// In a browser signed in with a wallet the session cookie goes by itself.', 'headers: { cookie: process.env.PIPO_SESSION_COOKIE }');
  const verb = route.type === 'mutation' ? 'mutate' : 'query';
  const argument = Object.keys(call.input).length ? jsValue(call.input, '') : '';
  return [
    "import { createClient } from '@pre-ipo/client';",
    '',
    'const client = createClient({',
    ...options.map((option) => (option.startsWith('//') ? `  ${option}` : `  ${option},`)),
    '});',
    ...(call.file
      ? ['// A file is served over REST only (the curl and fetch samples): over tRPC this call is refused', '// with 400 BAD_REQUEST, and costs nothing.']
      : []),
    `const answer = await client.${route.procedurePath}.${verb}(${argument});`,
  ].join('\n');
}
