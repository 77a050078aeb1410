/**
 * The layering rules (docs/contributing.md "Layering"), checked on the source text so that
 * `npm test`, and therefore CI, fails on a file that breaks them:
 *  (a) routers/ never imports the database: no driver (postgres, PGlite), no query builder
 *      (drizzle-orm) and no module under db/ (the client, the schema and its tables). A router
 *      validates, calls a domain function in server/<domain>/ and maps its answer to JSON;
 *  (b) tRPC's internals are used nowhere in server/, routers/, dashboard/ and client/: no import of a
 *      path the tRPC packages do not export publicly (`@trpc/server/unstable-core-do-not-import`,
 *      `@trpc/client/unstable-internals`, anything under dist/), and no `_def`, the procedures'
 *      private definition. Only the files in TRPC_INTERNALS_ALLOWED may, so that a tRPC upgrade can
 *      change behaviour in one known place at most;
 *  (c) no import cycle among the modules of server/, routers/, db/, seeds/, scripts/ and dashboard/,
 *      type-only imports included: a cycle means two modules can be understood, tested and moved only
 *      together (and at run time, that one of them sees the other half-initialised);
 *  (d) the five layers, top to bottom: entry points (server/main.ts, server/app.ts, server/commands/,
 *      scripts/, client/, dashboard/) → routers/ → the platform (server/platform/: the request
 *      pipeline and its wiring) → the domains (every other folder of server/, and seeds/) → the
 *      ground (server/lib/, server/errors.ts, server/config.ts, server/handles.ts, db/). A module
 *      imports its own layer or a lower one, never a higher one: a domain knows no platform, the
 *      platform no router. The domains and the ground import no tRPC and no Elysia either: they are
 *      the same whatever the transport;
 *  (e) no import from a lower room to a higher one: the rooms (each folder of server/ and of
 *      server/platform/, each top-level file of server/, and each other top-level folder) import each
 *      other without a circle, so they stand on floors, each above all it imports.
 * Imports are found by regular expressions over the text with its comments blanked out (so examples in
 * comments do not count, and line numbers stay right): tests/harness/import-graph.ts. Generated files
 * are not ours to lint: *.d.ts, and anything under node_modules/, dist/ or build/.
 */
import { describe, expect, test } from 'bun:test';
import {
  CYCLE_FREE_DIRS,
  MODULE,
  defUsesOf,
  importCycles,
  importGraph,
  importsOf,
  isDatabaseImport,
  isTrpcInternalImport,
  read,
  resolveRelative,
  site,
  sourceFiles,
} from '../harness/import-graph.ts';

/**
 * The files allowed to touch tRPC's internals: none. The procedures' own definition
 * (server/platform/procedures/) builds tRPC procedures with tRPC's public builder and lists them from the
 * routers' own records, so nothing needs to.
 */
const TRPC_INTERNALS_ALLOWED: string[] = [];

/** The layers of rule (d), top to bottom, each as the path prefixes of its modules. */
const LAYERS: Array<{ name: string; prefixes: string[] }> = [
  { name: 'entry', prefixes: ['server/main.ts', 'server/app.ts', 'server/commands/', 'scripts/', 'client/', 'dashboard/'] },
  { name: 'routers', prefixes: ['routers/'] },
  { name: 'platform', prefixes: ['server/platform/'] },
  { name: 'domain', prefixes: ['server/', 'seeds/'] },
  { name: 'ground', prefixes: ['server/lib/', 'server/errors.ts', 'server/config.ts', 'server/handles.ts', 'db/'] },
];

/** The layer of a module: the one whose prefix is its longest match (server/lib/ is ground, not a domain). */
export function layerOf(file: string): number {
  let best = { layer: -1, length: -1 };
  LAYERS.forEach(({ prefixes }, layer) => {
    for (const prefix of prefixes) if (file.startsWith(prefix) && prefix.length > best.length) best = { layer, length: prefix.length };
  });
  return best.layer;
}

/** Packages only the layers above the domains may import: the transports. */
const TRANSPORT_PACKAGES = ['@trpc/server', '@trpc/client', 'elysia'];

/** The room of a module for rule (e): a folder (or top-level file) of server/ or server/platform/, else its top-level folder. */
export function roomOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'server' && parts[1] === 'platform' && parts.length > 2) return parts.slice(0, 3).join('/');
  if (parts[0] === 'server' && parts.length > 2) return parts.slice(0, 2).join('/');
  return parts[0] === 'server' ? file : parts[0]!;
}

/** The graph of rooms (`roomOf`), each arrow with the imports that draw it. */
export function roomGraph(graph: Map<string, string[]>): { rooms: Map<string, string[]>; why: Map<string, string[]> } {
  const arrows = new Map<string, Set<string>>();
  const why = new Map<string, string[]>();
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const [from, to] = [roomOf(file), roomOf(target)];
      if (from === to) continue;
      if (!arrows.has(from)) arrows.set(from, new Set());
      arrows.get(from)!.add(to);
      const key = `${from} → ${to}`;
      why.set(key, [...(why.get(key) ?? []), `${file} → ${target}`]);
    }
  }
  return { rooms: new Map([...arrows].map(([room, to]) => [room, [...to].sort()])), why };
}

