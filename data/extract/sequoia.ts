/**
 * sequoia: Sequoia Capital's company directory (sequoiacap.com/our-companies) → data/sources/sequoia/.
 *
 * Reads docs/companies/all.json of github:TheDarkNight21/sequoia-oss-api (a daily scrape of the directory;
 * docs/meta.json gives the snapshot time). Identity and milestone facts only: no description,
 * why_partnered or team text.
 *
 *   bun data/extract/sequoia.ts
 */
import type { SourceRow } from '../build/source-row.ts';
import { type Mirror, clean, foundedYear, gitShow, normaliseWebsite, slug, summarise, uniqueKeys, viaRef, writeSource } from './common.ts';

const MIRROR: Mirror = { owner: 'TheDarkNight21', repo: 'sequoia-oss-api', commit: '79a5364f5df6517b0be3c2b26ed7d6971d34d3e1' };
const PATH = 'docs/companies/all.json';
const DIRECTORY = 'https://www.sequoiacap.com/our-companies/';

interface SequoiaCompany {
  id: string;
  name: string;
  slug?: string | null;
  website?: string | null;
  current_stage?: string | null;
  first_partnered_year?: number | null;
  milestones?: { founded_year?: number | null; partnered_year?: number | null; ipo_year?: number | null; acquired_year?: number | null } | null;
  source_urls?: { directory?: string | null; profile?: string | null } | null;
}

const meta = JSON.parse(gitShow(MIRROR, 'docs/meta.json')) as { last_updated_iso: string };
const asOf = new Date(meta.last_updated_iso).toISOString().slice(0, 10);

const companies = (JSON.parse(gitShow(MIRROR, PATH)) as SequoiaCompany[]).filter((c) => clean(c.name));
const notes = { droppedWebsites: 0, ipoAndAcquired: 0, stageOnlyAcquired: 0, stageOnlyIpo: 0 };

const keys = uniqueKeys(companies.map((c) => ({ base: slug(clean(c.name)!) || clean(c.slug) || 'company', name: clean(c.name)!, id: c.id })));

const rows: SourceRow[] = companies.map((c, i) => {
  const name = clean(c.name)!;
  const m = c.milestones ?? {};
  const ipoYear = foundedYear(m.ipo_year);
  const acquiredYear = foundedYear(m.acquired_year);
  const partnered = foundedYear(m.partnered_year ?? c.first_partnered_year);
  const stage = clean(c.current_stage);

  // Both an IPO and an acquisition: the later event is the current state (same year: the acquisition);
  // the directory's current_stage, when it says ipo/acquired, decides.
  let acquired = stage === 'acquired' || (acquiredYear !== null && stage !== 'ipo' && !(ipoYear !== null && ipoYear > acquiredYear));
  if (stage === 'ipo') acquired = false;
  const isPublic = !acquired && (stage === 'ipo' || ipoYear !== null);
  if (ipoYear !== null && acquiredYear !== null) notes.ipoAndAcquired++;
  if (stage === 'acquired' && acquiredYear === null) notes.stageOnlyAcquired++;
  if (stage === 'ipo' && ipoYear === null) notes.stageOnlyIpo++;

  const website = normaliseWebsite(c.website, name);
  if (clean(c.website) && !website) notes.droppedWebsites++;
  const profile = clean(c.source_urls?.profile);
  const url = profile && /^https:\/\/(www\.)?sequoiacap\.com\/companies\/[a-z0-9-]+\/?$/.test(profile) ? profile : DIRECTORY;

  return {
    key: keys[i]!,
    name,
    website,
    foundedYear: foundedYear(m.founded_year),
    status: acquired ? 'Acquired' : null,
    companyType: acquired ? 'Acquired' : isPublic ? 'Public' : null,
    url,
    asOf,
    rounds: partnered !== null
      ? [{ date: String(partnered), roundType: 'Sequoia Capital partnership', amountUsd: null, investors: ['Sequoia Capital'], leadInvestors: [] }]
      : [],
    investors: partnered === null ? ['Sequoia Capital'] : [],
  };
});

const { rows: written } = writeSource(
  {
    id: 'sequoia',
    name: 'Sequoia Capital company directory',
    url: DIRECTORY,
    retrieved: asOf,
    licence: 'Sequoia Capital public company directory (scraped by sequoia-oss-api; no licence file upstream); identity and milestone facts only, no descriptions',
    via: `${viaRef(MIRROR, [PATH, 'docs/meta.json'])}; data/extract/sequoia.ts`,
    priority: 40,
  },
  rows,
);
summarise('sequoia', written, notes);
