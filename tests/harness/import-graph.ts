/**
 * The import graph of the repository's source, read from the text: the scanner (imports with their
 * lines, comments blanked out), relative specifiers resolved to files, the graph and its cycles.
 * tests/repository/layering.test.ts holds the rules over it; scripts can use it too.
 * Not `ts.preProcessFile`: the TypeScript installed here (7, the native compiler) has no JavaScript API.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

export const ROOT = resolve(import.meta.dir, '../..');
const SOURCE = /\.(?:ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'build']);

/** Packages that reach a database, and the repository folder holding the client, schema and migrations. */
const DATABASE_PACKAGES = ['drizzle-orm', 'drizzle-kit', 'postgres', 'pg', '@electric-sql/pglite', 'bun:sqlite'];
const DATABASE_DIR = join(ROOT, 'db');

export interface ImportSite {
  specifier: string;
  line: number;
}

/**
 * The text with every comment replaced by spaces (newlines kept), strings and regular expressions
 * left as they are. A small scanner, not a parser: it knows strings, template literals (with `${}`),
 * comments and regular-expression literals well enough for source code of this repository.
 */
export function blankComments(text: string): string {
  const out = text.split('');
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== '\n') out[k] = ' ';
  };
  const templateDepth: number[] = []; // brace depth at which each open `${` returns to its template
  let braces = 0;
  let lastSignificant = '';
  let i = 0;
  const n = text.length;
  const scanString = (quote: string) => {
    let j = i + 1;
    while (j < n && text[j] !== quote && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
    i = j + 1;
  };
  /** From just after a backtick or a closing `}` of `${…}`: to the closing backtick or the next `${`. */
  const scanTemplate = () => {
    let j = i;
    while (j < n) {
      if (text[j] === '\\') j += 2;
      else if (text[j] === '`') return void (i = j + 1);
      else if (text[j] === '$' && text[j + 1] === '{') {
        templateDepth.push(braces);
        braces++;
        return void (i = j + 2);
      } else j++;
    }
    i = n;
  };
  const regexCanStart = () => lastSignificant === '' || '(,=:[!&|?{};+-*%<>~^'.includes(lastSignificant);
  while (i < n) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === '/' && next === '/') {
      const end = text.indexOf('\n', i);
      blank(i, end === -1 ? n : end);
      i = end === -1 ? n : end;
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      blank(i, end === -1 ? n : end + 2);
      i = end === -1 ? n : end + 2;
    } else if (c === "'" || c === '"') {
      scanString(c);
      lastSignificant = 'a';
    } else if (c === '`') {
      i++;
      scanTemplate();
      lastSignificant = 'a';
    } else if (c === '/' && regexCanStart()) {
      let j = i + 1;
      let inClass = false;
      while (j < n && text[j] !== '\n' && (inClass || text[j] !== '/')) {
        if (text[j] === '\\') j++;
        else if (text[j] === '[') inClass = true;
        else if (text[j] === ']') inClass = false;
        j++;
      }
      i = j + 1;
      lastSignificant = 'a';
    } else {
      if (c === '{') braces++;
      if (c === '}') {
        braces--;
        if (templateDepth.length && templateDepth[templateDepth.length - 1] === braces) {
          templateDepth.pop();
          i++;
          scanTemplate();
          lastSignificant = 'a';
          continue;
        }
      }
      if (!/\s/.test(c)) lastSignificant = /[\w$)\]]/.test(c) ? 'a' : c;
      i++;
    }
  }
  return out.join('');
}

