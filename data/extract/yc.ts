/**
 * yc: the Y Combinator company directory → data/sources/yc/.
 *
 * Reads the yc-oss style snapshot in github:prajjwal2-3/yc-data (batches/*.json, meta.json) and takes
 * only year_founded from github:corralm/yc-scraper (data/2024-05-11-yc-companies.csv, joined on the YC id).
 * Identity facts only: no one_liner / long_description / founder text is copied.
 *
 *   bun data/extract/yc.ts
 */
import type { SourceRound, SourceRow } from '../build/source-row.ts';
import {
  type Mirror, clean, dedupeAliases, foundedYear, gitLs, gitShow, normaliseCountry, normaliseWebsite, parseCsvObjects,
  slug, summarise, uniqueKeys, viaRef, writeSource, ycIndustry,
} from './common.ts';

const YC: Mirror = { owner: 'prajjwal2-3', repo: 'yc-data', commit: 'a5c2a6f26558a7d66b384f96b7622df3ff6cb40b' };
const CORRALM: Mirror = { owner: 'corralm', repo: 'yc-scraper', commit: '39f789912a1d710abf68dfb005b59e847c1eaf0b' };
const CORRALM_CSV = 'data/2024-05-11-yc-companies.csv';

interface YcCompany {
  id: number;
  name: string;
  slug: string;
  former_names?: string[] | null;
  website?: string | null;
  all_locations?: string | null;
  team_size?: number | null;
  batch?: string | null;
  status?: string | null;
  industry?: string | null;
  subindustry?: string | null;
  tags?: string[] | null;
  url?: string | null;
}

const meta = JSON.parse(gitShow(YC, 'meta.json')) as { last_updated: string };
const asOf = meta.last_updated.slice(0, 10);
if (!/^\d{4}-\d{2}-\d{2}$/.test(asOf)) throw new Error(`meta.last_updated: ${meta.last_updated}`);

// batches/<batch>.json hold every company of a batch; batches/<batch>/<slug>.json repeat them one by one.
const batchFiles = gitLs(YC, 'batches').filter((p) => /^batches\/[^/]+\.json$/.test(p));
const byId = new Map<number, YcCompany>();
let duplicates = 0;
for (const path of batchFiles) {
  for (const c of JSON.parse(gitShow(YC, path)) as YcCompany[]) {
    if (byId.has(c.id)) {
      duplicates++;
      continue;
    }
    byId.set(c.id, c);
  }
}

// year_founded only, joined on the YC company id.
const founded = new Map<number, number>();
for (const r of parseCsvObjects(gitShow(CORRALM, CORRALM_CSV))) {
  const id = Number(r.company_id);
  const y = foundedYear(r.year_founded);
  if (Number.isInteger(id) && y !== null) founded.set(id, y);
}

const notes = { batchFiles: batchFiles.length, duplicateIds: duplicates, unreadLocations: 0, unknownCountries: 0, droppedWebsites: 0, futureBatchRounds: 0 };
const unknownCountries = new Set<string>();

/** "San Francisco, CA, USA; Remote" → the first real location as city / region / country. */
function hq(all: string | null | undefined): { city: string | null; region: string | null; country: string | null } {
  const none = { city: null, region: null, country: null };
  const first = (all ?? '').split(';').map((x) => clean(x)).find((x) => x && x.toLowerCase() !== 'remote');
  if (!first) return none;
  const parts = first.split(',').map((x) => clean(x));
  const country = normaliseCountry(parts[parts.length - 1]);
  if (!country) {
    notes.unknownCountries++;
    unknownCountries.add(first);
    return none;
  }
  if (parts.length === 3) return { city: parts[0] ?? null, region: parts[1] ?? null, country };
  if (parts.length === 2) return { city: parts[0] ?? null, region: null, country };
  if (parts.length === 1) return { city: null, region: null, country };
  notes.unreadLocations++;
  return none;
}

const companies = [...byId.values()].sort((a, b) => a.id - b.id);
const keys = uniqueKeys(
  companies.map((c) => {
    const s = clean(c.slug);
    return { base: s && /^[a-z0-9]+(-[a-z0-9]+)*$/.test(s) ? s : slug(c.name) || `yc-${c.id}`, name: clean(c.name) ?? '', id: String(c.id).padStart(10, '0') };
  }),
);

const rows: SourceRow[] = companies.map((c, i) => {
  const name = clean(c.name)!;
  const key = keys[i]!;
  const loc = hq(c.all_locations);
  const website = normaliseWebsite(c.website, name);
  if (clean(c.website) && !website) notes.droppedWebsites++;

  let status: SourceRow['status'] = null;
  let companyType: SourceRow['companyType'] = null;
  switch (clean(c.status)) {
    case 'Active':
      status = 'Active';
      companyType = 'Private';
      break;
    case 'Inactive':
      status = 'Defunct';
      companyType = 'Private';
      break;
    case 'Acquired':
      status = 'Acquired';
      companyType = 'Acquired';
      break;
    case 'Public':
      status = 'Active';
      companyType = 'Public';
      break;
  }

  const rounds: SourceRound[] = [];
  const batch = clean(c.batch);
  const batchYear = batch ? /^(Winter|Spring|Summer|Fall) (\d{4})$/.exec(batch)?.[2] : undefined;
  if (batch && batchYear) {
    if (batchYear > asOf.slice(0, 4)) notes.futureBatchRounds++;
    else {
      rounds.push({
        date: batchYear,
        roundType: `Accelerator (Y Combinator ${batch})`,
        amountUsd: null,
        investors: ['Y Combinator'],
        leadInvestors: ['Y Combinator'],
      });
    }
  }

  const url = clean(c.url);
  const teamSize = typeof c.team_size === 'number' && Number.isInteger(c.team_size) && c.team_size > 0 ? c.team_size : null;
  return {
    key,
    name,
    aliases: dedupeAliases(name, (c.former_names ?? []).filter((a) => !/\bformerly\b/i.test(a ?? ''))),
    website,
    headquartersCity: loc.city,
    headquartersRegion: loc.region,
    headquartersCountry: loc.country,
    industry: ycIndustry(clean(c.industry), clean(c.subindustry), (c.tags ?? []).filter((t): t is string => typeof t === 'string')),
    foundedYear: founded.get(c.id) ?? null,
    employees: teamSize,
    employeesAsOf: teamSize ? asOf : null,
    status,
    companyType,
    url: url && /^https:\/\/www\.ycombinator\.com\/companies\/[A-Za-z0-9._-]+$/.test(url) ? url : `https://www.ycombinator.com/companies/${clean(c.slug) ?? key}`,
    asOf,
    rounds,
  };
});

const { rows: written } = writeSource(
  {
    id: 'yc',
    name: 'Y Combinator company directory',
    url: 'https://www.ycombinator.com/companies',
    retrieved: asOf,
    licence: 'YC public company directory (no licence file upstream); identity facts only, no descriptions',
    via: `${viaRef(YC, ['batches/*.json', 'meta.json'])}; ${viaRef(CORRALM, [CORRALM_CSV])} (year_founded only); data/extract/yc.ts`,
    priority: 20,
  },
  rows,
);
summarise('yc', written, { ...notes, unknownCountrySamples: [...unknownCountries].slice(0, 10).join(' | ') });
