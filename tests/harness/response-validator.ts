/**
 * Checks every /api response the tests receive against /openapi.json, with an independent validator
 * (ajv's JSON Schema 2020-12, which OpenAPI 3.1 schemas are): never the project's zod schemas, so a
 * drift between the code and the document fails a test instead of being checked against itself.
 *
 * For a request to /api/* it finds the operation by method and path template (the document's own
 * `paths`, a literal segment beating a `{param}`), then checks:
 *   - the status is documented for the operation (exact code, then `4XX`-style ranges, then `default`);
 *   - each header documented for that status: present when `required`, and its value against the
 *     header's schema (integers and booleans read from the header's text); and a header the API
 *     documents somewhere (TRACKED_HEADERS) that the response sends but this status does not declare;
 *   - the body: a content type documented for that status, and the JSON body against its schema
 *     (`$ref`s resolved inside the document). `text/event-stream` bodies are not read (status and
 *     headers only), nor are HEAD, 204 and 304 bodies.
 * A path no operation has must answer our 404 error body (components.schemas.ApiError); a known
 * path with a method it lacks, our 405 error body. /trpc, /docs, /dashboard, /metrics, /healthz,
 * /readyz and /openapi.json are not checked; nor are OPTIONS (CORS preflight) requests.
 *
 * RESPONSE_VALIDATION selects what a mismatch does: `strict` throws (failing the test) with the
 * operation, status and JSON pointer of each failure; `report` (the default) appends one JSON line
 * per mismatch to RESPONSE_MISMATCHES_FILE (default /tmp/response-mismatches.ndjson); `off` skips
 * the check. Schemas are compiled once per process, on first use, per distinct document.
 */
import { appendFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import type { ValidateFunction, ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';

export type ValidationMode = 'strict' | 'report' | 'off';

/** The mode from RESPONSE_VALIDATION (read on each response, so a test may switch it). */
export function validationMode(): ValidationMode {
  const value = (process.env.RESPONSE_VALIDATION ?? '').trim().toLowerCase();
  if (value === '' || value === 'strict') return 'strict';
  if (value === 'report' || value === 'off') return value;
  throw new Error(`RESPONSE_VALIDATION must be strict, report or off (got ${JSON.stringify(value)})`);
}

export const DEFAULT_MISMATCH_FILE = '/tmp/response-mismatches.ndjson';

/**
 * Headers this API sets whose presence the document must declare when it sends them: a response
 * carrying one that its status does not list is reported as `undocumented-header`.
 */
export const TRACKED_HEADERS = ['X-Request-Id', 'X-Request-Cost-USD', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'Idempotent-Replayed', 'Allow'];

export type MismatchKind = 'status' | 'header' | 'undocumented-header' | 'content-type' | 'body' | 'unknown-path' | 'unknown-method' | 'validator-error';

export interface Mismatch {
  kind: MismatchKind;
  /** `GET /trading/positions/{id}` (the document's template), or the request's own path when none matched. */
  operation: string;
  operationId?: string;
  /** The request as sent: method and path (no query). */
  method: string;
  path: string;
  status: number;
  /** JSON pointer of the failure in the response: `/status`, `/headers/<name>`, `/body/<pointer>`. */
  pointer: string;
  message: string;
  /** Where in /openapi.json the rule that failed lives (a JSON pointer). */
  documentPointer?: string;
}

export interface ResponseToCheck {
  method: string;
  /** A full URL or a path (with or without a query). */
  url: string;
  status: number;
  headers: Headers;
  /** The body's text; undefined when it was not read (streams, HEAD). */
  body?: string;
}

/** Paths under /api that are not operations of the document: nothing. Everything else outside /api: skipped. */
const API_PREFIX = '/api';

/** Whether a request's response is ours to check (cheap: called on every request the harness makes). */
export function isCheckedPath(method: string, pathname: string): boolean {
  if (method === 'OPTIONS') return false;
  return pathname === API_PREFIX || pathname.startsWith(`${API_PREFIX}/`);
}

interface Operation {
  method: string;
  template: string;
  pointer: string;
  object: any;
  segments: Array<string | null>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

export class ResponseMismatchError extends Error {
  constructor(readonly mismatches: Mismatch[]) {
    const first = mismatches[0]!;
    super(
      `Response does not match /openapi.json: ${first.method} ${first.path} (${first.operation}) answered ${first.status}:\n` +
        mismatches.map((m) => `  - [${m.kind}] at ${m.pointer}: ${m.message}${m.documentPointer ? ` (document: #${m.documentPointer})` : ''}`).join('\n'),
    );
    this.name = 'ResponseMismatchError';
  }
}

export class ResponseValidator {
  private readonly ajv: InstanceType<typeof Ajv2020>;
  private readonly operations: Operation[] = [];
  /** The path prefix of the document's first server (`/api`). */
  readonly base: string;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly document: any) {
    if (typeof document?.openapi !== 'string' || !document.openapi.startsWith('3.1')) throw new Error('ResponseValidator: an OpenAPI 3.1 document is required');
    const server = document.servers?.[0]?.url ?? '';
    this.base = server.startsWith('/') ? server.replace(/\/$/, '') : server ? new URL(server).pathname.replace(/\/$/, '') : '';
    // OpenAPI's own keywords (example, discriminator, …) are not JSON Schema's: strict mode off.
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, logger: false });
    addFormats(this.ajv);
    this.ajv.addSchema(document, 'openapi.json');
    for (const [template, item] of Object.entries<any>(document.paths ?? {})) {
      for (const method of METHODS) {
        if (!item?.[method]) continue;
        this.operations.push({
          method: method.toUpperCase(),
          template,
          pointer: `/paths/${escapePointer(template)}/${method}`,
          object: item[method],
          segments: template.split('/').filter(Boolean).map((s) => (/^\{.+\}$/.test(s) ? null : s)),
        });
      }
    }
    // Most specific first: at the first differing segment, a literal beats a parameter.
    this.operations.sort((a, b) => {
      if (a.segments.length !== b.segments.length) return a.segments.length - b.segments.length;
      for (let i = 0; i < a.segments.length; i++) {
        const al = a.segments[i] !== null;
        const bl = b.segments[i] !== null;
        if (al !== bl) return al ? -1 : 1;
      }
      return 0;
    });
  }

  /** The operations whose template matches a path relative to the server's base (`/pricing`). */
  private operationsAt(relativePath: string): Operation[] {
    const parts = relativePath.split('/').filter(Boolean);
    return this.operations.filter((op) => op.segments.length === parts.length && op.segments.every((s, i) => s === null || s === parts[i]));
  }

  /** The operation a request reaches, or undefined (a HEAD request is checked as its GET). */
  match(method: string, pathname: string): Operation | undefined {
    const relative = this.relative(pathname);
    if (relative === undefined) return undefined;
    const wanted = method === 'HEAD' ? 'GET' : method;
    return this.operationsAt(relative).find((op) => op.method === wanted);
  }

  private relative(pathname: string): string | undefined {
    if (pathname === this.base) return '/';
    return pathname.startsWith(`${this.base}/`) ? pathname.slice(this.base.length) : undefined;
  }

  /** A JSON pointer into the document, `$ref`s of non-schema objects (headers, responses) followed. */
  private resolve(object: any): any {
    for (let depth = 0; object && typeof object.$ref === 'string' && depth < 10; depth++) object = this.at(object.$ref.replace(/^#/, ''));
    return object;
  }

  private at(pointer: string): any {
    let node = this.document;
    for (const raw of pointer.split('/').slice(1)) {
      node = node?.[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    return node;
  }

  /** A validator for the schema at a document pointer, compiled once. */
  private schemaAt(pointer: string): ValidateFunction {
    let fn = this.compiled.get(pointer);
    if (!fn) {
      fn = this.ajv.compile({ $ref: `openapi.json#${encodeURI(pointer)}` });
      this.compiled.set(pointer, fn);
    }
    return fn;
  }

  /** Every way the response differs from the document (empty when it matches, or is not ours to check). */
  check(response: ResponseToCheck): Mismatch[] {
    const pathname = pathOf(response.url);
    if (!isCheckedPath(response.method, pathname)) return [];
    const operation = this.match(response.method, pathname);
    const base = { method: response.method, path: pathname, status: response.status };
    if (!operation) return this.checkUnrouted(response, pathname, base);

    const label = `${operation.method} ${operation.template}`;
    const where = { ...base, operation: label, operationId: operation.object.operationId as string | undefined };
    const mismatches: Mismatch[] = [];
    const responses = operation.object.responses ?? {};
    const statusKey = [String(response.status), `${String(response.status)[0]}XX`, 'default'].find((k) => responses[k] !== undefined);
    if (!statusKey) {
      mismatches.push({
        ...where,
        kind: 'status',
        pointer: '/status',
        message: `status ${response.status}${errorCode(response.body)} is not documented (documented: ${Object.keys(responses).join(', ')})`,
        documentPointer: `${operation.pointer}/responses`,
      });
      return mismatches;
    }
    const responsePointer = `${operation.pointer}/responses/${escapePointer(statusKey)}`;
    const documented = this.resolve(responses[statusKey]);
    this.checkHeaders(response, documented, responsePointer, where, mismatches);
    this.checkBody(response, documented, responsePointer, where, mismatches);
    return mismatches;
  }

  /** No operation: a path the document lacks answers our 404 body; a known path with another method, our 405 body. */
  private checkUnrouted(response: ResponseToCheck, pathname: string, base: Pick<Mismatch, 'method' | 'path' | 'status'>): Mismatch[] {
    const relative = this.relative(pathname);
    const pathKnown = relative !== undefined && this.operationsAt(relative).length > 0;
    const kind: MismatchKind = pathKnown ? 'unknown-method' : 'unknown-path';
    const expected = pathKnown ? 405 : 404;
    const where = { ...base, operation: `${response.method} ${pathname} (no operation)` };
    const mismatches: Mismatch[] = [];
    if (response.status !== expected) {
      mismatches.push({ ...where, kind, pointer: '/status', message: `a request no operation of the document serves must answer ${expected} (got ${response.status})` });
    }
    if (pathKnown && !response.headers.has('allow')) {
      mismatches.push({ ...where, kind, pointer: '/headers/Allow', message: 'a 405 must carry Allow' });
    }
    if (response.body !== undefined && response.method !== 'HEAD') {
      const errorSchema = '/components/schemas/ApiError';
      if (this.at(errorSchema) === undefined) return mismatches;
      this.checkJson(response.body, errorSchema, where, kind, mismatches);
    }
    return mismatches;
  }

  private checkHeaders(response: ResponseToCheck, documented: any, responsePointer: string, where: Omit<Mismatch, 'kind' | 'pointer' | 'message'>, out: Mismatch[]) {
    const declared = new Set<string>();
    for (const [name, raw] of Object.entries<any>(documented?.headers ?? {})) {
      declared.add(name.toLowerCase());
      if (name.toLowerCase() === 'content-type') continue; // OpenAPI: ignored when listed
      const header = this.resolve(raw);
      const headerPointer = `${responsePointer}/headers/${escapePointer(name)}`;
      const value = response.headers.get(name);
      if (value === null) {
        if (header?.required) out.push({ ...where, kind: 'header', pointer: `/headers/${name}`, message: `required header ${name} is missing`, documentPointer: headerPointer });
        continue;
      }
      if (!header?.schema) continue;
      const schemaPointer = typeof raw?.$ref === 'string' ? `${raw.$ref.replace(/^#/, '')}/schema` : `${headerPointer}/schema`;
      const validate = this.schemaAt(schemaPointer);
      if (!validate(headerValue(value, header.schema))) {
        out.push({
          ...where,
          kind: 'header',
          pointer: `/headers/${name}`,
          message: `header ${name}: ${JSON.stringify(value)} ${formatErrors(validate.errors)}`,
          documentPointer: schemaPointer,
        });
      }
    }
    for (const name of TRACKED_HEADERS) {
      if (!declared.has(name.toLowerCase()) && response.headers.has(name)) {
        out.push({ ...where, kind: 'undocumented-header', pointer: `/headers/${name}`, message: `header ${name} is sent but not documented for this status`, documentPointer: `${responsePointer}/headers` });
      }
    }
  }

  private checkBody(response: ResponseToCheck, documented: any, responsePointer: string, where: Omit<Mismatch, 'kind' | 'pointer' | 'message'>, out: Mismatch[]) {
    const content: Record<string, any> | undefined = documented?.content;
    const contentType = response.headers.get('content-type');
    const mediaType = contentType?.split(';')[0]!.trim().toLowerCase();
    const emptyBody = response.body === '' || response.status === 204 || response.status === 304;
    if (!content || Object.keys(content).length === 0) {
      if (response.body !== undefined && response.body !== '') {
        out.push({ ...where, kind: 'body', pointer: '/body', message: `a body (${contentType ?? 'no content-type'}) is sent but none is documented`, documentPointer: responsePointer });
      }
      return;
    }
    if (response.method === 'HEAD') return;
    if (emptyBody && !mediaType) {
      out.push({ ...where, kind: 'body', pointer: '/body', message: `no body is sent but one is documented (${Object.keys(content).join(', ')})`, documentPointer: `${responsePointer}/content` });
      return;
    }
    const key = mediaTypeKey(content, mediaType);
    if (!key) {
      out.push({
        ...where,
        kind: 'content-type',
        pointer: '/headers/content-type',
        message: `content type ${contentType === null ? '(none)' : JSON.stringify(contentType)} is not documented (documented: ${Object.keys(content).join(', ')})`,
        documentPointer: `${responsePointer}/content`,
      });
      return;
    }
    if (response.body === undefined || !content[key]?.schema) return; // not read (a stream) or no schema
    const schemaPointer = `${responsePointer}/content/${escapePointer(key)}/schema`;
    if (isJson(key === '*/*' || key.endsWith('/*') ? (mediaType ?? key) : key)) {
      this.checkJson(response.body, schemaPointer, where, 'body', out);
    } else {
      const validate = this.schemaAt(schemaPointer);
      if (!validate(response.body)) out.push({ ...where, kind: 'body', pointer: '/body', message: `body ${formatErrors(validate.errors)}`, documentPointer: schemaPointer });
    }
  }

  private checkJson(text: string, schemaPointer: string, where: Omit<Mismatch, 'kind' | 'pointer' | 'message'>, kind: MismatchKind, out: Mismatch[]) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      out.push({ ...where, kind, pointer: '/body', message: `body is not JSON: ${JSON.stringify(text.slice(0, 120))}`, documentPointer: schemaPointer });
      return;
    }
    const validate = this.schemaAt(schemaPointer);
    if (validate(value)) return;
    for (const error of validate.errors ?? []) {
      out.push({
        ...where,
        kind,
        pointer: `/body${error.instancePath}`,
        message: `body${error.instancePath || ''} ${describeError(error)}`,
        documentPointer: failedKeyword(schemaPointer, error.schemaPath),
      });
    }
  }
}

/** ` (CODE)` of our error body, to tell which refusal an undocumented status was. */
function errorCode(body: string | undefined): string {
  if (!body || body[0] !== '{') return '';
  try {
    const code = JSON.parse(body)?.code;
    return typeof code === 'string' ? ` (${code})` : '';
  } catch {
    return '';
  }
}

function pathOf(url: string): string {
  if (url.startsWith('/')) return url.split(/[?#]/, 1)[0]!;
  try {
    return new URL(url).pathname;
  } catch {
    return url.split(/[?#]/, 1)[0]!;
  }
}

function mediaTypeKey(content: Record<string, unknown>, mediaType: string | undefined): string | undefined {
  if (!mediaType) return content['*/*'] ? '*/*' : undefined;
  const keys = Object.keys(content);
  return (
    keys.find((k) => k.split(';')[0]!.trim().toLowerCase() === mediaType) ??
    keys.find((k) => k.endsWith('/*') && mediaType.startsWith(k.slice(0, -1).toLowerCase())) ??
    keys.find((k) => k === '*/*')
  );
}

const isJson = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');

/** A header's text as the value its schema describes (headers are strings on the wire). */
function headerValue(value: string, schema: any): unknown {
  const types: string[] = Array.isArray(schema?.type) ? schema.type : [schema?.type];
  if ((types.includes('integer') || types.includes('number')) && /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(value.trim())) return Number(value);
  if (types.includes('boolean') && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

/** The document pointer of the keyword that failed, from ajv's schemaPath (`openapi.json#/…` once a `$ref` was followed). */
function failedKeyword(schemaPointer: string, schemaPath: string): string {
  const at = schemaPath.indexOf('#');
  if (at < 0) return schemaPointer;
  const fragment = decodeURIComponent(schemaPath.slice(at + 1));
  return at > 0 ? fragment : schemaPointer + fragment.replace(/^\/\$ref/, '');
}

function describeError(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'additionalProperties') return `has a property the schema does not allow: ${JSON.stringify(params.additionalProperty)}`;
  if (error.keyword === 'enum') return `${error.message}: ${JSON.stringify(params.allowedValues)}`;
  return error.message ?? error.keyword;
}

function formatErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? []).map(describeError).join('; ');
}

const validators = new Map<string, ResponseValidator>();

/** One validator per distinct document text, built once per process. */
export function validatorForDocument(document: object | string): ResponseValidator {
  const text = typeof document === 'string' ? document : JSON.stringify(document);
  let validator = validators.get(text);
  if (!validator) {
    validator = new ResponseValidator(JSON.parse(text));
    validators.set(text, validator);
  }
  return validator;
}

/** The body's text when it is a complete document worth reading (not a stream, not HEAD). */
async function bodyToCheck(method: string, response: Response): Promise<string | undefined> {
  if (method === 'HEAD' || response.body === null) return method === 'HEAD' ? undefined : '';
  const type = response.headers.get('content-type') ?? '';
  if (/^\s*text\/event-stream/i.test(type)) return undefined;
  return response.clone().text();
}

/**
 * Checks a response the harness received for a request (method, url); in strict mode throws a
 * ResponseMismatchError, in report mode appends the mismatches to the report file. Returns them.
 */
export async function checkResponse(validator: ResponseValidator, request: { method: string; url: string }, response: Response, mode: ValidationMode = validationMode()): Promise<Mismatch[]> {
  if (mode === 'off' || !isCheckedPath(request.method, pathOf(request.url))) return [];
  const body = await bodyToCheck(request.method, response);
  let mismatches: Mismatch[];
  try {
    mismatches = validator.check({ method: request.method, url: request.url, status: response.status, headers: response.headers, body });
  } catch (error) {
    // A schema ajv cannot compile (say, a pattern it cannot read) is the document's problem too.
    if (mode === 'strict') throw error;
    mismatches = [{ kind: 'validator-error', operation: '?', method: request.method, path: pathOf(request.url), status: response.status, pointer: '', message: String(error) }];
  }
  if (mismatches.length === 0) return mismatches;
  if (mode === 'strict') {
    const error = new ResponseMismatchError(mismatches);
    // A throw inside a Bun.serve handler becomes a 500 the test sees; say why on stderr too.
    console.error(error.message);
    throw error;
  }
  report(mismatches);
  return mismatches;
}

function report(mismatches: Mismatch[]) {
  const file = process.env.RESPONSE_MISMATCHES_FILE || DEFAULT_MISMATCH_FILE;
  const testFile = typeof Bun !== 'undefined' ? Bun.main.replace(/^.*\/tests\//, 'tests/') : undefined;
  const lines = mismatches.map((m) => JSON.stringify({ at: new Date().toISOString(), testFile, ...m })).join('\n') + '\n';
  try {
    appendFileSync(file, lines);
  } catch (error) {
    console.error(`response validation: cannot append to ${file}: ${String(error)}`);
  }
}