const IMPORT_PATTERNS = [
  /(?<![\w$.])(?:import|export)\s[^'"`;]*?\bfrom\s*(['"])([^'"\n]+)\1/g, // import … from '…', export … from '…'
  /(?<![\w$.])import\s*(['"])([^'"\n]+)\1/g, // import '…' (for its side effects)
  /(?<![\w$.])import\s*\(\s*(['"`])([^'"`\n]+)\1\s*\)/g, // import('…'), typeof import('…')
  /(?<![\w$.])require\s*\(\s*(['"`])([^'"`\n]+)\1\s*\)/g, // require('…'), import x = require('…')
];

const lineAt = (text: string, index: number) => text.slice(0, index).split('\n').length;

/** Every module a source text imports or re-exports, with the line of its specifier. */
export function importsOf(text: string): ImportSite[] {
  const code = blankComments(text);
  const sites: ImportSite[] = [];
  for (const pattern of IMPORT_PATTERNS) {
    for (const match of code.matchAll(pattern)) {
      const specifier = match[2]!;
      sites.push({ specifier, line: lineAt(code, match.index! + match[0].lastIndexOf(specifier)) });
    }
  }
  return sites.sort((a, b) => a.line - b.line);
}

/** Lines that use `_def` (outside comments). */
export function defUsesOf(text: string): number[] {
  const code = blankComments(text);
  return [...code.matchAll(/(?<![\w$])_def(?![\w$])/g)].map((m) => lineAt(code, m.index!));
}

/** The repository's source files under `dir` (relative paths with `/`), generated files left out. */
export function sourceFiles(dir: string): string[] {
  const absolute = join(ROOT, dir);
  if (!existsSync(absolute)) return [];
  const files: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(path);
      } else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) {
        files.push(relative(ROOT, path).split(sep).join('/'));
      }
    }
  };
  walk(absolute);
  return files.sort();
}

export const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const isPackage = (specifier: string, name: string) => specifier === name || specifier.startsWith(name + '/');

export function isDatabaseImport(file: string, specifier: string): boolean {
  if (DATABASE_PACKAGES.some((name) => isPackage(specifier, name))) return true;
  if (!specifier.startsWith('.')) return false;
  const target = resolve(ROOT, dirname(file), specifier);
  return target === DATABASE_DIR || target.startsWith(DATABASE_DIR + sep);
}

/** The subpaths a tRPC package exports on purpose: its package.json `exports`, less those it calls unstable or internal. */
const publicSubpaths = new Map<string, Set<string> | null>();
function exportedSubpaths(pkg: string): Set<string> | null {
  if (!publicSubpaths.has(pkg)) {
    const manifest = join(ROOT, 'node_modules', ...pkg.split('/'), 'package.json');
    const exports = existsSync(manifest) ? JSON.parse(readFileSync(manifest, 'utf8')).exports : undefined;
    publicSubpaths.set(pkg, exports && typeof exports === 'object' ? new Set(Object.keys(exports).filter((k) => k !== './package.json')) : null);
  }
  return publicSubpaths.get(pkg)!;
}

export function isTrpcInternalImport(specifier: string): boolean {
  const match = /^(@trpc\/[^/]+)(\/.*)?$/.exec(specifier);
  if (!match) return false;
  const [, pkg, subpath = ''] = match;
  if (/unstable|internal|(^|\/)(dist|src)(\/|$)/i.test(subpath)) return true;
  const exported = exportedSubpaths(pkg!);
  return exported !== null && !exported.has('.' + subpath);
}

/** `file:line  the line's text`, as a reader wants to find it. */
export function site(file: string, text: string, line: number): string {
  return `${file}:${line}  ${text.split('\n')[line - 1]!.trim()}`;
}

/** The folders whose modules must not import each other in a circle (rule c). */
export const CYCLE_FREE_DIRS = ['server', 'routers', 'db', 'seeds', 'scripts', 'dashboard'];
export const MODULE = /\.(?:ts|tsx)$/;

/**
 * The file a relative specifier names, as the bundler resolution of tsconfig.json finds it: the path
 * itself, with `.ts`/`.tsx` for a `.js`/`.jsx` one or none, or the folder's index. Packages
 * (anything not starting with `.`) and files that are not modules (CSS, JSON, SVG…) give undefined.
 */
export function resolveRelative(file: string, specifier: string, exists: (path: string) => boolean = isFile): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = relative(ROOT, resolve(ROOT, dirname(file), specifier.replace(/[?#].*$/, ''))).split(sep).join('/');
  const stem = base.replace(/\.(?:js|jsx|mjs|cjs)$/, '');
  const candidates = [base, `${stem}.ts`, `${stem}.tsx`, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`, `${base}/index.tsx`];
  return candidates.find((path) => MODULE.test(path) && exists(path));
}
function isFile(path: string): boolean {
  const absolute = join(ROOT, path);
  return existsSync(absolute) && statSync(absolute).isFile();
}

/** Each module of `files` → the modules of `files` it imports (type-only and dynamic imports included), sorted. */
export function importGraph(files: string[], readText: (file: string) => string = read, exists?: (path: string) => boolean): Map<string, string[]> {
  const inGraph = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = importsOf(readText(file))
      .map(({ specifier }) => resolveRelative(file, specifier, exists))
      .filter((target): target is string => target !== undefined && inGraph.has(target));
    graph.set(file, [...new Set(targets)].sort());
  }
  return graph;
}

/**
 * Every elementary cycle of the graph, each as its files in import order, starting from its smallest
 * file name and ending where it started (`a → b → a`). The strongly connected components are found
 * first (Tarjan); the cycles are then enumerated inside each, from each file through larger-named
 * files only, so each cycle is listed once. At most `limit` are listed (a tangle would list thousands).
 */
export function importCycles(graph: Map<string, string[]>, limit = 100): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let counter = 0;
  const connect = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      components.push(component);
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) connect(v);

  const cycles: string[][] = [];
  for (const component of components) {
    const members = new Set(component);
    for (const start of [...component].sort()) {
      const path = [start];
      const onPath = new Set(path);
      const walk = (v: string) => {
        for (const w of graph.get(v) ?? []) {
          if (cycles.length >= limit) return;
          if (w === start) cycles.push([...path, start]);
          else if (members.has(w) && w > start && !onPath.has(w)) {
            path.push(w);
            onPath.add(w);
            walk(w);
            path.pop();
            onPath.delete(w);
          }
        }
      };
      walk(start);
    }
  }
  return cycles.sort((a, b) => a.join().localeCompare(b.join()));
}

