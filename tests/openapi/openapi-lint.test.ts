/**
 * `redocly lint` with the recommended rules (redocly.yaml) on the /openapi.json this server builds:
 * no error and no warning; and no two paths that one request could match (Redocly's own rule is off:
 * it cannot tell an integer parameter from a literal segment). Among others it checks every example against its schema (parameters,
 * bodies, errors), operation ids, tags, servers and the info object. Redocly runs as its own CLI on
 * a copy of the document written to a temporary directory, with its telemetry off.
 */
import { expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { servedDocument } from '../harness/served-document.ts';

const ROOT = join(import.meta.dir, '../..');
const REDOCLY = join(ROOT, 'node_modules/.bin/redocly');

const served = servedDocument('pipo-openapi-');

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>;
}

async function lint(document: unknown, name: string): Promise<{ exitCode: number; report: LintReport }> {
  const file = join(served.dir, name);
  writeFileSync(file, JSON.stringify(document));
  const run = Bun.spawn([REDOCLY, 'lint', '--config', join(ROOT, 'redocly.yaml'), '--format', 'json', file], {
    cwd: ROOT,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [stdout, exitCode] = await Promise.all([new Response(run.stdout).text(), run.exited]);
  return { exitCode, report: JSON.parse(stdout) as LintReport };
}

const summary = (report: LintReport) => report.problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);

test('the document passes the recommended rules with no error and no warning', async () => {
  const { exitCode, report } = await lint(served.doc, 'openapi.json');
  expect(summary(report)).toEqual([]);
  expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  expect(exitCode).toBe(0);
}, 60_000);

test('the same run reports a broken example, so the check above can fail', async () => {
  const broken = structuredClone(served.doc);
  broken.paths['/trading/buy'].post.requestBody.content['application/json'].example.amount = 'a hundred';
  const { report } = await lint(broken, 'broken.json');
  expect(report.problems.map((p) => p.ruleId)).toContain('no-invalid-media-type-examples');
}, 60_000);

/**
 * Pairs of paths one request could match. Redocly's rule: two literals that differ set paths apart;
 * otherwise they are ambiguous when each has a literal where the other has a parameter (neither is the
 * more specific). Ours adds: apart all the same where a literal that is no number faces an integer
 * parameter.
 */
function ambiguousPaths(doc: { paths: Record<string, Record<string, any>> }): string[] {
  const paths = Object.keys(doc.paths);
  const typeOf = (path: string, name: string): string | undefined => {
    for (const operation of Object.values(doc.paths[path]!)) {
      const parameter = (operation?.parameters ?? []).find((p: any) => p.in === 'path' && p.name === name);
      if (parameter) return parameter.schema?.type;
    }
    return undefined;
  };
  const param = (segment: string) => /^\{(.+)\}$/.exec(segment)?.[1];
  const found: string[] = [];
  for (let i = 0; i < paths.length; i++) {
    for (let j = i + 1; j < paths.length; j++) {
      const [a, b] = [paths[i]!.split('/'), paths[j]!.split('/')];
      if (a.length !== b.length) continue;
      if (a.some((segment, k) => !param(segment) && !param(b[k]!) && segment !== b[k])) continue;
      const aLiteral = a.flatMap((segment, k) => (!param(segment) && param(b[k]!) ? [k] : []));
      const bLiteral = b.flatMap((segment, k) => (!param(segment) && param(a[k]!) ? [k] : []));
      if (!aLiteral.length || !bLiteral.length) continue;
      const integerApart = (k: number, literals: string[], paramPath: string, params: string[]) =>
        typeOf(paramPath, param(params[k]!)!) === 'integer' && !/^\d+$/.test(literals[k]!);
      if (aLiteral.some((k) => integerApart(k, a, paths[j]!, b)) || bLiteral.some((k) => integerApart(k, b, paths[i]!, a))) continue;
      found.push(`${paths[i]} ~ ${paths[j]}`);
    }
  }
  return found;
}

test('no two paths are ambiguous, unless where their shapes cross a literal segment faces an integer parameter', () => {
  expect(ambiguousPaths(served.doc)).toEqual([]);
});

test('the check finds the ambiguity when the crossing parameter is a string, and not when one path is more specific', () => {
  const op = (name: string, type: string) => ({ get: { parameters: [{ in: 'path', name, schema: { type } }] } });
  expect(ambiguousPaths({ paths: { '/x/source/{sourceId}': op('sourceId', 'string'), '/x/{name}/rounds': op('name', 'string') } })).toEqual(['/x/source/{sourceId} ~ /x/{name}/rounds']);
  expect(ambiguousPaths({ paths: { '/x/source/{sourceId}': op('sourceId', 'string'), '/x/{id}/rounds': op('id', 'integer') } })).toEqual([]);
  expect(ambiguousPaths({ paths: { '/x/sync': {}, '/x/{id}': op('id', 'string') } })).toEqual([]);
});
