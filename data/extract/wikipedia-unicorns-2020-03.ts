/**
 * wikipedia-unicorns-2020-03: Wikipedia "List of unicorn startup companies" (the list table only) as of March
 * 2020, from github:prayagd/unicorn-startups-list src/unicorndata.json. The scrape kept four cells per row
 * (company, valuation in US$ billions, valuation date with its footnote markers, country with the flag's
 * non-breaking space): the page's footnote markers ("[17]", "[citation needed]"), its lower bounds ("1+",
 * "2.8+") and its "US / Romania" country cells show it is a copy of the Wikipedia table, not of another list.
 * The page had no industry column read here and no former-unicorn table in this copy, so rows carry name,
 * aliases, country and one dated 'reported' valuation (none for "1+"-style lower bounds or "2.0-").
 *
 * The file was added on 2020-03-19 (e0489d8, "json data added", as pandas columns) and reshaped into rows
 * on 2020-03-21 (e3c9550); the cells are the same, so the snapshot date is the first commit's.
 *
 * Helpers for cell-array snapshots of the list live here (`extractWikipediaListRows`); older snapshot
 * scripts import them.
 *
 *   bun data/extract/wikipedia-unicorns-2020-03.ts
 */
import type { SourceRow, SourceValuation } from '../build/source-row.ts';
import {
  type Mirror,
  WIKIPEDIA_LICENCE,
  WIKIPEDIA_UNICORNS_URL,
  billionsToUsd,
  dedupeAliases,
  gitShow,
  mergeRepeatedRows,
  parseHumanDate,
  singleCountry,
  slug,
  splitParenthetical,
  stripCorporateSuffix,
  stripFootnotes,
  summarise,
  uniqueKeys,
  viaRef,
  wikipediaIndustry,
  writeSource,
} from './common.ts';

/** One table row as the upstream scrape kept it (raw cells, footnotes and all). */
export interface ListCells {
  name: string;
  valuation: string;
  valuationDate: string;
  country: string;
  industry?: string;
}

export interface ListSnapshot {
  id: string;
  mirror: Mirror;
  paths: string[];
  /** The date the page snapshot holds for (YYYY-MM-DD). */
  retrieved: string;
  priority: number;
  script: string;
  /** Which table(s) the copy holds, for the source name: "list table". */
  tables: string;
  /** Reads the pinned file(s) into rows of cells. */
  read: (mirror: Mirror) => ListCells[];
}

/** Parentheticals that are disambiguation or prose, not another name of the company. */
const NOT_AN_ALIAS = /^(company|startup|merge of\b|merger of\b|subsidiary of\b|part of\b|owned by\b)/i;

/** "July, 2018" → "July 2018" (a comma the shared date parser does not take), then the shared parser. */
export function listDate(s: string): string | null {
  const t = stripFootnotes(s);
  if (!t) return null;
  return parseHumanDate(t.replace(/^([A-Za-z]+)\.?,\s+(\d{4})$/, '$1 $2'));
}

interface Parsed {
  index: number;
  name: string;
  aliases: string[];
  country: string | null;
  industry: SourceRow['industry'];
  valuations: SourceValuation[];
}

