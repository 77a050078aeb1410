/**
 * `npm run bench:companies` — not a test. Loads N synthetic companies (default 1,000,000), their
 * search names, one funding round each and 20,000 investors into a scratch PostgreSQL database, then
 * measures p50/p99 latency of private-company, funding-round and investor requests through the real
 * request path (app.handle: auth, billing, query, JSON), one client at a time.
 *
 *   BENCH_DATABASE_URL  admin connection (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_COMPANIES     rows to generate (default 1000000)
 *   BENCH_REQUESTS      requests per case (default 200)
 *   BENCH_REUSE=1       keep an already loaded bench database of the same size (migrations still apply)
 */
import { asc, desc, eq } from 'drizzle-orm';
import postgres from 'postgres';
import { companies, investors } from '../../db/schema.ts';
import { openDatabase } from '../../db/client.ts';
import { createApp } from '../../server/app.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/lib/logger.ts';
import { MemoryRateLimiter } from '../../server/platform/ratelimit/rate-limiter.ts';
import { createServices } from '../../server/platform/services.ts';
import { creditAccount, ensureAccount } from '../../server/accounts/accounts.ts';
import { createApiKey } from '../../server/accounts/api-keys.ts';

const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const rows = Number(process.env.BENCH_COMPANIES ?? 1_000_000);
const requests = Number(process.env.BENCH_REQUESTS ?? 200);
const dbName = 'pipo_bench_companies';

const benchUrl = (() => {
  const u = new URL(adminUrl);
  u.pathname = `/${dbName}`;
  return u.toString();
})();

async function loadedRows(): Promise<number> {
  const sql = postgres(benchUrl, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    const [row] = await sql`select count(*)::int as n from companies`;
    return row?.n ?? 0;
  } catch {
    return 0;
  } finally {
    await sql.end();
  }
}

/**
 * Search reads company_names (what the import writes: server/companies/graph.ts, names.ts). The
 * synthetic names are ASCII, so lower() is their folded form, and each registered name is the name
 * plus a legal form, which the import does not store again.
 */
const NAMES_SQL = `INSERT INTO company_names (company_id, folded, kind) SELECT id, lower(name), 0 FROM companies`;

/**
 * Rounds and investors (what the import derives from the records' funding histories, graph.ts),
 * synthetic like the companies: 20,000 investors whose pick follows a power law (a few appear in many
 * rounds, most in few), one round per company with a lead and a second investor, the portfolio links
 * those rounds make, and each investor's portfolio count.
 */
