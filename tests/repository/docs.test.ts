/**
 * The documentation cannot drift from the code or from itself:
 *  - docs/operations.md's configuration table lists exactly the variables of server/config.ts's
 *    schema (ENV_VARIABLES), and where .env.example sets a value, the table's default shows it;
 *  - README.md stays a front door: at most 160 lines, and no issue numbers (`#26`, `issue 27`), which
 *    a newcomer cannot open;
 *  - docs/contributing.md's naming rule holds for every router of routers/index.ts: its key is its
 *    file name in camelCase, and it exports `<key>Router`;
 *  - every markdown link in README.md, dashboard/README.md and docs/**.md reaches a file that exists,
 *    and a `#anchor` reaches a heading of that file (GitHub's anchors: lower case, punctuation
 *    dropped, spaces to hyphens, repeats numbered -1, -2…).
 */
import { describe, expect, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ENV_VARIABLES } from '../../server/config.ts';

const ROOT = resolve(import.meta.dir, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** Markdown without its fenced code blocks (headings and links inside them are not real). */
function withoutCode(markdown: string): string {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      out.push('');
      continue;
    }
    out.push(fence === null ? line : '');
  }
  return out.join('\n');
}

/** GitHub's anchor of a heading's text. */
export function anchorOf(heading: string): string {
  const text = heading
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1') // images → their alt text
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // links → their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/ /g, '-');
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let anchors = anchorCache.get(file);
  if (anchors) return anchors;
  anchors = new Set();
  const seen = new Map<string, number>();
  for (const line of withoutCode(readFileSync(file, 'utf8')).split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = anchorOf(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const [, id] of readFileSync(file, 'utf8').matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(id!);
  anchorCache.set(file, anchors);
  return anchors;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** Every link target of a markdown file: inline links and images `[t](target)` and reference definitions. */
function linksOf(markdown: string): string[] {
  const text = withoutCode(markdown).replace(/`[^`\n]*`/g, ''); // inline code is not a link
  const inline = [...text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const references = [...text.matchAll(/^\s*\[[^\]]+\]:\s+(\S+)/gm)].map((m) => m[1]!);
  return [...inline, ...references];
}

/** What is wrong with one link of `file`, or null. */
function brokenLink(file: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // http:, https:, mailto:…
  const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
  const path = decodeURIComponent(pathPart);
  const absolute = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), path);
  if (!absolute.startsWith(ROOT)) return `${target}: outside the repository`;
  if (!existsSync(absolute)) return `${target}: no such file`;
  if (anchor === undefined || anchor === '') return null;
  if (!absolute.endsWith('.md')) return null; // an anchor into code (#L10) is not checked
  if (!anchorsOf(absolute).has(decodeURIComponent(anchor))) return `${target}: no heading #${anchor} in ${relative(ROOT, absolute)}`;
  return null;
}

describe('docs/operations.md, Configuration', () => {
  const operations = read('docs/operations.md');
  const section = operations.slice(operations.indexOf('## Configuration'), operations.indexOf('\n## ', operations.indexOf('## Configuration') + 3));
  const rows = section.split('\n').filter((line) => /^\|\s*`[A-Z]/.test(line));
  const documented = new Map<string, string>(); // variable → its default cell
  for (const row of rows) {
    const [, names, defaults] = row.split('|');
    for (const [, name] of names!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) documented.set(name!, defaults!);
  }

  test('the table lists every variable of the schema', () => {
    expect(rows.length).toBeGreaterThan(0);
    const missing = ENV_VARIABLES.filter((v) => !documented.has(v));
    expect(missing, `variables of server/config.ts missing from docs/operations.md's table: ${missing.join(', ')}`).toEqual([]);
  });

  test('the table lists nothing the schema does not read', () => {
    const unknown = [...documented.keys()].filter((v) => !ENV_VARIABLES.includes(v));
    expect(unknown, `documented in docs/operations.md but not in server/config.ts: ${unknown.join(', ')}`).toEqual([]);
  });

  test("each default the table states is .env.example's", () => {
    const example = Object.fromEntries(
      read('.env.example')
        .split('\n')
        .filter((l) => /^[A-Z_]+=/.test(l))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    const wrong: string[] = [];
    for (const [name, value] of Object.entries(example)) {
      const cell = documented.get(name);
      if (cell === undefined || value === '') continue;
      const shown = new Set([...cell.matchAll(/`([^`]+)`/g)].flatMap((m) => m[1]!.split(/[\s,]+/)));
      if (!value.split(',').every((part) => shown.has(part))) wrong.push(`${name}: .env.example has ${value}, the table says ${cell.trim()}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('README.md is a front door', () => {
  const readme = read('README.md');

  test('at most 160 lines', () => {
    expect(readme.trimEnd().split('\n').length).toBeLessThanOrEqual(160);
  });

  test('names no issue numbers', () => {
    const hits = readme.split('\n').flatMap((line, i) =>
      /(^|[^\w&/])#\d+\b|\bissues?\s*#?\d+\b/i.test(line) ? [`README.md:${i + 1}: ${line.trim()}`] : [],
    );
    expect(hits).toEqual([]);
  });
});

describe("docs/contributing.md, Naming a route", () => {
  test("every router's tRPC key is its file name in camelCase, and it exports <key>Router", () => {
    const index = read('routers/index.ts');
    const fileOf = new Map([...index.matchAll(/import \{ (\w+) \} from '\.\/([\w-]+)\.ts'/g)].map((m) => [m[1]!, m[2]!]));
    const members = [...index.matchAll(/^\s+(\w+): (\w+),$/gm)].map(([, key, name]) => ({ key: key!, name: name!, file: fileOf.get(name!) }));
    expect(members.length).toBeGreaterThan(15); // the rule is checked on every router
    const broken = members
      .filter(({ key, name, file }) => file?.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()) !== key || name !== `${key}Router`)
      .map(({ key, name, file }) => `routers/${file}.ts exports ${name} as ${key}`);
    expect(broken).toEqual([]);
    expect(read('docs/contributing.md')).toContain('The rule, without exception');
  });
});

describe('links', () => {
  const files = ['README.md', 'dashboard/README.md', ...markdownFiles('docs')];

  test('the checker knows GitHub\'s anchors', () => {
    expect(anchorOf('Layout: where a request goes')).toBe('layout-where-a-request-goes');
    expect(anchorOf('8. Venues and chain')).toBe('8-venues-and-chain');
    expect(anchorOf('Every /api response is checked against /openapi.json')).toBe('every-api-response-is-checked-against-openapijson');
    expect(anchorOf("Where `/api/pricing`'s time goes now")).toBe('where-apipricings-time-goes-now');
    expect(anchorOf('Market data over time: history, live streams, webhooks')).toBe('market-data-over-time-history-live-streams-webhooks');
  });

  for (const file of files) {
    test(`every link of ${file} resolves`, () => {
      const broken = linksOf(read(file))
        .map((target) => brokenLink(file, target))
        .filter((problem): problem is string => problem !== null);
      expect(broken).toEqual([]);
    });
  }
});
