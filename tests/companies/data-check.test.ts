/**
 * `npm run data:check`, run as a process: the shipped dataset passes and its coverage is what the
 * files hold (recounted here); a copy with a schema error, a valuation without its date and figures
 * without a source fails, naming each.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dir, '../..');
const DATASET = join(ROOT, 'seeds/companies');
const scratch = mkdtempSync(join(tmpdir(), 'pipo-data-check-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function check(dir?: string) {
  const run = Bun.spawn(['npm', 'run', '--silent', 'data:check', ...(dir ? ['--', '--dir', dir] : [])], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
  return { exitCode, stderr, report: JSON.parse(stdout.trim().split('\n').at(-1)!) };
}

const records = () => readdirSync(DATASET).filter((f) => f.endsWith('.json')).flatMap((f) => JSON.parse(readFileSync(join(DATASET, f), 'utf8')) as any[]);

describe('npm run data:check', () => {
  test('the shipped dataset passes; the coverage it prints is what the files hold', async () => {
    const { exitCode, report } = await check();
    const all = records();
    expect(exitCode).toBe(0);
    expect(report).toMatchObject({ invalidRows: 0, violations: 0 });
    expect(report.coverage).toEqual({
      companies: all.length,
      withValuation: all.filter((r) => r.valuationUsd != null && r.valuationAsOf).length,
      withSource: all.filter((r) => r.referenceUrl).length,
      withCountry: all.filter((r) => r.headquartersCountry).length,
      rounds: all.reduce((n, r) => n + (r.fundingHistory?.length ?? 0), 0),
      roundsWithValuation: all.reduce((n, r) => n + (r.fundingHistory ?? []).filter((h: any) => h.valuation != null).length, 0),
      investors: new Set(all.flatMap((r) => (r.extra?.keyInvestors ?? []).map((s: string) => s.trim().toLowerCase()))).size,
    });
  }, 60_000);

  test('a broken copy fails (exit 1), naming the bad row, the undated valuation and the unsourced figures', async () => {
    const [first, second, third] = records().filter((r) => r.valuationUsd != null && r.referenceUrl);
    writeFileSync(
      join(scratch, 'broken.json'),
      JSON.stringify([
        { ...first, foundedYear: 'long ago' },
        { ...second, valuationAsOf: null },
        { ...third, referenceUrl: null },
      ]),
    );
    const { exitCode, stderr, report } = await check(scratch);
    expect(exitCode).toBe(1);
    expect(report).toMatchObject({ invalidRows: 1, violations: 2 });
    expect(stderr).toContain(`broken.json row 1 (${first.sourceId}): foundedYear`);
    expect(stderr).toContain(`${second.sourceId}: valuationUsd without valuationAsOf`);
    expect(stderr).toContain(`${third.sourceId}: figures without a source (referenceUrl)`);
  }, 60_000);
});
