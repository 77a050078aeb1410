/**
 * What every source in data/sources/<id>/ holds: `manifest.json` (a SourceManifest) and `rows.json`
 * (a JSON array of SourceRow, sorted by key, facts only). The extract scripts in data/extract/ make
 * them from a public snapshot; `npm run data:build` merges them into the seed (seeds/companies/).
 */

/** The vocabulary of `industry` (seeds/companies/FORMAT.md). */
export const INDUSTRIES = [
  'Artificial Intelligence',
  'Enterprise Software',
  'Cybersecurity',
  'Developer Tools',
  'Semiconductors & Hardware',
  'Cloud & Data Infrastructure',
  'Fintech',
  'Crypto & Blockchain',
  'Mortgage Finance',
  'Consumer Internet',
  'E-commerce & Retail',
  'Gaming & Media',
  'Aerospace & Defense',
  'Space',
  'Biotech & Healthcare',
  'Mobility & Transportation',
  'Energy & Climate',
  'Robotics',
  'Logistics',
  'Real Estate & Proptech',
  'Health & Fitness',
  'Advertising & Marketing Tech',
  'Education',
] as const;
export type Industry = (typeof INDUSTRIES)[number];

export interface SourceManifest {
  /** Lowercase slug, also the folder name: `yc`, `wikipedia-unicorns-2026-07`. */
  id: string;
  /** Human name: "Y Combinator company directory". */
  name: string;
  /** The primary public page the facts come from (not the mirror that carried them). */
  url: string;
  /** The date the snapshot holds for, YYYY-MM-DD. */
  retrieved: string;
  /** The terms, and what we take under them: "CC BY-SA 4.0; facts only, no text". */
  licence: string;
  /** How the snapshot reached us: "github:owner/repo@commit path/…" and the extract script. */
  via: string;
  /** Number of rows in rows.json. */
  rows: number;
  /** sha256 (hex) of rows.json as committed. */
  sha256: string;
  /** The record fields this source supplies (name, website, headquartersCountry, valuation, rounds, …). */
  fields: string[];
  /** Merge priority for identity facts when sources disagree: lower wins (curated is 0). */
  priority: number;
}

export interface SourceValuation {
  /** YYYY, YYYY-MM or YYYY-MM-DD: the date the valuation holds for (not the snapshot date). */
  date: string;
  /** Integer USD. */
  valuationUsd: number;
  /** primary (a priced round), secondary, tender, ipo, merger, or reported (a list figure with no stated basis). */
  basis: 'primary' | 'secondary' | 'tender' | 'ipo' | 'merger' | 'reported';
}

export interface SourceRound {
  /** YYYY, YYYY-MM or YYYY-MM-DD. */
  date: string;
  /** As the source words it: "Accelerator (Y Combinator W19)", "Seed", "Series B". */
  roundType: string;
  amountUsd: number | null;
  investors: string[];
  leadInvestors: string[];
}

export interface SourceRow {
  /** Stable within the source (its own id or slug). */
  key: string;
  name: string;
  /** Other names the company is or was known by (former names, legal names), no duplicates of name. */
  aliases?: string[];
  registeredName?: string | null;
  /** https URL of the company's own site. */
  website?: string | null;
  headquartersCity?: string | null;
  headquartersRegion?: string | null;
  /** Full English country name: "United States", "United Kingdom". */
  headquartersCountry?: string | null;
  industry?: Industry | null;
  foundedYear?: number | null;
  employees?: number | null;
  employeesAsOf?: string | null;
  status?: 'Active' | 'Acquired' | 'Defunct' | null;
  companyType?: 'Private' | 'Public' | 'Acquired' | null;
  ipoDate?: string | null;
  /** The public page this row's facts were read from (the company's YC page, the Wikipedia list). */
  url: string;
  /** The date the row's undated facts hold for (usually the snapshot date), YYYY-MM-DD or YYYY-MM. */
  asOf: string;
  valuations?: SourceValuation[];
  rounds?: SourceRound[];
  /** Undated investor links (an investor lists the company in its portfolio). */
  investors?: string[];
}