describe('the scanner', () => {
  test('finds every kind of import with its line, and none in comments', () => {
    const text = [
      "import { a } from './a.ts';",
      'import type {',
      '  B,',
      "} from '../db/schema.ts';",
      "export * from 'drizzle-orm';",
      "import './side-effect.ts';",
      "const lazy = await import('postgres');",
      "// import { x } from 'commented-out';",
      "/* export { y } from 'also-commented'; */",
      "const url = 'http://example.com'; type T = typeof import('@trpc/server/unstable-core-do-not-import');",
      "const re = /['\"]/; import { z } from 'zod';",
      'const s = `${`nested ${1}`}`; const { _def } = procedure;',
    ].join('\n');
    expect(importsOf(text)).toEqual([
      { specifier: './a.ts', line: 1 },
      { specifier: '../db/schema.ts', line: 4 },
      { specifier: 'drizzle-orm', line: 5 },
      { specifier: './side-effect.ts', line: 6 },
      { specifier: 'postgres', line: 7 },
      { specifier: '@trpc/server/unstable-core-do-not-import', line: 10 },
      { specifier: 'zod', line: 11 },
    ]);
    expect(defUsesOf(text)).toEqual([12]);
    expect(defUsesOf('// procedure._def is private\n/** `_def.inputs` */\nconst x = p._def;')).toEqual([3]);
  });

  test('classifies database and tRPC-internal imports', () => {
    expect(isDatabaseImport('routers/a.ts', '../db/client.ts')).toBe(true);
    expect(isDatabaseImport('routers/a.ts', '../db/tables/positions.ts')).toBe(true);
    expect(isDatabaseImport('routers/a.ts', 'drizzle-orm/pg-core')).toBe(true);
    expect(isDatabaseImport('routers/a.ts', '@electric-sql/pglite')).toBe(true);
    expect(isDatabaseImport('routers/a.ts', '../server/trading/queries.ts')).toBe(false);
    expect(isDatabaseImport('routers/a.ts', 'postgres-range')).toBe(false);
    expect(isTrpcInternalImport('@trpc/server/unstable-core-do-not-import')).toBe(true);
    expect(isTrpcInternalImport('@trpc/client/unstable-internals')).toBe(true);
    expect(isTrpcInternalImport('@trpc/server/dist/unstable-core-do-not-import.mjs')).toBe(true);
    expect(isTrpcInternalImport('@trpc/server')).toBe(false);
    expect(isTrpcInternalImport('@trpc/server/adapters/fetch')).toBe(false);
    expect(isTrpcInternalImport('@trpc/server/rpc')).toBe(false);
    expect(isTrpcInternalImport('@trpc/client')).toBe(false);
  });

  test('resolves relative imports to files and finds every cycle, type-only imports included', () => {
    const texts: Record<string, string> = {
      'server/a.ts': "import type { B } from './b.ts';\nimport { x } from 'zod';",
      'server/b.ts': "export { c } from './c/index.ts';\nimport './styles.css';",
      'server/c/index.ts': "const a = await import('../a.js');\nimport { d } from './d';",
      'server/c/d.tsx': "import { c } from '.';\n// import { e } from '../e.ts';",
      'server/e.ts': "import type { A } from './a.ts';",
    };
    const exists = (path: string) => path in texts;
    expect(resolveRelative('server/c/index.ts', '../a.js', exists)).toBe('server/a.ts');
    expect(resolveRelative('server/c/index.ts', './d', exists)).toBe('server/c/d.tsx');
    expect(resolveRelative('server/c/d.tsx', '.', exists)).toBe('server/c/index.ts');
    expect(resolveRelative('server/b.ts', './styles.css', exists)).toBeUndefined();
    expect(resolveRelative('server/a.ts', 'zod', exists)).toBeUndefined();
    const graph = importGraph(Object.keys(texts), (file) => texts[file]!, exists);
    expect(graph.get('server/c/d.tsx')).toEqual(['server/c/index.ts']); // the commented import does not count
    expect(importCycles(graph)).toEqual([
      ['server/a.ts', 'server/b.ts', 'server/c/index.ts', 'server/a.ts'],
      ['server/c/d.tsx', 'server/c/index.ts', 'server/c/d.tsx'],
    ]);
    expect(importCycles(new Map([['x.ts', ['x.ts']], ['y.ts', []]]))).toEqual([['x.ts', 'x.ts']]);
  });
});