const INVESTORS = 20_000;
const GRAPH_SQL = [
  `INSERT INTO investors (slug, name, type, country)
   SELECT 'synthetic-investor-' || j,
     initcap((ARRAY['ka','lo','mi','ve','ra','zen','tor','qua','nex','lu','bri','sol','dex','ori','fy','tal','mar','co','vi','xa'])[1 + abs(hashint4(j * 53)) % 20]
          || (ARRAY['ra','lin','to','ve','mi','ca','dor','sen','lex','pa','qui','ron','zo','tes','na','vi','gol','ber','li','su'])[1 + abs(hashint4(j * 59)) % 20])
       || ' ' || (ARRAY['Capital','Ventures','Partners','Fund','Investments','Holdings'])[1 + abs(hashint4(j * 61)) % 6] || ' ' || j,
     (ARRAY['vc','vc','vc','corporate','angel','pe','accelerator','government'])[1 + abs(hashint4(j * 67)) % 8],
     (ARRAY['United States','United States','United Kingdom','Germany','France','Singapore','India','Israel','Canada','Japan'])[1 + abs(hashint4(j * 71)) % 10]
   FROM generate_series(1, ${INVESTORS}) AS j`,
  `INSERT INTO funding_rounds (id, company_id, date, date_key, round_type, round_type_key, amount_usd, post_money_valuation_usd,
     lead_investors, investors, investor_ids, source, industry_key, country_key)
   SELECT c.source_id || ':' || r.date || ':' || lower(replace(r.round_type, ' ', '-')), c.id, r.date, rpad(r.date, 10, ' '), r.round_type, lower(r.round_type),
     r.amount, c.valuation_usd, jsonb_build_array(lead.name), jsonb_build_array(other.name), ARRAY[least(lead.id, other.id), greatest(lead.id, other.id)],
     '{"id": "synthetic", "url": null, "asOf": "2026-01-01"}'::jsonb, c.industry_key, c.country_key
   FROM companies c
   CROSS JOIN LATERAL (SELECT
       (2012 + abs(hashint4(c.id * 73)) % 15)::text || '-' || lpad((1 + abs(hashint4(c.id * 79)) % 12)::text, 2, '0')
         || CASE WHEN abs(hashint4(c.id * 83)) % 10 = 0 THEN '' ELSE '-' || lpad((1 + abs(hashint4(c.id * 89)) % 28)::text, 2, '0') END AS date,
       (ARRAY['Seed','Series A','Series B','Series C','Series D','Growth'])[1 + abs(hashint4(c.id * 97)) % 6] AS round_type,
       CASE WHEN abs(hashint4(c.id * 101)) % 10 = 0 THEN NULL ELSE (10 ^ (5 + (abs(hashint4(c.id * 103)) % 500000) / 100000.0))::bigint END AS amount,
       -- Power law: u³ of a uniform u puts most picks on the first investors.
       1 + floor(${INVESTORS - 1} * power((abs(hashint4(c.id * 107)) % 1000000) / 1000000.0, 3))::int AS lead_n,
       1 + floor(${INVESTORS - 1} * power((abs(hashint4(c.id * 109)) % 1000000) / 1000000.0, 2))::int AS other_n) r
   JOIN investors lead ON lead.slug = 'synthetic-investor-' || r.lead_n
   JOIN investors other ON other.slug = 'synthetic-investor-' || (CASE WHEN r.other_n = r.lead_n THEN r.lead_n % ${INVESTORS} + 1 ELSE r.other_n END)`,
  `INSERT INTO company_investors (investor_id, company_id, first_date, led)
   SELECT i.id, f.company_id, (array_agg(f.date ORDER BY f.date_key))[1], bool_or(f.lead_investors ? i.name)
   FROM funding_rounds f CROSS JOIN LATERAL unnest(f.investor_ids) AS inv(id) JOIN investors i ON i.id = inv.id
   GROUP BY i.id, f.company_id`,
  `UPDATE investors SET portfolio_count = c.n FROM (SELECT investor_id, count(*)::int AS n FROM company_investors GROUP BY investor_id) c WHERE c.investor_id = investors.id`,
  'VACUUM ANALYZE investors',
  'VACUUM ANALYZE funding_rounds',
  'VACUUM ANALYZE company_investors',
];

