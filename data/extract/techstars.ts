/**
 * techstars: Techstars' accelerator portfolio (techstars.com/portfolio) → data/sources/techstars/.
 *
 * Reads data/raw/techstars_all.json of github:nathanaelguitar/team17-vc-scout-model (the public portfolio
 * index, committed 2026-07-16; US companies only). Only identity, location, status and the accelerator
 * session are taken; no descriptions, founders, e-mails or logos.
 *
 *   bun data/extract/techstars.ts
 */
import type { SourceRow } from '../build/source-row.ts';
import { type Mirror, clean, gitShow, isoDay, normaliseCountry, normaliseWebsite, slug, summarise, uniqueKeys, viaRef, writeSource } from './common.ts';

const MIRROR: Mirror = { owner: 'nathanaelguitar', repo: 'team17-vc-scout-model', commit: 'c0f6e48821b33d0b5d05df0008075f43164d0301' };
const PATH = 'data/raw/techstars_all.json';
const PORTFOLIO = 'https://www.techstars.com/portfolio';
// The upstream commit that added the file (bb3a7c0, 2026-07-16).
const RETRIEVED = '2026-07-16';

interface TechstarsCompany {
  id: string;
  name: string;
  status?: string | null;
  stage?: string | null;
  city?: string | null;
  state?: string | null;
  country?: string | null;
  company_country_code?: string | null;
  website?: string | null;
  session?: string | null;
  session_start_date?: string | null;
}

const companies = (JSON.parse(gitShow(MIRROR, PATH)) as TechstarsCompany[]).filter((c) => clean(c.name));
const notes = { droppedWebsites: 0, unknownCountries: 0, acquiredByStatus: 0, acquiredByStageOnly: 0, outOfBusiness: 0, missingSessionDate: 0 };

const keys = uniqueKeys(companies.map((c) => ({ base: slug(clean(c.name)!) || 'company', name: clean(c.name)!, id: c.id })));

const rows: SourceRow[] = companies.map((c, i) => {
  const name = clean(c.name)!;
  const country = normaliseCountry(c.country) ?? normaliseCountry(c.company_country_code);
  if (clean(c.country) && !country) notes.unknownCountries++;

  // "Acquired" in status, or an "Exit - Acquisition" stage → Acquired; "Out of Business" → Defunct;
  // "Operating" → Active.
  const st = clean(c.status)?.toLowerCase() ?? '';
  const stage = clean(c.stage)?.toLowerCase() ?? '';
  let status: SourceRow['status'] = null;
  if (st === 'acquired' || /^exit\s*-\s*acquisition/.test(stage)) {
    status = 'Acquired';
    if (st === 'acquired') notes.acquiredByStatus++;
    else notes.acquiredByStageOnly++;
  } else if (st === 'out of business') {
    status = 'Defunct';
    notes.outOfBusiness++;
  } else if (st === 'operating') status = 'Active';

  const website = normaliseWebsite(c.website, name);
  if (clean(c.website) && !website) notes.droppedWebsites++;
  const start = isoDay(c.session_start_date);
  const session = clean(c.session);
  if (!start) notes.missingSessionDate++;

  return {
    key: keys[i]!,
    name,
    website,
    headquartersCity: clean(c.city),
    headquartersRegion: clean(c.state),
    headquartersCountry: country,
    status,
    url: PORTFOLIO,
    asOf: RETRIEVED,
    rounds: start
      ? [{ date: start, roundType: session ? `Accelerator (Techstars ${session})` : 'Accelerator (Techstars)', amountUsd: null, investors: ['Techstars'], leadInvestors: ['Techstars'] }]
      : [],
    investors: start ? [] : ['Techstars'],
  };
});

const { rows: written } = writeSource(
  {
    id: 'techstars',
    name: 'Techstars accelerator portfolio',
    url: PORTFOLIO,
    retrieved: RETRIEVED,
    licence: 'Techstars public portfolio index (no licence file upstream); identity facts only, no descriptions or founder contacts',
    via: `${viaRef(MIRROR, [PATH])}; data/extract/techstars.ts`,
    priority: 41,
  },
  rows,
);
summarise('techstars', written, notes);
