/**
 * `bun db/make-pglite-template.ts`: (re)makes db/pglite-template/pglite-<version>.tar.gz for the
 * installed PGlite — initdb's output and nothing else (pglite-template.ts says why and when it is
 * used). Run it after upgrading @electric-sql/pglite, delete the old version's file, commit the new
 * one. Without a template for the installed version a fresh directory runs initdb, as before.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { pgliteVersion, TEMPLATE_DIR, templateFileFor } from './pglite-template.ts';

const version = pgliteVersion();
// In memory: initdb's output as PGlite itself makes it for a new directory, dumped as a tarball.
const pg = await PGlite.create();
const tarball = await pg.dumpDataDir('gzip');
await pg.close();
mkdirSync(TEMPLATE_DIR, { recursive: true });
const file = templateFileFor(version);
await Bun.write(file, tarball);
const others = readdirSync(TEMPLATE_DIR).filter((name) => name.endsWith('.tar.gz') && name !== `pglite-${version}.tar.gz`);
console.log(`wrote ${file.pathname} (${tarball.size} bytes)${others.length ? `; older templates to delete: ${others.join(', ')}` : ''}`);
