/**
 * `redocly lint` with the recommended rules (redocly.yaml) on the /openapi.json this server builds:
 * no error and no warning. Among others it checks every example against its schema (parameters,
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
