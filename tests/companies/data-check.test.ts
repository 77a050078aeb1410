/**
 * `npm run data:check`, run as a process: the shipped dataset passes and its coverage is what the
 * files hold (recounted here); a copy with a schema error, a valuation without its date, a field no
 * source gave and a source that does not exist fails, naming each; a source whose rows differ from
 * its manifest stops the check and the build. The rules beyond the schema (figures dated after their
 * source's snapshot, figures the merge lost, unicorn-list rows the seed does not hold) fail on copies
 * that break them; the merge keeps a losing curated valuation; data/joins.json's entries are checked.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from '../../data/build/build.ts';
import { loadSources, readSource } from '../../data/build/sources.ts';
import { investorSlug } from '../../server/companies/graph.ts';
import { nameForm, namesOf } from '../../server/companies/names.ts';
import { futureFigures, lostFigures, unicornCoverage } from '../../seeds/check-data.ts';

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
    // Every row of every unicorn list (current and former tables) is a company of the seed.
    const built = build();
    const unicornCompanies = new Set([...built.rowsOf].filter(([, ids]) => ids.some((id) => id.startsWith('wikipedia-unicorns-'))).map(([sourceId]) => sourceId));
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
      // As the seed writes the investors table: one per slug of a named investor, and every investor fact.
      investors: new Set(
        [
          ...all.flatMap((r) => [...(r.extra?.keyInvestors ?? []), ...(r.fundingHistory ?? []).flatMap((h: any) => [...(h.investors ?? []), ...(h.leadInvestors ?? [])])]),
          ...JSON.parse(readFileSync(join(ROOT, 'seeds/investors.json'), 'utf8')).map((i: any) => i.name),
        ].map(investorSlug),
      ).size,
      bySource: Object.fromEntries(Object.entries(bySource).sort()),
      unicorns: { listed: unicornCompanies.size, present: unicornCompanies.size },
    });
    // Every company source of data/sources/ contributes.
    for (const id of readdirSync(join(ROOT, 'data/sources'), { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== 'investors').map((d) => d.name)) expect(report.coverage.bySource[id]).toBeGreaterThan(0);
    expect(report.targets.companies).toEqual({ min: 5000, actual: all.length, met: all.length >= 5000 });
  }, 60_000);

  test('a broken copy fails (exit 1), naming the bad row, the undated valuation, the unsourced field and figures, an unknown source and a figure after its snapshot', async () => {
    const all = records();
    const withValuation = all.filter((r) => r.valuationUsd != null && r.referenceUrl && r.provenance?.length);
    const [first, second, fourth, fifth] = withValuation;
    // A YC company whose last round is YC's: dated after YC's snapshot (2026-06-02) it is a violation.
    const sixth = all.find((r) => !r.valuationUsd && r.fundingHistory?.at(-1)?.source === 'yc' && r.provenance?.[0]?.id === 'yc');
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
        { ...sixth, fundingHistory: sixth.fundingHistory.map((h: any, i: number, a: any[]) => (i === a.length - 1 ? { ...h, date: '2026-12' } : h)) },
      ]),
    );
    const { exitCode, stderr, report } = await check(scratch);
    expect(exitCode).toBe(1);
    // Figures without provenance and without a referenceUrl are an invalid row (company-schema.ts).
    expect(report).toMatchObject({ invalidRows: 2, violations: 4 });
    expect(stderr).toContain(`broken.json row 1 (${first.sourceId}): foundedYear`);
    expect(stderr).toContain(`${second.sourceId}: valuationUsd without valuationAsOf`);
    expect(stderr).toContain(`broken.json row 3 (${third.sourceId}): referenceUrl: required with`);
    expect(stderr).toContain(`${sixth.sourceId}: fundingHistory.${sixth.fundingHistory.length - 1} is dated 2026-12, after the snapshot of its source yc (2026-06-02)`);
    expect(stderr).toContain(`${fourth.sourceId}: name without a source`);
    expect(stderr).toContain(`${fifth.sourceId}: provenance names crunchbase-copy, which is not a source of data/sources/`);
  }, 60_000);

  test('a figure dated after the snapshot of its source is a violation (a partial date counts as its first day)', () => {
    const retrieved = new Map([['500-global', '2026-07-16'], ['wikipedia-unicorns-2025-06', '2025-06-19'], ['curated', '2026-11-22']]);
    const provenance = [{ id: '500-global', url: null, asOf: '2026-07-16', fields: ['name', 'fundingHistory'] }];
    const round = (date: string, source = '500-global') => ({ date, roundType: 'Investment (500 Global)', amount: null, valuation: null, pricePerShare: null, investors: ['500 Global'], leadInvestors: [], source });
    const records = [
      { sourceId: 'late-round', name: 'Late', provenance, fundingHistory: [round('2026-12-18')] },
      { sourceId: 'same-month', name: 'Same month', provenance, fundingHistory: [round('2026-07')] },
      { sourceId: 'late-point', name: 'Late point', provenance: [...provenance, { id: 'wikipedia-unicorns-2025-06', url: null, asOf: '2025-06-19', fields: ['valuationHistory'] }], valuationHistory: [{ date: '2025-07', valuationUsd: 2_000_000_000, basis: 'reported', source: 'wikipedia-unicorns-2025-06' }] },
    ] as any[];
    expect(futureFigures(records, retrieved)).toEqual([
      'late-round: fundingHistory.0 is dated 2026-12-18, after the snapshot of its source 500-global (2026-07-16)',
      'late-point: valuationHistory.0 is dated 2025-07, after the snapshot of its source wikipedia-unicorns-2025-06 (2025-06-19)',
    ]);
  });

  test("a curated valuation that a newer figure replaces stays in the history (ByteDance's $330B of 2025-09)", () => {
    const built = build();
    const bytedance = built.records.find((r) => r.sourceId === 'bytedance')!;
    expect(bytedance.valuationAsOf! > '2025-09').toBe(true);
    expect(bytedance.valuationHistory).toContainEqual({ date: '2025-09', valuationUsd: 330_000_000_000, basis: 'reported', source: 'curated' });
    // The rule: nothing a source or a curated record states is lost; a record that drops it fails.
    const sources = loadSources();
    expect(lostFigures(built.records, built, sources)).toEqual([]);
    const dropped = built.records.map((r) => (r === bytedance ? { ...r, valuationHistory: r.valuationHistory!.filter((v) => v.source !== 'curated') } : r));
    // The 2026-05 list states the same figure: it was lost with it.
    expect(lostFigures(dropped, built, sources)).toEqual([
      'bytedance: curated states 330000000000 at 2025-09, which the record lost (neither a round, valuationHistory nor the current valuation)',
      'bytedance: wikipedia-unicorns-2026-05:bytedance states 330000000000 at 2025-09, which the record lost (neither a round, valuationHistory nor the current valuation)',
    ]);
  });

  test('every unicorn-list row is a company known by its name; Ant Group finds Ant Financial; a missing one is a violation', () => {
    const built = build();
    const sources = loadSources();
    expect(unicornCoverage(built.records, built, sources).violations).toEqual([]);
    const ant = built.records.find((r) => r.sourceId === 'ant-financial')!;
    expect(namesOf(ant).map((n) => n.folded)).toContain(nameForm('Ant Group'));
    // Renamed unicorns the lists spell by an older name are one company (data/joins.json).
    const krafton = built.records.find((r) => r.sourceId === 'krafton')!;
    expect(built.rowsOf.get('krafton')).toContain('wikipedia-unicorns-2020-03:bluehole');
    expect(krafton.aliases).toContain('Bluehole');
    const renamed = built.records.map((r) => (r === ant ? { ...r, name: 'Ant', aliases: null } : r));
    const { coverage, violations } = unicornCoverage(renamed, built, sources);
    expect(violations).toEqual(['wikipedia-unicorns-2020-03:ant-financial (Ant Financial) is no company of the seed known by that name (it went to ant-financial, Ant)']);
    expect(coverage.present).toBe(coverage.listed - 1);
  });

  test('investors are named as the investor facts spell them: no record names an alias ("D1 Capital", "Sequoia Capital China")', () => {
    const { records: built, investors } = build();
    const named = new Set(built.flatMap((r) => [...((r.extra?.keyInvestors as string[] | undefined) ?? []), ...(r.fundingHistory ?? []).flatMap((h) => [...(h.investors ?? []), ...(h.leadInvestors ?? [])])]));
    const aliases = investors.flatMap((i) => i.aliases ?? []);
    expect(aliases).toEqual(expect.arrayContaining(['D1 Capital', 'Sequoia Capital China', 'HongShan (Sequoia China)', 'a16z']));
    expect(aliases.filter((a) => named.has(a))).toEqual([]);
    expect(named.has('D1 Capital Partners') && named.has('HongShan')).toBe(true);
  });

  test("data/joins.json: an entry needs one kind and a why; a row two companies share a name with joins neither it is apart from", () => {
    const copy = join(scratch, 'entries/');
    cpSync(join(ROOT, 'data/sources'), join(copy, 'sources'), { recursive: true });
    writeFileSync(join(copy, 'joins.json'), JSON.stringify([{ row: 'yc:stripe', why: 'nothing to say' }]));
    expect(() => build(new URL(`file://${copy}sources/`))).toThrow(/joins\.json: yc:stripe needs exactly one of sameAs, notSameAs, aliases/);
    writeFileSync(join(copy, 'joins.json'), JSON.stringify([{ row: 'yc:no-such-company', aliases: ['X'], why: 'stale' }]));
    expect(() => build(new URL(`file://${copy}sources/`))).toThrow(/joins\.json: yc:no-such-company is no row of its source/);
    // Without its entry the lists' Argo AI joins YC's Argo (argo.la) by the looser name.
    const joins = JSON.parse(readFileSync(join(ROOT, 'data/joins.json'), 'utf8')) as any[];
    writeFileSync(join(copy, 'joins.json'), JSON.stringify(joins.filter((j) => j.row !== 'wikipedia-unicorns-2026-07:argo-ai')));
    expect(build(new URL(`file://${copy}sources/`)).rowsOf.get('argo')).toContain('wikipedia-unicorns-2026-07:argo-ai');
    expect(build().rowsOf.get('argo')).toEqual(['yc:argo']);
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