/** Reads one list-table snapshot, writes data/sources/<id>/, prints coverage and spot checks. */
export function extractWikipediaListRows(cfg: ListSnapshot): void {
  const notes: Record<string, number> = {
    rows: 0,
    valuationLowerBoundOrRange: 0,
    valuationUnparsed: 0,
    valuationDateUnparsed: 0,
    multiCountry: 0,
    countryUnreadable: 0,
    industryUnmapped: 0,
    aliasDropped: 0,
    mergedDuplicateRows: 0,
  };
  const unmapped = new Map<string, number>();
  const parsed: Parsed[] = [];
  cfg.read(cfg.mirror).forEach((cells, index) => {
    const rawName = stripFootnotes(cells.name);
    if (!rawName) return;
    notes.rows!++;
    const paren = splitParenthetical(rawName);
    let alias = paren.alias;
    if (alias && NOT_AN_ALIAS.test(alias)) {
      notes.aliasDropped!++;
      alias = null;
    }
    const name = stripCorporateSuffix(paren.name) || paren.name;
    const aliases = dedupeAliases(name, [alias, name !== paren.name ? paren.name : null]);

    const c = singleCountry(cells.country);
    if (c.multi) notes.multiCountry!++;
    else if (!c.country && stripFootnotes(cells.country)) notes.countryUnreadable!++;

    let industry: SourceRow['industry'] = null;
    if (cells.industry !== undefined) {
      industry = wikipediaIndustry(cells.industry);
      const raw = stripFootnotes(cells.industry);
      if (!industry && raw) {
        notes.industryUnmapped!++;
        unmapped.set(raw.toLowerCase(), (unmapped.get(raw.toLowerCase()) ?? 0) + 1);
      }
    }

    const valuations: SourceValuation[] = [];
    const rawVal = stripFootnotes(cells.valuation);
    const usd = billionsToUsd(rawVal);
    const date = listDate(cells.valuationDate);
    if (rawVal && usd === null) {
      if (/\+$|[–-]/.test(rawVal)) notes.valuationLowerBoundOrRange!++;
      else notes.valuationUnparsed!++;
    }
    if (usd !== null && !date) notes.valuationDateUnparsed!++;
    if (usd !== null && date) valuations.push({ date, valuationUsd: usd, basis: 'reported' });
    parsed.push({ index, name, aliases, country: c.country, industry, valuations });
  });

  // The same company listed twice (same name and country, e.g. Icertis in March 2020): one row.
  const merged = mergeRepeatedRows(parsed, (p) => slug(p.name), (group) => group.every((q) => q.country === group[0]!.country), notes);

  const keys = uniqueKeys(merged.map((p) => ({ base: slug(p.name) || 'company', name: p.name, id: String(p.index).padStart(5, '0') })));
  const rows: SourceRow[] = merged.map((p, i) => ({
    key: keys[i]!,
    name: p.name,
    aliases: p.aliases,
    headquartersCountry: p.country,
    industry: p.industry,
    url: WIKIPEDIA_UNICORNS_URL,
    asOf: cfg.retrieved,
    valuations: [...p.valuations].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0)),
  }));

  const { rows: written } = writeSource(
    {
      id: cfg.id,
      name: `Wikipedia: List of unicorn startup companies (${cfg.tables}), snapshot ${cfg.retrieved}`,
      url: WIKIPEDIA_UNICORNS_URL,
      retrieved: cfg.retrieved,
      licence: WIKIPEDIA_LICENCE,
      via: `${viaRef(cfg.mirror, cfg.paths.map((p) => (p.includes(' ') ? JSON.stringify(p) : p)))}; ${cfg.script}`,
      priority: cfg.priority,
    },
    rows,
  );
  summarise(cfg.id, written, notes);
  if (unmapped.size) console.log(`${cfg.id} unmapped industries: ${[...unmapped.entries()].sort().map(([k, n]) => `${k} (${n})`).join('; ')}`);
  for (const k of ['spacex', 'stripe', 'databricks', 'bytedance', 'airbnb', 'wework']) {
    const r = written.find((x) => x.key === k);
    console.log(`${cfg.id} check ${k}: ${r ? JSON.stringify({ name: r.name, country: r.headquartersCountry, industry: r.industry, valuations: r.valuations }) : 'absent'}`);
  }
}

if (import.meta.main) {
  const PATH = 'src/unicorndata.json';
  extractWikipediaListRows({
    id: 'wikipedia-unicorns-2020-03',
    mirror: { owner: 'prayagd', repo: 'unicorn-startups-list', commit: '663372bcf6e1e7d27b8ee0f8f83d3c83eee7c11b' },
    paths: [PATH],
    // e0489d8 (2020-03-19) added the scrape; later commits only reshaped it (same cells).
    retrieved: '2020-03-19',
    priority: 34,
    script: 'data/extract/wikipedia-unicorns-2020-03.ts',
    tables: 'list table',
    read: (m) => {
      const data = JSON.parse(gitShow(m, PATH)) as unknown;
      if (!Array.isArray(data)) throw new Error(`${PATH}: not an array of rows`);
      return data.map((r, i) => {
        if (!Array.isArray(r) || r.length !== 4 || !r.every((x) => typeof x === 'string')) throw new Error(`${PATH}: row ${i} is not 4 strings`);
        const [name, valuation, valuationDate, country] = r as string[];
        return { name: name!, valuation: valuation!, valuationDate: valuationDate!, country: country! };
      });
    },
  });
}