async function prepare() {
  if (process.env.BENCH_REUSE === '1' && (await loadedRows()) === rows) {
    const started = performance.now();
    const database = await openDatabase({ kind: 'postgres', url: benchUrl, poolSize: 10 });
    await database.migrate();
    const sql = postgres(benchUrl, { max: 1, onnotice: () => {} });
    // A database loaded before company_names existed gets its names now (as the load below writes them).
    const [named] = await sql`select count(*)::int as n from company_names`;
    if (!named?.n) await sql.unsafe(NAMES_SQL);
    // A database loaded before the rounds and investors were part of the bench gets them now.
    const [rounds] = await sql`select count(*)::int as n from funding_rounds`;
    if (!rounds?.n) {
      const graphStarted = performance.now();
      for (const statement of GRAPH_SQL) await sql.unsafe(statement);
      console.log(`loaded rounds and investors in ${((performance.now() - graphStarted) / 1000).toFixed(1)} s`);
    }
    await sql.unsafe('VACUUM ANALYZE companies');
    await sql.unsafe('VACUUM ANALYZE company_names');
    await sql.end();
    console.log(`reusing ${rows.toLocaleString()} loaded companies (migrated in ${((performance.now() - started) / 1000).toFixed(1)} s)`);
    return { database, loadSeconds: 0 };
  }
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.unsafe(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const database = await openDatabase({ kind: 'postgres', url: benchUrl, poolSize: 10 });
  await database.migrate();
  const sql = postgres(benchUrl, { max: 1, onnotice: () => {} });
  const started = performance.now();
  // Deterministic pseudo-random values from hashint4 so every run loads the same data.
  await sql.unsafe(`
    INSERT INTO companies (source_id, name, registered_name, industry, headquarters_city, headquarters_country, backing_type,
      founded_year, employees, valuation_usd, total_funding_usd, valuation_as_of, extra, funding_history)
    SELECT 'synthetic-' || i,
      stem || ' ' || w2,
      stem || ' ' || w2 || ' ' || (ARRAY['Inc.','Ltd','GmbH','SAS','Pte. Ltd.','Corp.'])[1 + abs(hashint4(i * 41)) % 6],
      (ARRAY['Artificial Intelligence','Enterprise Software','Cybersecurity','Developer Tools','Semiconductors & Hardware',
             'Cloud & Data Infrastructure','Fintech','Crypto & Blockchain','Consumer Internet','E-commerce & Retail','Gaming & Media',
             'Aerospace & Defense','Space','Biotech & Healthcare','Mobility & Transportation','Energy & Climate','Robotics','Logistics',
             'Real Estate & Proptech','Health & Fitness','Education'])[1 + abs(hashint4(i * 3)) % 21],
      (ARRAY['San Francisco','New York','London','Berlin','Paris','Singapore','Bangalore','Tel Aviv','Toronto','Sydney'])[1 + abs(hashint4(i * 5)) % 10],
      (ARRAY['United States','United States','United States','United Kingdom','Germany','France','Singapore','India','Israel','Canada','Australia','Brazil'])[1 + abs(hashint4(i * 7)) % 12],
      (ARRAY['Venture Capital','Venture Capital','Venture Capital','Private Equity','Corporate','Founder-owned'])[1 + abs(hashint4(i * 11)) % 6],
      1950 + abs(hashint4(i * 13)) % 76,
      CASE WHEN abs(hashint4(i * 17)) % 4 = 0 THEN NULL ELSE 1 + abs(hashint4(i * 19)) % 50000 END,
      CASE WHEN abs(hashint4(i * 23)) % 5 = 0 THEN NULL ELSE (10 ^ (6 + (abs(hashint4(i * 29)) % 600000) / 100000.0))::bigint END,
      CASE WHEN abs(hashint4(i * 31)) % 3 = 0 THEN NULL ELSE (10 ^ (5 + (abs(hashint4(i * 37)) % 550000) / 100000.0))::bigint END,
      '2026-01-01',
      '{"keyInvestors": ["Synthetic Capital"]}'::jsonb,
      '[]'::jsonb
    FROM (
      -- Names like real ones: a three-syllable stem (64,000 stems) and a sector word, so trigrams are
      -- spread as in real company names instead of repeating a few words a million times.
      SELECT i,
        initcap((ARRAY['ka','lo','mi','ve','ra','zen','tor','qua','nex','lu','bri','sol','dex','ori','fy','tal','mar','co','vi','xa',
                       'pel','gra','don','sy','ne','ul','tri','bel','or','is','an','ku','ro','fen','del','ax','mo','pri','sta','el'])[1 + abs(hashint4(i)) % 40]
             || (ARRAY['ra','lin','to','ve','mi','ca','dor','sen','lex','pa','qui','ron','zo','tes','na','vi','gol','ber','li','su',
                       'tra','kon','ma','fi','de','ix','pho','lum','cy','ga','ter','no','vel','ar','ru','sto','mey','ka','gen','lo'])[1 + abs(hashint4(i * 43)) % 40]
             || (ARRAY['n','x','s','ia','on','ly','ta','um','io','ex','ar','is','a','o','ic','al','ra','ne','us','ix',
                       'tt','ro','va','en','or','ax','li','ca','el','ma','do','sa','ze','bi','ko','te','mo','ri','ga','yo'])[1 + abs(hashint4(i * 47)) % 40]) AS stem,
        (ARRAY['Labs','Systems','Robotics','Health','Energy','Dynamics','Networks','Bio','Pay','Cloud','Analytics','Motors','Works','AI','Security'])[1 + abs(hashint4(i * 2)) % 15] AS w2
      FROM generate_series(1, ${rows}) AS i
    ) g`);
  await sql.unsafe(NAMES_SQL);
  await sql.unsafe('VACUUM ANALYZE companies');
  await sql.unsafe('VACUUM ANALYZE company_names');
  for (const statement of GRAPH_SQL) await sql.unsafe(statement);
  const loadSeconds = (performance.now() - started) / 1000;
  await sql.end();
  return { database, loadSeconds };
}

function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const { database, loadSeconds } = await prepare();
if (loadSeconds) console.log(`loaded ${rows.toLocaleString()} companies, their names, rounds and investors in ${loadSeconds.toFixed(1)} s`);

const config = loadConfig({ LOG_LEVEL: 'silent', NODE_ENV: 'production', TRADING_ENCRYPTION_KEY: 'b'.repeat(64), RATE_LIMIT_KEY_RPS: '1000000', RATE_LIMIT_KEY_BURST: '1000000' });
const services = createServices({ config, database, rateLimiter: new MemoryRateLimiter(), logger: createLogger('silent') });
const app = createApp(services);
await ensureAccount(database.db, 'bench');
await creditAccount(database.db, { accountId: 'bench', amountMicros: 1_000_000_000_000, reference: 'bench' });
const key = (await createApiKey(database.db, { accountId: 'bench', name: 'bench' })).key;

// Search queries taken from the data: a real name's first word, and a real stem with a typo.
const [sample] = await database.db.select({ name: companies.name }).from(companies).where(eq(companies.id, Math.ceil(rows / 3)));
const stem = sample!.name.split(' ')[0]!;
const typo = stem.slice(0, 2) + stem.slice(3); // one letter dropped
// The investor in the most rounds (one round per company, so its portfolio count is its rounds): the
// investor filter's largest answer.
const [busiest] = await database.db
  .select({ id: investors.id, rounds: investors.portfolioCount })
  .from(investors)
  .orderBy(desc(investors.portfolioCount), asc(investors.id))
  .limit(1);
const cases: Array<[string, (i: number) => string]> = [
  ['filtered list (industry + country + valuation range)', (i) => `/api/private-companies?industry=Fintech&country=Germany&minValuation=${1e8 + i}&maxValuation=1000000000000`],
  ['filtered list, sorted by valuation desc', () => '/api/private-companies?industry=Robotics&sort=-valuationUsd'],
  ['unfiltered list, first page', () => '/api/private-companies'],
  ['deep offset page (offset 500,000)', (i) => `/api/private-companies?offset=${500_000 + i}`],
  [`search, a name ("${stem}")`, () => `/api/private-companies/search?q=${encodeURIComponent(stem)}`],
  [`search, close spelling ("${typo}")`, () => `/api/private-companies/search?q=${encodeURIComponent(typo)}`],
  ['company by id', (i) => `/api/private-companies/${1 + ((i * 7919) % rows)}`],
  ['stats', () => '/api/private-companies/stats'],
  ['industries', () => '/api/private-companies/industries'],
  ['funding rounds, filtered (industry, newest first)', () => '/api/funding-rounds?industry=Fintech'],
  ['funding rounds, filtered (round type + date range + min amount)', (i) => `/api/funding-rounds?roundType=Series%20B&from=2020-01-01&to=2023-12-31&minAmount=${1e6 + i}`],
  [`funding rounds of the busiest investor (${busiest!.rounds.toLocaleString()} rounds)`, () => `/api/funding-rounds?investor=${busiest!.id}`],
  ['investors, first page (most portfolio companies)', () => '/api/investors'],
  ['investors, by name containing "capital"', () => '/api/investors?q=capital'],
];

const results: Array<{ name: string; p50: number; p99: number; max: number }> = [];
for (const [name, path] of cases) {
  const count = name === 'stats' || name.startsWith('industries') ? Math.min(requests, 50) : requests;
  for (let i = 0; i < 5; i++) await app.handle(new Request(`http://localhost${path(i)}`, { headers: { 'x-api-key': key } }));
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const res = await app.handle(new Request(`http://localhost${path(i)}`, { headers: { 'x-api-key': key } }));
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${name}: HTTP ${res.status}`);
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  results.push({ name, p50: percentile(samples, 50), p99: percentile(samples, 99), max: samples.at(-1)! });
}

console.log(`\n| case (${rows.toLocaleString()} companies, PostgreSQL, ${requests} sequential requests) | p50 ms | p99 ms | max ms |`);
console.log('|---|---|---|---|');
for (const r of results) console.log(`| ${r.name} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.max.toFixed(1)} |`);
await database.close();