describe('layers and rooms', () => {
  test('place each module in its layer and room', () => {
    const name = (file: string) => LAYERS[layerOf(file)]?.name;
    expect(['server/main.ts', 'server/commands/cli.ts', 'dashboard/App.tsx', 'routers/keys.ts'].map(name)).toEqual(['entry', 'entry', 'entry', 'routers']);
    expect(['server/platform/app.ts', 'server/trading/buy.ts', 'seeds/index.ts', 'server/lib/ids.ts', 'server/errors.ts', 'db/client.ts'].map(name)).toEqual(['platform', 'domain', 'domain', 'ground', 'ground', 'ground']);
    expect(['server/platform/http/cors.ts', 'server/platform/app.ts', 'server/trading/buy.ts', 'server/main.ts', 'routers/keys.ts'].map(roomOf)).toEqual(['server/platform/http', 'server/platform/app.ts', 'server/trading', 'server/main.ts', 'routers']);
    // Two rooms importing each other through different files are a circle, though no file cycle is.
    const { rooms, why } = roomGraph(new Map([['server/a/x.ts', ['server/b/y.ts']], ['server/b/z.ts', ['server/a/w.ts']], ['server/a/w.ts', []], ['server/b/y.ts', []]]));
    expect(importCycles(rooms)).toEqual([['server/a', 'server/b', 'server/a']]);
    expect(why.get('server/b → server/a')).toEqual(['server/b/z.ts → server/a/w.ts']);
  });
});

describe('layering', () => {
  test('(a) no file in routers/ imports the database', () => {
    const files = sourceFiles('routers');
    expect(files.length).toBeGreaterThan(10); // the rule checks something
    const violations = files.flatMap((file) => {
      const text = read(file);
      return importsOf(text)
        .filter(({ specifier }) => isDatabaseImport(file, specifier))
        .map(({ line }) => site(file, text, line));
    });
    expect(violations).toEqual([]);
  });

  test(`(b) tRPC internals are used nowhere${TRPC_INTERNALS_ALLOWED.length ? ` but ${TRPC_INTERNALS_ALLOWED.join(', ')}` : ''}`, () => {
    const files = ['server', 'routers', 'dashboard', 'client'].flatMap(sourceFiles);
    expect(files.length).toBeGreaterThan(100);
    const allowed = new Set(TRPC_INTERNALS_ALLOWED);
    const violations = files
      .filter((file) => !allowed.has(file))
      .flatMap((file) => {
        const text = read(file);
        const internal = importsOf(text).filter(({ specifier }) => isTrpcInternalImport(specifier)).map(({ line }) => line);
        return [...new Set([...internal, ...defUsesOf(text)])].sort((a, b) => a - b).map((line) => site(file, text, line));
      });
    expect(violations).toEqual([]);
  });

  test('(c) no import cycle in server/, routers/, db/, seeds/, scripts/, dashboard/ (type-only imports included)', () => {
    const files = CYCLE_FREE_DIRS.flatMap(sourceFiles).filter((file) => MODULE.test(file));
    expect(files.length).toBeGreaterThan(200);
    const graph = importGraph(files);
    expect([...graph.values()].flat().length).toBeGreaterThan(files.length); // the graph has its edges
    // Each cycle as `a.ts → b.ts → a.ts`: break it by moving the shared type or function to a module
    // both can import, or by passing in what the lower module needs (docs/contributing.md "Layering").
    expect(importCycles(graph).map((cycle) => cycle.join(' → '))).toEqual([]);
  });

  const layeredFiles = () => [...CYCLE_FREE_DIRS, 'client'].flatMap(sourceFiles).filter((file) => MODULE.test(file));

  test('(d) no module imports a higher layer; the domains and the ground import no transport', () => {
    const files = layeredFiles();
    expect(files.filter((file) => layerOf(file) < 0)).toEqual([]); // every module has its layer
    const upward = [...importGraph(files)].flatMap(([file, targets]) =>
      targets.filter((target) => layerOf(target) < layerOf(file)).map((target) => `${file} (${LAYERS[layerOf(file)]!.name}) → ${target} (${LAYERS[layerOf(target)]!.name})`),
    );
    expect(upward).toEqual([]);
    const transport = files
      .filter((file) => layerOf(file) >= LAYERS.findIndex((layer) => layer.name === 'domain'))
      .flatMap((file) => {
        const text = read(file);
        return importsOf(text)
          .filter(({ specifier }) => TRANSPORT_PACKAGES.some((name) => specifier === name || specifier.startsWith(name + '/')))
          .map(({ line }) => site(file, text, line));
      });
    expect(transport).toEqual([]);
  });

  test('(e) no room imports a room above it: the rooms stand on floors', () => {
    const { rooms, why } = roomGraph(importGraph(layeredFiles()));
    expect(rooms.size).toBeGreaterThan(20);
    // Each circle of rooms with the imports that close it: move the shared part down, or pass it in.
    const circles = importCycles(rooms).map((cycle) =>
      [cycle.join(' → '), ...cycle.slice(1).map((to, i) => `  ${cycle[i]} → ${to}: ${why.get(`${cycle[i]} → ${to}`)!.join(', ')}`)].join('\n'),
    );
    expect(circles).toEqual([]);
  });
});
