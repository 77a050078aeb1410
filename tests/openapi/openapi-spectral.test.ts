/**
 * Spectral (@stoplight/spectral-cli) with the repository's ruleset (.spectral.yaml: spectral:oas and
 * the OWASP API Security Top 10 2023 ruleset, with the project's reasoned exceptions and narrower
 * rules of its own) on the /openapi.json this server serves: 0 errors. Warnings are listed in the
 * test's output, not failed. Spectral runs as its own CLI on a copy of the document in a temporary
 * directory.
 */
import { expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { servedDocument } from '../harness/served-document.ts';

const ROOT = join(import.meta.dir, '../..');
const SPECTRAL = join(ROOT, 'node_modules/.bin/spectral');
const RULESET = join(ROOT, '.spectral.yaml');

const served = servedDocument('pipo-spectral-');

interface Finding {
  code: string;
  message: string;
  severity: number; // 0 error, 1 warning, 2 info, 3 hint
  path: Array<string | number>;
}

async function spectral(document: unknown, name: string): Promise<Finding[]> {
  const file = join(served.dir, name);
  writeFileSync(file, JSON.stringify(document));
  const run = Bun.spawn([SPECTRAL, 'lint', '--ruleset', RULESET, '--format', 'json', '--quiet', file], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
  if (!stdout.trim().startsWith('[')) throw new Error(`spectral answered no report:\n${stdout}\n${stderr}`);
  return JSON.parse(stdout) as Finding[];
}

const line = (f: Finding) => `${f.code} at ${f.path.join('/')}: ${f.message}`;

test('Spectral (oas + OWASP, the repository ruleset) reports 0 errors on the served document', async () => {
  const findings = await spectral(served.doc, 'openapi.json');
  const warnings = findings.filter((f) => f.severity === 1);
  const counts: Record<string, number> = {};
  for (const w of warnings) counts[w.code] = (counts[w.code] ?? 0) + 1;
  console.log(`Spectral warnings (not failed), by rule: ${JSON.stringify(counts)}`);
  expect(findings.filter((f) => f.severity === 0).map(line)).toEqual([]);
}, 120_000);

test('the ruleset extends spectral:oas and the OWASP ruleset, and gives a reason for every rule it turns off', () => {
  const text = readFileSync(RULESET, 'utf8');
  expect(text).toContain('- spectral:oas');
  expect(text).toContain("- '@stoplight/spectral-owasp-ruleset'");
  const lines = text.split('\n');
  const off = lines.flatMap((l, i) => (/^\s+[\w:.-]+: off\s*$/.test(l) ? [i] : []));
  expect(off.length).toBeGreaterThan(0);
  // The line above each `rule: off` is a comment (its reason), or another `off` under the same comment.
  for (const i of off) {
    let above = i - 1;
    while (off.includes(above)) above--;
    expect(`${lines[i]!.trim()} ← ${lines[above]!.trim()}`).toMatch(/← #/);
  }
});

test('the same run fails a document that breaks the rules (a secured write left open, a 4xx without RateLimit headers, an unbounded request string)', async () => {
  const broken = structuredClone(served.doc);
  broken.paths['/keys'].post.security = [];
  delete broken.paths['/trading/quote'].post.responses['400'].headers['RateLimit-Limit'];
  delete broken.paths['/trading/buy'].post.requestBody.content['application/json'].schema.properties.eventId.maxLength;
  delete broken.paths['/trading/positions'].get.responses['429'].headers['Retry-After'];
  const codes = (await spectral(broken, 'broken.json')).filter((f) => f.severity === 0).map((f) => f.code);
  expect(codes).toContain('pipo-write-restricted');
  expect(codes).toContain('pipo-rate-limit-headers');
  expect(codes).toContain('pipo-request-string-limit');
  expect(codes).toContain('owasp:api4:2023-rate-limit-retry-after');
}, 120_000);
