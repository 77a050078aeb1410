/**
 * `npm run data:check`, run as a process: the shipped dataset passes and its coverage is what the
 * files hold (recounted here); a copy with a schema error, a valuation without its date, a field no
 * source gave and a source that does not exist fails, naming each; a source whose rows differ from
 * its manifest stops the check and the build.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from '../../data/build/build.ts';
import { readSource } from '../../data/build/sources.ts';

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
    const rounds = all.flatMap((r) => r.fundingHistory ?? []);
    const bySource: Record<string, number> = {};
    for (const r of all) for (const p of r.provenance ?? []) bySource[p.id] = (bySource[p.id] ?? 0) + 1;
    expect(report.coverage).toEqual({
      companies: all.length,
      withValuation: all.filter((r) => r.valuationUsd != null && r.valuationAsOf).length,
      valuationPoints: all.reduce((n, r) => n + (r.valuationHistory?.length ?? 0) + (r.fundingHistory ?? []).filter((h: any) => h.valuation != null).length, 0),
      withSource: all.filter((r) => r.referenceUrl || r.provenance?.length).length,
      withCountry: all.filter((r) => r.headquartersCountry).length,
      withWebsite: all.filter((r) => r.website).length,
      rounds: rounds.length,
      roundsWithValuation: rounds.filter((h: any) => h.valuation != null).length,
      investors: new Set(all.flatMap((r) => [...(r.extra?.keyInvestors ?? []), ...(r.fundingHistory ?? []).flatMap((h: any) => [...(h.investors ?? []), ...(h.leadInvestors ?? [])])].map((s: string) => s.trim().toLowerCase()))).size,
      bySource: Object.fromEntries(Object.entries(bySource).sort()),
    });
    // Every company source of data/sources/ contributes.
    for (const id of readdirSync(join(ROOT, 'data/sources'), { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== 'investors').map((d) => d.name)) expect(report.coverage.bySource[id]).toBeGreaterThan(0);
    expect(report.targets.companies).toEqual({ min: 5000, actual: all.length, met: all.length >= 5000 });
  }, 60_000);

  test('a broken copy fails (exit 1), naming the bad row, the undated valuation, the unsourced field and figures, and an unknown source', async () => {
    const withValuation = records().filter((r) => r.valuationUsd != null && r.referenceUrl && r.provenance?.length);
    const [first, second, fourth, fifth] = withValuation;
    // A record naming no source must hold no reference to one (rounds or valuations citing a source id).
    const third = withValuation.find((r) => !r.valuationHistory && !(r.fundingHistory ?? []).some((h: any) => h.source) && ![first, second, fourth, fifth].includes(r));
    writeFileSync(
      join(scratch, 'broken.json'),
      JSON.stringify([
        { ...first, foundedYear: 'long ago' },
        { ...second, valuationAsOf: null },
        { ...third, referenceUrl: null, provenance: null },
        { ...fourth, provenance: fourth.provenance.map((p: any) => ({ ...p, fields: p.fields.filter((f: string) => f !== 'name') })) },
        { ...fifth, provenance: [...fifth.provenance, { id: 'crunchbase-copy', url: null, asOf: '2026-01', fields: [] }] },
      ]),
    );
    const { exitCode, stderr, report } = await check(scratch);
    expect(exitCode).toBe(1);
    expect(report).toMatchObject({ invalidRows: 1, violations: 4 });
    expect(stderr).toContain(`broken.json row 1 (${first.sourceId}): foundedYear`);
    expect(stderr).toContain(`${second.sourceId}: valuationUsd without valuationAsOf`);
    expect(stderr).toContain(`${third.sourceId}: figures without a source (referenceUrl)`);
    expect(stderr).toContain(`${fourth.sourceId}: name without a source`);
    expect(stderr).toContain(`${fifth.sourceId}: provenance names crunchbase-copy, which is not a source of data/sources/`);
  }, 60_000);

  test('a source whose rows differ from its manifest fails the check and the build', async () => {
    const copy = join(scratch, 'sources/');
    cpSync(join(ROOT, 'data/sources/curated'), join(copy, 'curated'), { recursive: true });
    writeFileSync(join(copy, 'curated/rows.json'), readFileSync(join(copy, 'curated/rows.json'), 'utf8').replace('"name":"', '"name":"X'));
    const { issues } = readSource('curated', new URL(`file://${copy}`));
    expect(issues.join('\n')).toContain('sha256');
    expect(() => build(new URL(`file://${copy}`))).toThrow(/sha256/);
  });

  test('a join that names no earlier row stops the build', () => {
    const copy = join(scratch, 'joined/');
    cpSync(join(ROOT, 'data/sources'), join(copy, 'sources'), { recursive: true });
    writeFileSync(join(copy, 'joins.json'), JSON.stringify([{ row: 'yc:stripe', sameAs: 'yc:no-such-company', why: 'test' }]));
    expect(() => build(new URL(`file://${copy}sources/`))).toThrow(/joins\.json: yc:stripe joins yc:no-such-company/);
  });

  test('npm run data:build reproduces the committed seed byte for byte', async () => {
    const out = join(scratch, 'built/');
    const run = Bun.spawn(['npm', 'run', '--silent', 'data:build', '--', '--out', out], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' });
    expect(await run.exited).toBe(0);
    const shipped = readdirSync(DATASET).filter((f) => f.endsWith('.json')).sort();
    expect(readdirSync(join(out, 'companies')).sort()).toEqual(shipped);
    for (const f of shipped) expect(readFileSync(join(out, 'companies', f), 'utf8') === readFileSync(join(DATASET, f), 'utf8')).toBe(true);
    expect(readFileSync(join(out, 'investors.json'), 'utf8')).toBe(readFileSync(join(ROOT, 'seeds/investors.json'), 'utf8'));
  }, 60_000);
});
