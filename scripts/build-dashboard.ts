/**
 * Builds the customer dashboard: dashboard/main.tsx → dashboard/dist/
 *   index.html              the page (no inline script or style: the CSP of /dashboard forbids them)
 *   assets/main-<hash>.js   the app (ES module, minified), plus any split chunks
 *   assets/main-<hash>.css  the styles
 *   assets/*.gz             each of them gzipped, for browsers that accept it
 * Asset names carry content hashes, so the server may cache them for a year. Prints the gzipped
 * size of the JavaScript and fails above the budget (300 KB).
 *
 *   bun scripts/build-dashboard.ts
 */
import { mkdir, rm } from 'node:fs/promises';
import { basename, join, normalize } from 'node:path';

const ROOT = normalize(join(import.meta.dir, '..'));
const SOURCE = join(ROOT, 'dashboard');
const DIST = join(SOURCE, 'dist');
const ASSETS = join(DIST, 'assets');
const PUBLIC_PATH = '/dashboard/assets/';
const JS_BUDGET_BYTES = 300 * 1024;

await rm(DIST, { recursive: true, force: true });
await mkdir(ASSETS, { recursive: true });

const result = await Bun.build({
  entrypoints: [join(SOURCE, 'main.tsx')],
  outdir: ASSETS,
  target: 'browser',
  format: 'esm',
  splitting: false,
  minify: true,
  sourcemap: 'none',
  publicPath: PUBLIC_PATH,
  naming: { entry: '[name]-[hash].[ext]', chunk: '[name]-[hash].[ext]', asset: '[name]-[hash].[ext]' },
  define: { 'process.env.NODE_ENV': JSON.stringify('production') },
  throw: false,
});

if (!result.success) {
  for (const log of result.logs) console.error(log);
  console.error('dashboard build failed');
  process.exit(1);
}

const entry = result.outputs.find((o) => o.kind === 'entry-point' && o.path.endsWith('.js'));
const styles = result.outputs.filter((o) => o.path.endsWith('.css'));
if (!entry) {
  console.error('dashboard build produced no JavaScript entry point');
  process.exit(1);
}

// Every JavaScript output counts against the budget (the entry and any chunk it may load).
let jsRaw = 0;
let jsGzip = 0;
for (const output of result.outputs.filter((o) => o.path.endsWith('.js'))) {
  const bytes = new Uint8Array(await output.arrayBuffer());
  // The browser bundle must not reach for Node: a leftover `require("node:…")` would fail at run time.
  const text = new TextDecoder().decode(bytes);
  const nodeBuiltin = /\b(?:require|import)\s*\(\s*["'](?:node:[a-z_/]+|fs|path|crypto|stream|buffer|os|util|child_process)["']\s*\)/.exec(text);
  if (nodeBuiltin) {
    console.error(`${basename(output.path)} references a Node built-in (${nodeBuiltin[0]}): not loadable in a browser`);
    process.exit(1);
  }
  jsRaw += bytes.byteLength;
  jsGzip += Bun.gzipSync(bytes, { level: 9 }).byteLength;
}
let cssRaw = 0;
for (const output of styles) cssRaw += output.size;
// Precompressed beside each asset: the server sends the .gz to browsers that accept gzip (a third of the bytes).
for (const output of result.outputs.filter((o) => /\.(js|css)$/.test(o.path))) {
  await Bun.write(`${output.path}.gz`, Bun.gzipSync(new Uint8Array(await output.arrayBuffer()), { level: 9 }));
}

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
const href = (path: string) => escape(PUBLIC_PATH + basename(path));
const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
<title>Dashboard · Pre-IPO API</title>
${styles.map((s) => `<link rel="stylesheet" href="${href(s.path)}">`).join('\n')}
<script type="module" src="${href(entry.path)}"></script>
</head>
<body>
<noscript><p>The dashboard needs JavaScript. The API itself is documented at <a href="/docs">/docs</a>.</p></noscript>
<div id="root"></div>
</body>
</html>
`;
await Bun.write(join(DIST, 'index.html'), html);

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
for (const output of result.outputs) console.log(`  ${normalize(output.path).slice(ROOT.length + 1)}  ${kb(output.size)}`);
console.log(`  dashboard/dist/index.html`);
console.log(`JavaScript: ${kb(jsRaw)} minified, ${kb(jsGzip)} gzipped (budget ${kb(JS_BUDGET_BYTES)}); CSS: ${kb(cssRaw)}`);
if (jsGzip > JS_BUDGET_BYTES) {
  console.error(`the dashboard's JavaScript is over budget: ${kb(jsGzip)} gzipped > ${kb(JS_BUDGET_BYTES)}`);
  process.exit(1);
}
