/**
 * The embedded database's template (db/pglite-template.ts): there is one for the installed PGlite (an
 * upgrade without `bun db/make-pglite-template.ts` would silently bring back initdb's 8-12 s and
 * ~850 MB at every first start), it restores into an empty directory only, and what it holds is
 * initdb's output: a database that opens, with nothing of ours in it.
 */
import { afterAll, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pgliteVersion, restoreTemplate, TEMPLATE_DIR, templateFileFor } from '../../db/pglite-template.ts';

const dirs: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), 'pglite-template-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

test('a template exists for the installed PGlite, and no other version\'s is kept', () => {
  expect(existsSync(templateFileFor(pgliteVersion()))).toBe(true);
  expect(readdirSync(TEMPLATE_DIR)).toEqual([`pglite-${pgliteVersion()}.tar.gz`]);
});

test('restored into an empty directory it opens as a database with no table of ours; never over one', async () => {
  const dir = scratch();
  expect(restoreTemplate(dir)).toBe(true);
  expect(existsSync(join(dir, 'PG_VERSION'))).toBe(true);
  expect(readdirSync(dir).some((name) => name.startsWith('.template-'))).toBe(false);
  const pg = await PGlite.create({ dataDir: dir });
  try {
    const { rows } = await pg.query<{ n: number }>(`select count(*)::int as n from pg_tables where schemaname not in ('pg_catalog', 'information_schema')`);
    expect(rows[0]!.n).toBe(0);
  } finally {
    await pg.close();
  }
  // A directory that holds a database is left alone.
  writeFileSync(join(dir, 'marker'), 'ours');
  expect(restoreTemplate(dir)).toBe(false);
  expect(existsSync(join(dir, 'marker'))).toBe(true);
});
