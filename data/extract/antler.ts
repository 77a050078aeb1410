/**
 * antler: Antler's portfolio (antler.co/portfolio) → data/sources/antler/.
 *
 * Reads companies/all.json of github:veerdosi/antler-api (scrape of 2025-07-16, per its commit message).
 * Names written "FileAI (former Bluesheet)" become name FileAI + alias Bluesheet. No descriptions.
 *
 *   bun data/extract/antler.ts
 */
import type { SourceRow } from '../build/source-row.ts';
import {
  ANTLER_SECTOR, type Mirror, clean, dedupeAliases, foundedYear, gitShow, normaliseCountry, normaliseWebsite, slug,
  splitParenthetical, summarise, uniqueKeys, viaRef, writeSource,
} from './common.ts';

const MIRROR: Mirror = { owner: 'veerdosi', repo: 'antler-api', commit: 'cc5fad648b4faeb40a623f70dd65d346af2f976d' };
const PATH = 'companies/all.json';
const PORTFOLIO = 'https://www.antler.co/portfolio';
// The upstream commit that wrote companies/all.json: "Scrape: 16/07/2025" (224a1ad).
const RETRIEVED = '2025-07-16';

interface AntlerCompany {
  id: string;
  name: string;
  slug?: string | null;
  website?: string | null;
  founded_year?: number | null;
  location?: string | null;
  sector?: string | null;
  url?: string | null;
}

const companies = (JSON.parse(gitShow(MIRROR, PATH)) as AntlerCompany[]).filter((c) => clean(c.name));
const notes = { droppedWebsites: 0, unknownLocations: 0, unmappedSectors: 0, splitNames: 0 };
const unknown = new Set<string>();

const parsed = companies.map((c) => {
  const raw = clean(c.name)!;
  const p = splitParenthetical(raw);
  if (p.name !== raw) notes.splitNames++;
  return { c, name: p.name, aliases: dedupeAliases(p.name, [p.alias]) };
});
const keys = uniqueKeys(parsed.map((p, i) => ({ base: slug(p.name) || clean(p.c.slug) || 'company', name: p.name, id: `${p.c.id}|${String(i).padStart(5, '0')}` })));

const rows: SourceRow[] = parsed.map(({ c, name, aliases }, i) => {
  const loc = clean(c.location);
  const country = loc && loc !== 'Unknown' ? normaliseCountry(loc) : null;
  if (loc && loc !== 'Unknown' && !country) {
    notes.unknownLocations++;
    unknown.add(loc);
  }
  const sector = clean(c.sector);
  const industry = sector ? (ANTLER_SECTOR[sector] ?? null) : null;
  if (sector && sector !== 'Unknown' && !industry) notes.unmappedSectors++;
  const website = normaliseWebsite(c.website, name);
  if (clean(c.website) && !website) notes.droppedWebsites++;
  const page = clean(c.url);
  return {
    key: keys[i]!,
    name,
    aliases,
    website,
    headquartersCountry: country,
    industry,
    foundedYear: foundedYear(c.founded_year),
    url: page && /^https:\/\/www\.antler\.co\/portfolio\/[a-z0-9-]+$/.test(page) ? page : PORTFOLIO,
    asOf: RETRIEVED,
    investors: ['Antler'],
  };
});

const { rows: written } = writeSource(
  {
    id: 'antler',
    name: 'Antler portfolio',
    url: PORTFOLIO,
    retrieved: RETRIEVED,
    licence: 'Antler public portfolio pages (scraped by antler-api; no licence file upstream); identity facts only, no descriptions',
    via: `${viaRef(MIRROR, [PATH])}; data/extract/antler.ts`,
    priority: 42,
  },
  rows,
);
summarise('antler', written, { ...notes, unknownLocationValues: [...unknown].join(' | ') });
