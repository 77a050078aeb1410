/**
 * Shared helpers for the extract scripts in data/extract/: reading pinned files out of the bare git
 * mirrors, CSV parsing, slugs, country names, websites, dates, industry mapping tables, unique keys,
 * and the deterministic writer for data/sources/<id>/{rows.json,manifest.json}.
 *
 * Nothing here touches the network. Every script reads `git -C <mirror> show <commit>:<path>` at a
 * commit pinned in the script, so running a script twice gives byte-identical output.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { INDUSTRIES, type Industry, type SourceManifest, type SourceRound, type SourceRow, type SourceValuation } from '../build/source-row.ts';

// ---------------------------------------------------------------------------------------------
// Mirrors

/** Root of the bare git mirrors (`<owner>+<repo>/repo`); override with MIRROR_ROOT. */
export const MIRROR_ROOT = process.env.MIRROR_ROOT ?? '/work/.mirror';

export interface Mirror {
  owner: string;
  repo: string;
  /** Full 40-hex commit the extract is pinned to. */
  commit: string;
}

export function mirrorDir(m: Mirror): string {
  return join(MIRROR_ROOT, `${m.owner}+${m.repo}`, 'repo');
}

function git(m: Mirror, args: string[]): Buffer {
  const dir = mirrorDir(m);
  const res = Bun.spawnSync(['git', '-C', dir, ...args], { stdout: 'pipe', stderr: 'pipe' });
  if (res.exitCode !== 0) {
    throw new Error(`git -C ${dir} ${args.join(' ')} failed: ${res.stderr.toString().trim()}`);
  }
  return Buffer.from(res.stdout);
}

/** The text of `<commit>:<path>` in the mirror. Throws if the blob is absent (a large file not mirrored). */
export function gitShow(m: Mirror, path: string): string {
  return git(m, ['show', `${m.commit}:${path}`]).toString('utf8');
}

/** File names directly under `dir` (not recursive) at the pinned commit, sorted. */
export function gitLs(m: Mirror, dir: string): string[] {
  const out = git(m, ['ls-tree', '--name-only', `${m.commit}`, `${dir.replace(/\/$/, '')}/`]).toString('utf8');
  return out.split('\n').filter(Boolean).sort();
}

/** Author-independent commit date (YYYY-MM-DD, UTC) of the last commit touching `path` at or before the pin. */
export function gitFileDate(m: Mirror, path: string): string {
  const out = git(m, ['log', '-1', '--format=%cI', m.commit, '--', path]).toString('utf8').trim();
  if (!out) throw new Error(`no commit touches ${path} in ${m.owner}/${m.repo}@${m.commit}`);
  return new Date(out).toISOString().slice(0, 10);
}

export function shortCommit(m: Mirror): string {
  return m.commit.slice(0, 7);
}

/** `github:owner/repo@abc1234 path1 path2` for a manifest's `via`. */
export function viaRef(m: Mirror, paths: string[]): string {
  return `github:${m.owner}/${m.repo}@${shortCommit(m)} ${paths.join(' ')}`;
}

// ---------------------------------------------------------------------------------------------
// CSV (RFC 4180: quoted fields may hold commas, quotes doubled, and newlines)

export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let inQuotes = false;
  let i = 0;
  if (text.charCodeAt(0) === 0xfeff) i = 1;
  for (; i < text.length; i++) {
    const c = text[i];
    if (inQuotes) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else inQuotes = false;
      } else field += c;
    } else if (c === '"') inQuotes = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows.filter((r) => !(r.length === 1 && r[0] === ''));
}

/** CSV as objects keyed by header. */
export function parseCsvObjects(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text);
  if (!header) return [];
  return rows.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i] ?? ''])));
}

// ---------------------------------------------------------------------------------------------
// Strings

/** Trim, fold non-breaking and zero-width spaces, collapse internal whitespace. Empty → null. */
export function clean(s: unknown): string | null {
  if (s === null || s === undefined) return null;
  const t = String(s)
    .replace(/[\u200b-\u200d\ufeff]/g, '')
    .replace(/[\u00a0\u2007\u202f]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return t === '' ? null : t;
}

/** Strip Wikipedia footnote markers (`[20]`, `[ fr ]`, `[AI-retrieved source]`) and clean. */
export function stripFootnotes(s: unknown): string | null {
  const t = clean(s);
  return t === null ? null : clean(t.replace(/\[[^\]]*\]/g, ' '));
}

/** Lowercase ASCII slug `[a-z0-9-]+`; '' when nothing is left (callers fall back). */
export function slug(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** Names minus `name` and each other, case-insensitively; prefers a variant with capitals over all-lowercase. */
export function dedupeAliases(name: string, names: (string | null | undefined)[]): string[] {
  const seen = new Map<string, string>();
  const nameKey = name.toLowerCase();
  for (const raw of names) {
    const a = clean(raw);
    if (!a) continue;
    const k = a.toLowerCase();
    if (k === nameKey) continue;
    const prev = seen.get(k);
    if (prev === undefined) seen.set(k, a);
    else if (prev === prev.toLowerCase() && a !== a.toLowerCase()) seen.set(k, a);
  }
  return [...seen.values()];
}

/** "FileAI (former Bluesheet)" → { name: "FileAI", alias: "Bluesheet" }; "Tactiq (US)" → { name: "Tactiq" }. */
export function splitParenthetical(s: string): { name: string; alias: string | null } {
  const m = /^(.*?)\s*\(\s*([^()]*?)\s*\)\s*$/.exec(s);
  if (!m || !m[1]) return { name: s, alias: null };
  const name = m[1].trim();
  let inner = (m[2] ?? '').trim();
  inner = inner.replace(/^(formerly|former|previously|ex-|ex|dba|d\/b\/a|f\/k\/a|fka|aka|a\.k\.a\.)\s*:?\s*/i, '').trim();
  if (!inner || /^[A-Z]{2,3}$/.test(inner)) return { name, alias: null };
  return { name, alias: inner };
}

/** Drop a trailing corporate suffix: "Age of Learning, Inc." → "Age of Learning". */
export function stripCorporateSuffix(s: string): string {
  return s.replace(/,?\s+(Inc\.?|Incorporated|Corp\.?|Corporation|LLC|L\.L\.C\.|Ltd\.?|Limited|GmbH|S\.A\.|SAS|B\.V\.|Pte\.? Ltd\.?)$/i, '').trim();
}

// ---------------------------------------------------------------------------------------------
// Countries

/** Canonical full English country (or territory) names accepted in headquartersCountry. */
const COUNTRIES = [
  'Afghanistan', 'Albania', 'Algeria', 'Andorra', 'Angola', 'Antigua and Barbuda', 'Argentina', 'Armenia', 'Australia',
  'Austria', 'Azerbaijan', 'Bahamas', 'Bahrain', 'Bangladesh', 'Barbados', 'Belarus', 'Belgium', 'Belize', 'Benin',
  'Bermuda', 'Bhutan', 'Bolivia', 'Bosnia and Herzegovina', 'Botswana', 'Brazil', 'British Virgin Islands', 'Brunei',
  'Bulgaria', 'Burkina Faso', 'Burundi', 'Cambodia', 'Cameroon', 'Canada', 'Cape Verde', 'Cayman Islands',
  'Central African Republic', 'Chad', 'Chile', 'China', 'Colombia', 'Comoros', 'Costa Rica', 'Croatia', 'Cuba', 'Curaçao',
  'Cyprus', 'Czech Republic', 'Democratic Republic of the Congo', 'Denmark', 'Djibouti', 'Dominica', 'Dominican Republic',
  'Ecuador', 'Egypt', 'El Salvador', 'Equatorial Guinea', 'Eritrea', 'Estonia', 'Eswatini', 'Ethiopia', 'Fiji', 'Finland',
  'France', 'Gabon', 'Gambia', 'Georgia', 'Germany', 'Ghana', 'Gibraltar', 'Greece', 'Grenada', 'Guatemala', 'Guernsey',
  'Guinea', 'Guinea-Bissau', 'Guyana', 'Haiti', 'Honduras', 'Hong Kong', 'Hungary', 'Iceland', 'India', 'Indonesia', 'Iran',
  'Iraq', 'Ireland', 'Isle of Man', 'Israel', 'Italy', 'Ivory Coast', 'Jamaica', 'Japan', 'Jersey', 'Jordan', 'Kazakhstan',
  'Kenya', 'Kosovo', 'Kuwait', 'Kyrgyzstan', 'Laos', 'Latvia', 'Lebanon', 'Lesotho', 'Liberia', 'Libya', 'Liechtenstein',
  'Lithuania', 'Luxembourg', 'Macau', 'Madagascar', 'Malawi', 'Malaysia', 'Maldives', 'Mali', 'Malta', 'Mauritania',
  'Mauritius', 'Mexico', 'Moldova', 'Monaco', 'Mongolia', 'Montenegro', 'Morocco', 'Mozambique', 'Myanmar', 'Namibia',
  'Nepal', 'Netherlands', 'New Zealand', 'Nicaragua', 'Niger', 'Nigeria', 'North Korea', 'North Macedonia', 'Norway', 'Oman',
  'Pakistan', 'Palestine', 'Panama', 'Papua New Guinea', 'Paraguay', 'Peru', 'Philippines', 'Poland', 'Portugal',
  'Puerto Rico', 'Qatar', 'Republic of the Congo', 'Romania', 'Russia', 'Rwanda', 'Saint Kitts and Nevis', 'Saint Lucia',
  'Samoa', 'San Marino', 'Saudi Arabia', 'Senegal', 'Serbia', 'Seychelles', 'Sierra Leone', 'Singapore', 'Slovakia',
  'Slovenia', 'Somalia', 'South Africa', 'South Korea', 'South Sudan', 'Spain', 'Sri Lanka', 'Sudan', 'Suriname', 'Sweden',
  'Switzerland', 'Syria', 'Taiwan', 'Tajikistan', 'Tanzania', 'Thailand', 'Togo', 'Trinidad and Tobago', 'Tunisia', 'Turkey',
  'Turkmenistan', 'Uganda', 'Ukraine', 'United Arab Emirates', 'United Kingdom', 'United States', 'Uruguay', 'Uzbekistan',
  'Vanuatu', 'Venezuela', 'Vietnam', 'Yemen', 'Zambia', 'Zimbabwe',
];

/** Other spellings → canonical name (keys lowercase). */
const COUNTRY_ALIASES: Record<string, string> = {
  usa: 'United States',
  us: 'United States',
  'u.s.': 'United States',
  'u.s.a.': 'United States',
  'united states of america': 'United States',
  america: 'United States',
  uk: 'United Kingdom',
  'u.k.': 'United Kingdom',
  'great britain': 'United Kingdom',
  britain: 'United Kingdom',
  england: 'United Kingdom',
  scotland: 'United Kingdom',
  wales: 'United Kingdom',
  'northern ireland': 'United Kingdom',
  uae: 'United Arab Emirates',
  korea: 'South Korea',
  'republic of korea': 'South Korea',
  'korea, republic of': 'South Korea',
  'korea (south)': 'South Korea',
  czechia: 'Czech Republic',
  'the netherlands': 'Netherlands',
  holland: 'Netherlands',
  türkiye: 'Turkey',
  turkiye: 'Turkey',
  'russian federation': 'Russia',
  'viet nam': 'Vietnam',
  "côte d'ivoire": 'Ivory Coast',
  "cote d'ivoire": 'Ivory Coast',
  'hong kong sar': 'Hong Kong',
  'hong kong sar china': 'Hong Kong',
  'macao': 'Macau',
  'dr congo': 'Democratic Republic of the Congo',
  'drc': 'Democratic Republic of the Congo',
  'congo (kinshasa)': 'Democratic Republic of the Congo',
  'the bahamas': 'Bahamas',
  'the gambia': 'Gambia',
  burma: 'Myanmar',
  'cabo verde': 'Cape Verde',
  'swaziland': 'Eswatini',
  'macedonia': 'North Macedonia',
  'state of palestine': 'Palestine',
  'republic of ireland': 'Ireland',
  'taiwan, province of china': 'Taiwan',
  'people\'s republic of china': 'China',
  prc: 'China',
};

const COUNTRY_LOOKUP = new Map<string, string>([
  ...COUNTRIES.map((c) => [c.toLowerCase(), c] as [string, string]),
  ...Object.entries(COUNTRY_ALIASES),
]);

/** A single country name in any common spelling or case → canonical full English name; null if not a country. */
export function normaliseCountry(s: unknown): string | null {
  const t = stripFootnotes(s);
  if (!t) return null;
  return COUNTRY_LOOKUP.get(t.toLowerCase().replace(/\.$/, '')) ?? null;
}

/**
 * A Wikipedia-style country cell ("Israel / United States", "United States and Ireland"): the country when
 * exactly one is named, else null (a multi-country cell does not say which is the headquarters).
 */
export function singleCountry(s: unknown): { country: string | null; multi: boolean } {
  // "United States (formerly Finland)": the parenthetical is history, not a second headquarters.
  const t = clean(stripFootnotes(s)?.replace(/\([^)]*\)/g, ' '));
  if (!t) return { country: null, multi: false };
  const whole = normaliseCountry(t);
  if (whole) return { country: whole, multi: false };
  const parts = t.split(/\s*(?:\/|,|;|\band\b)\s*/).filter(Boolean);
  if (parts.length > 1) return { country: null, multi: true };
  return { country: normaliseCountry(t), multi: false };
}

// ---------------------------------------------------------------------------------------------
// Websites

/** Hosts that are not a company's own site (social, directories, app stores, code hosts, shorteners). */
const SHARED_HOSTS = [
  'linkedin.com', 'facebook.com', 'fb.com', 'twitter.com', 'x.com', 'instagram.com', 'youtube.com', 'tiktok.com',
  'crunchbase.com', 'angel.co', 'angellist.com', 'wellfound.com', 'ycombinator.com', 'producthunt.com', 'apple.com',
  'play.google.com', 'google.com', 'github.com', 'gitlab.com', 'medium.com', 'bit.ly', 'linktr.ee', 't.me', 'wa.me',
  'techstars.com', '500.co', 'antler.co', 'sequoiacap.com', 'wikipedia.org',
];

/**
 * A company website as `https://host[/path]`: adds https:// to bare domains, upgrades http://, lowercases the
 * host, drops query strings (utm tags), fragments and a bare trailing slash. Null for empty, malformed or
 * multi-URL values and for shared hosts (social profiles, app stores, directories) unless `ownName` says
 * the company is that host.
 */
export function normaliseWebsite(s: unknown, ownName?: string | null): string | null {
  let t = clean(s);
  if (!t) return null;
  if (/[\s,]/.test(t)) return null;
  if (/^\/\//.test(t)) t = `https:${t}`;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(t)) t = `https://${t}`;
  let u: URL;
  try {
    u = new URL(t);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  if (u.username || u.password || u.port) return null;
  const host = u.hostname.toLowerCase().replace(/\.$/, '');
  if (!/^([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,}$/.test(host)) return null;
  const shared = SHARED_HOSTS.find((h) => host === h || host.endsWith(`.${h}`));
  // A shared host is still the company's own site when the company is that host (GitHub → github.com).
  if (shared && !(ownName && slug(ownName).replace(/-/g, '') === shared.split('.')[0]!.replace(/-/g, ''))) return null;
  let path = u.pathname;
  if (path === '/' || path === '') path = '';
  else path = path.replace(/\/+$/, '');
  return `https://${host}${path}`;
}

// ---------------------------------------------------------------------------------------------
// Dates and numbers

const MONTHS: Record<string, number> = {
  jan: 1, january: 1, feb: 2, february: 2, mar: 3, march: 3, apr: 4, april: 4, may: 5, jun: 6, june: 6, jul: 7,
  july: 7, aug: 8, august: 8, sep: 9, sept: 9, september: 9, oct: 10, october: 10, nov: 11, november: 11, dec: 12,
  december: 12,
};

const p2 = (n: number) => String(n).padStart(2, '0');

/** True for YYYY, YYYY-MM or YYYY-MM-DD naming a real calendar date (years 1800..2100). */
export function isValidDate(d: string): boolean {
  const m = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/.exec(d);
  if (!m) return false;
  const y = Number(m[1]);
  if (y < 1800 || y > 2100) return false;
  if (m[2] === undefined) return true;
  const mo = Number(m[2]);
  if (mo < 1 || mo > 12) return false;
  if (m[3] === undefined) return true;
  const day = Number(m[3]);
  const dt = new Date(Date.UTC(y, mo - 1, day));
  return dt.getUTCFullYear() === y && dt.getUTCMonth() === mo - 1 && dt.getUTCDate() === day;
}

function ymd(y: number, mo?: number, d?: number): string | null {
  const s = mo === undefined ? `${y}` : d === undefined ? `${y}-${p2(mo)}` : `${y}-${p2(mo)}-${p2(d)}`;
  return isValidDate(s) ? s : null;
}

/**
 * A human date as written in the Wikipedia tables → YYYY, YYYY-MM or YYYY-MM-DD, keeping only the precision
 * given. Handles "February 2026 (2026-02)", "February 17, 2026", "26 January 2024", "Aug 2021", "2022",
 * footnotes, and "06/01/18" (a spreadsheet's month-first rendering of "June 2018": day 01 = month only).
 */
export function parseHumanDate(s: unknown): string | null {
  let t = stripFootnotes(s);
  if (!t) return null;
  const iso = /\(\s*(\d{4}-\d{2}(?:-\d{2})?)\s*\)/.exec(t);
  if (iso && iso[1] && isValidDate(iso[1])) return iso[1];
  t = t.replace(/\([^)]*\)/g, ' ').replace(/\s+/g, ' ').trim();
  let m: RegExpExecArray | null;
  if ((m = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/.exec(t))) return isValidDate(t) ? t : null;
  if ((m = /^([A-Za-z]+)\.? (\d{4})$/.exec(t))) {
    const mo = MONTHS[m[1]!.toLowerCase()];
    return mo ? ymd(Number(m[2]), mo) : null;
  }
  if ((m = /^([A-Za-z]+)\.? (\d{1,2}),? (\d{4})$/.exec(t))) {
    const mo = MONTHS[m[1]!.toLowerCase()];
    return mo ? ymd(Number(m[3]), mo, Number(m[2])) : null;
  }
  if ((m = /^(\d{1,2}) ([A-Za-z]+)\.?,? (\d{4})$/.exec(t))) {
    const mo = MONTHS[m[2]!.toLowerCase()];
    return mo ? ymd(Number(m[3]), mo, Number(m[1])) : null;
  }
  if ((m = /^(\d{2})\/01\/(\d{2})$/.exec(t))) return ymd(2000 + Number(m[2]), Number(m[1]));
  return null;
}

/** An ISO timestamp ("2024-06-20T00:00:00.000Z") → YYYY-MM-DD, or null (also for the 1970-01-01 placeholder). */
export function isoDay(s: unknown): string | null {
  const t = clean(s);
  if (!t) return null;
  const m = /^(\d{4}-\d{2}-\d{2})(?:[T ]|$)/.exec(t);
  if (!m || !m[1] || !isValidDate(m[1])) return null;
  if (m[1] <= '1970-01-01') return null;
  return m[1];
}

/** A plain decimal number of billions ("965", "82.4", "1,250") → integer USD; null for "1+", ranges, blanks. */
export function billionsToUsd(s: unknown): number | null {
  const t = stripFootnotes(s);
  if (!t) return null;
  const n = t.replace(/,/g, '');
  if (!/^\d+(\.\d+)?$/.test(n)) return null;
  const v = Math.round(Number(n) * 1e9);
  return Number.isSafeInteger(v) && v > 0 ? v : null;
}

/** A founded year within 1800..2026, else null. Accepts "2024.0". */
export function foundedYear(s: unknown): number | null {
  const t = clean(s);
  if (!t) return null;
  const n = Number(t);
  if (!Number.isFinite(n) || !Number.isInteger(n)) return null;
  return n >= 1800 && n <= 2026 ? n : null;
}

// ---------------------------------------------------------------------------------------------
// Industry vocabulary

const IND = new Set<string>(INDUSTRIES);
function ind(s: Industry): Industry {
  if (!IND.has(s)) throw new Error(`not in the vocabulary: ${s}`);
  return s;
}

/**
 * Wikipedia "Industry" cells (lowercased, footnotes stripped) → vocabulary. Cells naming several industries
 * ("Aerospace, Artificial Intelligence") use the first part that maps. Anything not listed is left null.
 */
export const WIKIPEDIA_INDUSTRY: Record<string, Industry> = {
  'artificial intelligence': 'Artificial Intelligence',
  'ai': 'Artificial Intelligence',
  'ai / gpt': 'Artificial Intelligence',
  'ai audio technologies': 'Artificial Intelligence',
  'ai-powered saas': 'Artificial Intelligence',
  'ai-poweredsaas': 'Artificial Intelligence',
  'frontier intelligences': 'Artificial Intelligence',
  'superintelligence': 'Artificial Intelligence',
  'human-enhancement ai': 'Artificial Intelligence',
  'software': 'Enterprise Software',
  'software as a service': 'Enterprise Software',
  'software company': 'Enterprise Software',
  'software industry': 'Enterprise Software',
  'enterprise software': 'Enterprise Software',
  'enterprise technology': 'Enterprise Software',
  'cloud software': 'Enterprise Software',
  'collaborative software': 'Enterprise Software',
  'productivity software': 'Enterprise Software',
  'crm': 'Enterprise Software',
  'customer relationship management (crm)': 'Enterprise Software',
  'content management system': 'Enterprise Software',
  'workforce management': 'Enterprise Software',
  'workforce management software': 'Enterprise Software',
  'human resource management': 'Enterprise Software',
  'hr technology': 'Enterprise Software',
  'employee benefits platform': 'Enterprise Software',
  'product management platform': 'Enterprise Software',
  'robotic process automation': 'Enterprise Software',
  'business intelligence': 'Enterprise Software',
  'legal technology': 'Enterprise Software',
  'graphic design': 'Enterprise Software',
  'accounting software': 'Fintech',
  'cybersecurity': 'Cybersecurity',
  'computer security': 'Cybersecurity',
  'network security': 'Cybersecurity',
  'application security': 'Cybersecurity',
  'identity management': 'Cybersecurity',
  'identity verification service': 'Cybersecurity',
  'password manager': 'Cybersecurity',
  'vpn service': 'Cybersecurity',
  'fraud prevention': 'Cybersecurity',
  'developer platform': 'Developer Tools',
  'software development': 'Developer Tools',
  'web development': 'Developer Tools',
  'webops': 'Developer Tools',
  'semiconductor': 'Semiconductors & Hardware',
  'semiconductors': 'Semiconductors & Hardware',
  'electronics': 'Semiconductors & Hardware',
  'consumer electronics': 'Semiconductors & Hardware',
  'flexible electronics': 'Semiconductors & Hardware',
  'mobile devices': 'Semiconductors & Hardware',
  'wearable technology': 'Semiconductors & Hardware',
  'wearables': 'Semiconductors & Hardware',
  '3d printing': 'Semiconductors & Hardware',
  'quantum computing': 'Semiconductors & Hardware',
  'quantum technology': 'Semiconductors & Hardware',
  'computer storage': 'Cloud & Data Infrastructure',
  'data storage': 'Cloud & Data Infrastructure',
  'cloud': 'Cloud & Data Infrastructure',
  'cloud computing': 'Cloud & Data Infrastructure',
  'data infrastructure': 'Cloud & Data Infrastructure',
  'database management': 'Cloud & Data Infrastructure',
  'data analytics': 'Cloud & Data Infrastructure',
  'data governance': 'Cloud & Data Infrastructure',
  'analytics': 'Cloud & Data Infrastructure',
  'network operating system': 'Cloud & Data Infrastructure',
  'financial technology': 'Fintech',
  'fintech': 'Fintech',
  'financial services': 'Fintech',
  'financial software': 'Fintech',
  'finance': 'Fintech',
  'consumer finance': 'Fintech',
  'personal finance': 'Fintech',
  'mobile financial services': 'Fintech',
  'insurance': 'Fintech',
  'cryptocurrency': 'Crypto & Blockchain',
  'blockchain': 'Crypto & Blockchain',
  'blockchain gaming': 'Crypto & Blockchain',
  'nft': 'Crypto & Blockchain',
  'web3': 'Crypto & Blockchain',
  'internet': 'Consumer Internet',
  'mobile internet': 'Consumer Internet',
  'social network': 'Consumer Internet',
  'messaging': 'Consumer Internet',
  'online membership service': 'Consumer Internet',
  'food delivery': 'Consumer Internet',
  'e-commerce': 'E-commerce & Retail',
  'b2b e-commerce': 'E-commerce & Retail',
  'marketplace': 'E-commerce & Retail',
  'retail': 'E-commerce & Retail',
  'fashion': 'E-commerce & Retail',
  'cosmetics': 'E-commerce & Retail',
  'furniture': 'E-commerce & Retail',
  'jewelery': 'E-commerce & Retail',
  'sportswear': 'E-commerce & Retail',
  'meal kit': 'E-commerce & Retail',
  'pet food': 'E-commerce & Retail',
  'gaming': 'Gaming & Media',
  'video games': 'Gaming & Media',
  'mobile gaming': 'Gaming & Media',
  'fantasy sports': 'Gaming & Media',
  'music': 'Gaming & Media',
  'media': 'Gaming & Media',
  'digital media': 'Gaming & Media',
  'mass media': 'Gaming & Media',
  'internet media': 'Gaming & Media',
  'media and publishing': 'Gaming & Media',
  'aerospace': 'Aerospace & Defense',
  'defense': 'Aerospace & Defense',
  'defense technology': 'Aerospace & Defense',
  'space technology': 'Space',
  'orbital data centers': 'Space',
  'biotechnology': 'Biotech & Healthcare',
  'biotech/medical': 'Biotech & Healthcare',
  'healthcare': 'Biotech & Healthcare',
  'health care': 'Biotech & Healthcare',
  'health': 'Biotech & Healthcare',
  'health technology': 'Biotech & Healthcare',
  'healthcare technology': 'Biotech & Healthcare',
  'healthcare technology and ai': 'Biotech & Healthcare',
  'digital health': 'Biotech & Healthcare',
  'drug discovery': 'Biotech & Healthcare',
  'pharmaceutical': 'Biotech & Healthcare',
  'pharmaceuticals': 'Biotech & Healthcare',
  'medical device': 'Biotech & Healthcare',
  'nanopore sequencing': 'Biotech & Healthcare',
  'neurotechnology': 'Biotech & Healthcare',
  'fitness': 'Health & Fitness',
  'transportation': 'Mobility & Transportation',
  'car sharing': 'Mobility & Transportation',
  'electric vehicles': 'Mobility & Transportation',
  'self-driving cars': 'Mobility & Transportation',
  'self-driving trucks': 'Mobility & Transportation',
  'automotive': 'Mobility & Transportation',
  'trucking': 'Mobility & Transportation',
  'energy': 'Energy & Climate',
  'energy supply': 'Energy & Climate',
  'energy technology': 'Energy & Climate',
  'fusion power': 'Energy & Climate',
  'batteries': 'Energy & Climate',
  'battery manufacturing': 'Energy & Climate',
  'robotics': 'Robotics',
  'humanoid robotics': 'Robotics',
  'logistics': 'Logistics',
  'supply chain management': 'Logistics',
  'supply chain automation': 'Logistics',
  'commerce and logistics': 'Logistics',
  'real estate': 'Real Estate & Proptech',
  'real estate technology': 'Real Estate & Proptech',
  'property technology': 'Real Estate & Proptech',
  'vacation rental software platform': 'Real Estate & Proptech',
  'construction': 'Real Estate & Proptech',
  'advertising technology': 'Advertising & Marketing Tech',
  'marketing': 'Advertising & Marketing Tech',
  'mobile marketing analytics': 'Advertising & Marketing Tech',
  'mobilemarketinganalytics': 'Advertising & Marketing Tech',
  'education': 'Education',
  'education technology': 'Education',
  'educational technology': 'Education',
};

/** A Wikipedia industry cell → vocabulary or null. */
export function wikipediaIndustry(s: unknown): Industry | null {
  const t = stripFootnotes(s)?.toLowerCase();
  if (!t) return null;
  const whole = WIKIPEDIA_INDUSTRY[t];
  if (whole) return ind(whole);
  // "semiconductorsartificial intelligence": a scrape that lost the separator between two links.
  const glued = t.replace(/^semiconductors(?=artificial)/, 'semiconductors,');
  for (const part of glued.split(/\s*(?:,|\/|;)\s*/)) {
    const hit = WIKIPEDIA_INDUSTRY[part.trim()];
    if (hit) return ind(hit);
  }
  return null;
}

/** YC sub-industry (the part after "->") → vocabulary; functions refine by tags. Unlisted → fall through to tags. */
const YC_SUBINDUSTRY: Record<string, Industry | ((tags: Set<string>) => Industry | null)> = {
  'Engineering, Product and Design': (t) =>
    ['Developer Tools', 'DevOps', 'DevSecOps', 'API', 'APIs', 'Open Source', 'Web Development', 'Kubernetes', 'Databases'].some((x) => t.has(x))
      ? 'Developer Tools'
      : ['Cloud Computing', 'Infrastructure'].some((x) => t.has(x))
        ? 'Cloud & Data Infrastructure'
        : 'Enterprise Software',
  Infrastructure: 'Cloud & Data Infrastructure',
  Productivity: 'Enterprise Software',
  Marketing: 'Advertising & Marketing Tech',
  Operations: 'Enterprise Software',
  Sales: 'Enterprise Software',
  'Finance and Accounting': 'Fintech',
  'Supply Chain and Logistics': 'Logistics',
  Retail: 'E-commerce & Retail',
  Analytics: (t) => (['Data Engineering', 'Databases', 'Big Data'].some((x) => t.has(x)) ? 'Cloud & Data Infrastructure' : 'Enterprise Software'),
  Security: 'Cybersecurity',
  'Human Resources': 'Enterprise Software',
  'Recruiting and Talent': 'Enterprise Software',
  Legal: 'Enterprise Software',
  'Office Management': 'Enterprise Software',
  Social: 'Consumer Internet',
  Content: 'Gaming & Media',
  Gaming: 'Gaming & Media',
  'Apparel and Cosmetics': 'E-commerce & Retail',
  'Consumer Electronics': 'Semiconductors & Hardware',
  'Transportation Services': 'Mobility & Transportation',
  Payments: 'Fintech',
  'Consumer Finance': 'Fintech',
  'Credit and Lending': 'Fintech',
  'Banking and Exchange': 'Fintech',
  Insurance: 'Fintech',
  'Asset Management': 'Fintech',
  'Healthcare IT': 'Biotech & Healthcare',
  'Healthcare Services': 'Biotech & Healthcare',
  Therapeutics: 'Biotech & Healthcare',
  'Drug Discovery and Delivery': 'Biotech & Healthcare',
  Diagnostics: 'Biotech & Healthcare',
  'Medical Devices': 'Biotech & Healthcare',
  'Industrial Bio': 'Biotech & Healthcare',
  'Consumer Health and Wellness': 'Health & Fitness',
  'Manufacturing and Robotics': (t) =>
    ['Robotics', 'Medical Robotics', 'Swarm Robotics', 'Food Service Robots & Machines', 'Robotic Surgery'].some((x) => t.has(x))
      ? 'Robotics'
      : ['Semiconductors', 'Hardware', 'Electronics', 'Edge Computing Semiconductors'].some((x) => t.has(x))
        ? 'Semiconductors & Hardware'
        : null,
  'Aviation and Space': (t) => (['Space Exploration', 'Satellites', 'Commercial Space Launch'].some((x) => t.has(x)) ? 'Space' : 'Aerospace & Defense'),
  Climate: 'Energy & Climate',
  Energy: 'Energy & Climate',
  Drones: 'Aerospace & Defense',
  Automotive: 'Mobility & Transportation',
  Defense: 'Aerospace & Defense',
  'Housing and Real Estate': 'Real Estate & Proptech',
  Construction: 'Real Estate & Proptech',
};

/** YC tags → vocabulary, used (in the company's own tag order) when the sub-industry does not decide. */
const YC_TAG: Record<string, Industry> = {
  'Artificial Intelligence': 'Artificial Intelligence',
  AI: 'Artificial Intelligence',
  'Generative AI': 'Artificial Intelligence',
  'Machine Learning': 'Artificial Intelligence',
  ML: 'Artificial Intelligence',
  'AI Assistant': 'Artificial Intelligence',
  'Conversational AI': 'Artificial Intelligence',
  'Deep Learning': 'Artificial Intelligence',
  'Computer Vision': 'Artificial Intelligence',
  NLP: 'Artificial Intelligence',
  'Reinforcement Learning': 'Artificial Intelligence',
  'Developer Tools': 'Developer Tools',
  DevOps: 'Developer Tools',
  DevSecOps: 'Developer Tools',
  API: 'Developer Tools',
  APIs: 'Developer Tools',
  'Web Development': 'Developer Tools',
  Kubernetes: 'Developer Tools',
  SaaS: 'Enterprise Software',
  'Enterprise Software': 'Enterprise Software',
  Enterprise: 'Enterprise Software',
  B2B: 'Enterprise Software',
  'Workflow Automation': 'Enterprise Software',
  'Robotic Process Automation': 'Enterprise Software',
  Productivity: 'Enterprise Software',
  Sales: 'Enterprise Software',
  CRM: 'Enterprise Software',
  'HR Tech': 'Enterprise Software',
  Recruiting: 'Enterprise Software',
  Collaboration: 'Enterprise Software',
  LegalTech: 'Enterprise Software',
  Compliance: 'Enterprise Software',
  Fintech: 'Fintech',
  Payments: 'Fintech',
  Finance: 'Fintech',
  Neobank: 'Fintech',
  Insurance: 'Fintech',
  'Banking as a Service': 'Fintech',
  Lending: 'Fintech',
  Investing: 'Fintech',
  'Consumer Finance': 'Fintech',
  Cybersecurity: 'Cybersecurity',
  Security: 'Cybersecurity',
  Privacy: 'Cybersecurity',
  Identity: 'Cybersecurity',
  'Fraud Detection': 'Cybersecurity',
  'Fraud Prevention': 'Cybersecurity',
  'Cloud Computing': 'Cloud & Data Infrastructure',
  Infrastructure: 'Cloud & Data Infrastructure',
  'Data Engineering': 'Cloud & Data Infrastructure',
  Databases: 'Cloud & Data Infrastructure',
  'Big Data': 'Cloud & Data Infrastructure',
  Hardware: 'Semiconductors & Hardware',
  Semiconductors: 'Semiconductors & Hardware',
  Electronics: 'Semiconductors & Hardware',
  'E-commerce': 'E-commerce & Retail',
  'E-Commerce': 'E-commerce & Retail',
  Retail: 'E-commerce & Retail',
  Grocery: 'E-commerce & Retail',
  Fashion: 'E-commerce & Retail',
  Beauty: 'E-commerce & Retail',
  Social: 'Consumer Internet',
  'Social Media': 'Consumer Internet',
  'Social Network': 'Consumer Internet',
  Messaging: 'Consumer Internet',
  Dating: 'Consumer Internet',
  Gaming: 'Gaming & Media',
  Video: 'Gaming & Media',
  Entertainment: 'Gaming & Media',
  Media: 'Gaming & Media',
  Music: 'Gaming & Media',
  Podcasts: 'Gaming & Media',
  'Creator Economy': 'Gaming & Media',
  Aerospace: 'Aerospace & Defense',
  Drones: 'Aerospace & Defense',
  Airplanes: 'Aerospace & Defense',
  'Space Exploration': 'Space',
  Satellites: 'Space',
  'Commercial Space Launch': 'Space',
  Healthcare: 'Biotech & Healthcare',
  'Health Tech': 'Biotech & Healthcare',
  Biotech: 'Biotech & Healthcare',
  Biotechnology: 'Biotech & Healthcare',
  'Digital Health': 'Biotech & Healthcare',
  'Medical Devices': 'Biotech & Healthcare',
  Therapeutics: 'Biotech & Healthcare',
  'Healthcare IT': 'Biotech & Healthcare',
  'Drug discovery': 'Biotech & Healthcare',
  'AI-powered Drug Discovery': 'Biotech & Healthcare',
  Diagnostics: 'Biotech & Healthcare',
  Genomics: 'Biotech & Healthcare',
  Telemedicine: 'Biotech & Healthcare',
  Telehealth: 'Biotech & Healthcare',
  'Synthetic Biology': 'Biotech & Healthcare',
  Oncology: 'Biotech & Healthcare',
  Fitness: 'Health & Fitness',
  'Health & Wellness': 'Health & Fitness',
  'Sleep Tech': 'Health & Fitness',
  Transportation: 'Mobility & Transportation',
  'Electric Vehicles': 'Mobility & Transportation',
  Automotive: 'Mobility & Transportation',
  Mobility: 'Mobility & Transportation',
  'Autonomous Trucking': 'Mobility & Transportation',
  'Self-Driving Vehicles': 'Mobility & Transportation',
  Climate: 'Energy & Climate',
  ClimateTech: 'Energy & Climate',
  Energy: 'Energy & Climate',
  'Solar Power': 'Energy & Climate',
  'Renewable Energy': 'Energy & Climate',
  'Energy Storage': 'Energy & Climate',
  'Carbon Capture and Removal': 'Energy & Climate',
  Robotics: 'Robotics',
  Logistics: 'Logistics',
  'Supply Chain': 'Logistics',
  Proptech: 'Real Estate & Proptech',
  'Real Estate': 'Real Estate & Proptech',
  Construction: 'Real Estate & Proptech',
  Housing: 'Real Estate & Proptech',
  Marketing: 'Advertising & Marketing Tech',
  Advertising: 'Advertising & Marketing Tech',
  Education: 'Education',
  eLearning: 'Education',
  Edtech: 'Education',
  'AI-Enhanced Learning': 'Education',
};

const YC_CRYPTO_TAGS = ['Crypto / Web3', 'Cryptocurrency', 'DeFi', 'Blockchain', 'NFT'];

/** YC top-level industries that decide on their own when the sub-industry does not (before any tag). */
const YC_INDUSTRY: Record<string, Industry> = {
  Fintech: 'Fintech',
  Healthcare: 'Biotech & Healthcare',
  Education: 'Education',
  'Real Estate and Construction': 'Real Estate & Proptech',
};

/**
 * YC industry / subindustry ("B2B -> Security") / tags → vocabulary or null. Order: crypto tags; the
 * sub-industry table; the top-level industries above; the company's tags in its own order (a climate tag
 * counts only for Industrials and B2B companies: a consumer food brand tagged "Climate" is not an energy
 * company; business-software tags do not classify a Consumer company); finally plain B2B → Enterprise
 * Software. Anything else stays null.
 */
export function ycIndustry(industry: string | null, subindustry: string | null, tags: string[]): Industry | null {
  const t = new Set(tags.map((x) => x.trim()));
  if (YC_CRYPTO_TAGS.some((x) => t.has(x))) return 'Crypto & Blockchain';
  const top = industry?.trim() ?? '';
  const sub = subindustry?.includes('->') ? subindustry.split('->').pop()!.trim() : null;
  if (sub) {
    const rule = YC_SUBINDUSTRY[sub];
    const v = typeof rule === 'function' ? rule(t) : rule;
    if (v) return ind(v);
  }
  if (YC_INDUSTRY[top]) return ind(YC_INDUSTRY[top]!);
  for (const tag of tags) {
    const v = YC_TAG[tag.trim()];
    if (!v) continue;
    if (v === 'Energy & Climate' && top !== 'Industrials' && top !== 'B2B') continue;
    if (top === 'Consumer' && (v === 'Enterprise Software' || v === 'Developer Tools' || v === 'Cloud & Data Infrastructure')) continue;
    return ind(v);
  }
  return top === 'B2B' ? 'Enterprise Software' : null;
}

/** Antler "sector" → vocabulary ("Unknown" and "Industrials" stay null). */
export const ANTLER_SECTOR: Record<string, Industry> = {
  'B2B Software': 'Enterprise Software',
  ConsumerTech: 'Consumer Internet',
  FinTech: 'Fintech',
  'Health and BioTech': 'Biotech & Healthcare',
  'Energy and ClimateTech': 'Energy & Climate',
  'Real Estate and PropTech': 'Real Estate & Proptech',
};

// ---------------------------------------------------------------------------------------------
// Keys

/**
 * Assigns unique keys. `items` carry a wanted base key, the name and the source's own id; within a group of
 * equal base keys, order is name (code-point order) then id, and the first keeps the base, the others get
 * -2, -3, … (skipping any key already taken). Returns keys in the input order.
 */
export function uniqueKeys(items: { base: string; name: string; id: string }[]): string[] {
  const count = new Map<string, number>();
  for (const it of items) count.set(it.base, (count.get(it.base) ?? 0) + 1);
  const used = new Set<string>();
  const out: (string | undefined)[] = new Array(items.length);
  items.forEach((it, i) => {
    if (count.get(it.base) === 1) {
      out[i] = it.base;
      used.add(it.base);
    }
  });
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const rest = items
    .map((it, i) => ({ it, i }))
    .filter(({ i }) => out[i] === undefined)
    .sort((a, b) => cmp(a.it.base, b.it.base) || cmp(a.it.name, b.it.name) || cmp(a.it.id, b.it.id) || a.i - b.i);
  for (const { it, i } of rest) {
    let k = it.base;
    for (let n = 2; used.has(k); n++) k = `${it.base}-${n}`;
    used.add(k);
    out[i] = k;
  }
  return out as string[];
}

// ---------------------------------------------------------------------------------------------
// Rows and output

const ROW_KEYS: (keyof SourceRow)[] = [
  'key', 'name', 'aliases', 'registeredName', 'website', 'headquartersCity', 'headquartersRegion', 'headquartersCountry',
  'industry', 'foundedYear', 'employees', 'employeesAsOf', 'status', 'companyType', 'ipoDate', 'url', 'asOf',
  'valuations', 'rounds', 'investors',
];

function orderValuation(v: SourceValuation): SourceValuation {
  if (!isValidDate(v.date)) throw new Error(`bad valuation date ${v.date}`);
  if (!Number.isSafeInteger(v.valuationUsd) || v.valuationUsd <= 0) throw new Error(`bad valuation ${v.valuationUsd}`);
  return { date: v.date, valuationUsd: v.valuationUsd, basis: v.basis };
}

function orderRound(r: SourceRound): SourceRound {
  if (!isValidDate(r.date)) throw new Error(`bad round date ${r.date}`);
  if (r.amountUsd !== null && !Number.isSafeInteger(r.amountUsd)) throw new Error(`bad round amount ${r.amountUsd}`);
  return {
    date: r.date,
    roundType: clean(r.roundType)!,
    amountUsd: r.amountUsd,
    investors: r.investors.map((x) => clean(x)!).filter(Boolean),
    leadInvestors: r.leadInvestors.map((x) => clean(x)!).filter(Boolean),
  };
}

/**
 * A SourceRow with keys in the fixed order, strings trimmed, null/empty optional fields dropped, and the
 * invariants checked (dates, integer USD, https websites, vocabulary industry, key slug).
 */
export function finishRow(r: SourceRow): SourceRow {
  const out: Record<string, unknown> = {};
  for (const k of ROW_KEYS) {
    let v: unknown = r[k];
    if (v === null || v === undefined) continue;
    if (typeof v === 'string') {
      v = clean(v);
      if (v === null) continue;
    }
    if (Array.isArray(v)) {
      if (v.length === 0) continue;
      if (k === 'valuations') v = (v as SourceValuation[]).map(orderValuation);
      else if (k === 'rounds') v = (v as SourceRound[]).map(orderRound);
      else v = (v as string[]).map((x) => clean(x)).filter((x): x is string => x !== null);
      if ((v as unknown[]).length === 0) continue;
    }
    out[k] = v;
  }
  const row = out as unknown as SourceRow;
  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(row.key)) throw new Error(`bad key ${row.key}`);
  if (!row.name) throw new Error(`row ${row.key} has no name`);
  if (row.website && !/^https:\/\/[^\s]+$/.test(row.website)) throw new Error(`bad website ${row.website}`);
  if (row.industry && !IND.has(row.industry)) throw new Error(`bad industry ${row.industry}`);
  for (const d of [row.ipoDate, row.employeesAsOf, row.asOf]) if (d && !isValidDate(d)) throw new Error(`bad date ${d} in ${row.key}`);
  if (row.foundedYear !== undefined && row.foundedYear !== null && !(Number.isInteger(row.foundedYear) && row.foundedYear >= 1800 && row.foundedYear <= 2026)) {
    throw new Error(`bad foundedYear in ${row.key}`);
  }
  if (row.employees !== undefined && row.employees !== null && !(Number.isInteger(row.employees) && row.employees > 0)) {
    throw new Error(`bad employees in ${row.key}`);
  }
  return row;
}

/** Record fields a source supplies: those present in any row, in SourceRow order (key/url/asOf excluded). */
export function fieldsOf(rows: SourceRow[]): string[] {
  const present = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r)) present.add(k);
  return ROW_KEYS.filter((k) => present.has(k) && k !== 'key' && k !== 'url' && k !== 'asOf');
}

/** data/sources/ next to this folder. */
export const SOURCES_DIR = resolve(dirname(new URL(import.meta.url).pathname), '..', 'sources');

/**
 * Writes data/sources/<id>/rows.json (rows sorted by key, one JSON row per line) and manifest.json
 * (2-space JSON, sha256 of rows.json, row count, fields). Throws on duplicate keys.
 */
export function writeSource(
  meta: Omit<SourceManifest, 'rows' | 'sha256' | 'fields'>,
  rawRows: SourceRow[],
): { manifest: SourceManifest; rows: SourceRow[] } {
  const rows = rawRows.map(finishRow).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (let i = 1; i < rows.length; i++) if (rows[i]!.key === rows[i - 1]!.key) throw new Error(`duplicate key ${rows[i]!.key}`);
  const text = `[\n${rows.map((r) => JSON.stringify(r)).join(',\n')}\n]\n`;
  const sha256 = createHash('sha256').update(text, 'utf8').digest('hex');
  const manifest: SourceManifest = {
    id: meta.id,
    name: meta.name,
    url: meta.url,
    retrieved: meta.retrieved,
    licence: meta.licence,
    via: meta.via,
    rows: rows.length,
    sha256,
    fields: fieldsOf(rows),
    priority: meta.priority,
  };
  if (!/^\d{4}-\d{2}-\d{2}$/.test(manifest.retrieved) || !isValidDate(manifest.retrieved)) throw new Error(`bad retrieved ${manifest.retrieved}`);
  const dir = join(SOURCES_DIR, meta.id);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'rows.json'), text);
  writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return { manifest, rows };
}

/** One-line coverage summary printed by each script. */
export function summarise(id: string, rows: SourceRow[], notes: Record<string, number | string> = {}): void {
  const has = (f: (r: SourceRow) => unknown) => rows.filter((r) => {
    const v = f(r);
    return v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0);
  }).length;
  const stats = {
    rows: rows.length,
    website: has((r) => r.website),
    country: has((r) => r.headquartersCountry),
    industry: has((r) => r.industry),
    foundedYear: has((r) => r.foundedYear),
    valuations: has((r) => r.valuations),
    rounds: has((r) => r.rounds),
    investors: has((r) => r.investors),
    status: has((r) => r.status),
    companyType: has((r) => r.companyType),
  };
  console.log(`${id}: ${JSON.stringify(stats)}`);
  if (Object.keys(notes).length) console.log(`${id} notes: ${JSON.stringify(notes)}`);
}

// ---------------------------------------------------------------------------------------------
// Wikipedia "List of unicorn startup companies" tables (current + former), as scraped to CSV upstream

/**
 * Rows of one list that name the same company twice (the same `keyOf`, and `same` holds for the whole
 * group: e.g. two valuation rounds listed apart): one row in the first one's place, with every row's
 * aliases, the first industry given and every distinct valuation; counted in notes.mergedDuplicateRows.
 */
export function mergeRepeatedRows<T extends { name: string; aliases: string[]; industry: SourceRow['industry']; valuations: SourceValuation[] }>(
  parsed: T[],
  keyOf: (p: T) => string,
  same: (group: T[]) => boolean,
  notes: Record<string, number>,
): T[] {
  const groups = new Map<string, T[]>();
  for (const p of parsed) groups.set(keyOf(p), [...(groups.get(keyOf(p)) ?? []), p]);
  const merged: T[] = [];
  for (const p of parsed) {
    const group = groups.get(keyOf(p))!;
    if (!(group.length > 1 && same(group))) {
      merged.push(p);
      continue;
    }
    if (group[0] !== p) continue;
    notes.mergedDuplicateRows! += group.length - 1;
    const vals = new Map<string, SourceValuation>();
    for (const q of group) for (const v of q.valuations) vals.set(`${v.date}|${v.valuationUsd}|${v.basis}`, v);
    merged.push({
      ...p,
      aliases: dedupeAliases(p.name, group.flatMap((q) => q.aliases)),
      industry: group.map((q) => q.industry).find((x) => x) ?? null,
      valuations: [...vals.values()],
    });
  }
  return merged;
}

export const WIKIPEDIA_UNICORNS_URL = 'https://en.wikipedia.org/wiki/List_of_unicorn_startup_companies';
export const WIKIPEDIA_LICENCE = 'Wikipedia text CC BY-SA 4.0; facts only (valuation, date, country, industry), no sentences';

export interface WikipediaSnapshot {
  id: string;
  mirror: Mirror;
  currentPath: string;
  formerPath: string;
  /** The date the page snapshot holds for (YYYY-MM-DD). */
  retrieved: string;
  priority: number;
  /** The script's own path for `via`. */
  script: string;
  /**
   * Drops current-list valuations this scrape cannot tell from a lower bound: exact values (in billions) that
   * stand for "1+" and named (company, billions) pairs whose "+" the scrape lost.
   */
  lowerBoundValues?: number[];
  lowerBoundRows?: [string, number][];
}

type ExitKind = 'listing' | 'acquired' | 'acquired-ambiguous' | 'defunct' | 'devalued' | 'unknown';

/** The former list's "Exit reason" cell → what it says happened. */
export function exitKind(s: unknown): ExitKind {
  const t = (stripFootnotes(s) ?? '').toLowerCase();
  if (/^(ipo|spac merger|spac|direct listing|reverse takeover)$/.test(t)) return 'listing';
  if (/^ipo,\s*acquired$/.test(t)) return 'acquired-ambiguous';
  if (/^(acquired|acquisition)\b/.test(t)) return 'acquired';
  if (/^merger\s*to\s*\S+/.test(t)) return 'acquired';
  if (/^(defunct|bankruptcy|bankrupt)$/.test(t)) return 'defunct';
  if (/^(devalued|devaluation)$/.test(t)) return 'devalued';
  return 'unknown';
}

function pickColumn(header: string[], re: RegExp): number {
  const i = header.findIndex((h) => re.test(h.replace(/\s+/g, ' ').trim()));
  return i;
}

interface WikiParsed {
  listIndex: number;
  rowIndex: number;
  name: string;
  aliases: string[];
  country: string | null;
  industry: SourceRow['industry'];
  valuations: SourceValuation[];
  status: SourceRow['status'];
  companyType: SourceRow['companyType'];
  ipoDate: string | null;
}

/** Reads both tables of one snapshot, writes data/sources/<id>/, prints coverage and spot checks. */
export function extractWikipediaUnicorns(cfg: WikipediaSnapshot): void {
  const notes: Record<string, number> = {
    currentRows: 0,
    formerRows: 0,
    valuationLowerBoundOrRange: 0,
    valuationUnparsed: 0,
    valuationDateUnparsed: 0,
    valuationDroppedAsLowerBound: 0,
    multiCountry: 0,
    countryUnreadable: 0,
    industryUnmapped: 0,
    exitUnknownReason: 0,
    exitDateUnparsed: 0,
    exitValuationMissing: 0,
    mergedDuplicateRows: 0,
  };
  const unmappedIndustries = new Map<string, number>();
  const unknownReasons: string[] = [];
  const misalignedRows: string[] = [];
  const parsed: WikiParsed[] = [];

  [cfg.currentPath, cfg.formerPath].forEach((path, listIndex) => {
    const [rawHeader, ...body] = parseCsv(gitShow(cfg.mirror, path));
    if (!rawHeader) throw new Error(`${path}: empty`);
    const header = rawHeader.map((h) => h.trim());
    const col = {
      name: pickColumn(header, /^company$/i),
      val: pickColumn(header, /^(last )?valuation ?\(us\$ ?billions\)$/i),
      valDate: pickColumn(header, /^valuation date$/i),
      industry: pickColumn(header, /^industry$/i),
      country: pickColumn(header, /^country/i),
      exitDate: pickColumn(header, /^exit date$/i),
      exitReason: pickColumn(header, /^exit reason$/i),
      exitVal: pickColumn(header, /^exit valuation/i),
    };
    const former = listIndex === 1;
    for (const k of ['name', 'val', 'valDate', 'country'] as const) if (col[k] < 0) throw new Error(`${path}: no ${k} column in ${header.join('|')}`);
    if (!former && col.industry < 0) throw new Error(`${path}: no industry column`);
    if (former && (col.exitDate < 0 || col.exitReason < 0 || col.exitVal < 0)) throw new Error(`${path}: no exit columns`);

    body.forEach((cells, rowIndex) => {
      const cell = (i: number) => (i >= 0 ? (cells[i] ?? '') : '');
      const rawName = stripFootnotes(cell(col.name));
      if (!rawName) return;
      notes[former ? 'formerRows' : 'currentRows']!++;
      const paren = splitParenthetical(rawName);
      const name = stripCorporateSuffix(paren.name) || paren.name;
      const aliases = dedupeAliases(name, [paren.alias, name !== paren.name ? paren.name : null]);

      const c = singleCountry(cell(col.country));
      if (c.multi) notes.multiCountry!++;
      else if (!c.country && stripFootnotes(cell(col.country))) notes.countryUnreadable!++;

      let industry: SourceRow['industry'] = null;
      if (!former) {
        industry = wikipediaIndustry(cell(col.industry));
        const rawInd = stripFootnotes(cell(col.industry));
        if (!industry && rawInd) {
          notes.industryUnmapped!++;
          unmappedIndustries.set(rawInd.toLowerCase(), (unmappedIndustries.get(rawInd.toLowerCase()) ?? 0) + 1);
        }
      }

      // A row whose cells slid sideways in the scrape (a former-list exit valuation that is not a number, e.g.
      // "Uruguay") cannot be trusted for any figure; a current-list industry cell holding a date is reported.
      const rawExitVal = former ? stripFootnotes(cell(col.exitVal)) : null;
      const misaligned = rawExitVal !== null && !/^[\d.,]+\+?$/.test(rawExitVal);
      if (misaligned || (!former && parseHumanDate(cell(col.industry)))) misalignedRows.push(`${rawName} (${former ? 'former' : 'current'})`);

      const valuations: SourceValuation[] = [];
      const rawVal = stripFootnotes(cell(col.val));
      let usd = billionsToUsd(rawVal);
      const date = parseHumanDate(cell(col.valDate));
      if (rawVal && usd === null) {
        if (/\+$|[–-]/.test(rawVal)) notes.valuationLowerBoundOrRange!++;
        else notes.valuationUnparsed!++;
      }
      if (usd !== null && !former) {
        const b = usd / 1e9;
        if ((cfg.lowerBoundValues ?? []).includes(b) || (cfg.lowerBoundRows ?? []).some(([n, v]) => n === rawName && v === b)) {
          notes.valuationDroppedAsLowerBound!++;
          usd = null;
        }
      }
      if (misaligned) usd = null;
      if (usd !== null && !date) notes.valuationDateUnparsed!++;
      if (usd !== null && date) valuations.push({ date, valuationUsd: usd, basis: 'reported' });

      let status: SourceRow['status'] = null;
      let companyType: SourceRow['companyType'] = null;
      let ipoDate: string | null = null;
      if (former) {
        const kind = misaligned ? 'unknown' : exitKind(cell(col.exitReason));
        const exitDate = parseHumanDate(cell(col.exitDate));
        const exitUsd = billionsToUsd(cell(col.exitVal));
        if (kind === 'unknown') {
          notes.exitUnknownReason!++;
          unknownReasons.push(`${name}: ${JSON.stringify(stripFootnotes(cell(col.exitReason)) ?? '')}`);
        } else {
          if (!exitDate && stripFootnotes(cell(col.exitDate))) notes.exitDateUnparsed!++;
          if (kind === 'listing') {
            companyType = 'Public';
            if (exitDate && /^\d{4}-\d{2}-\d{2}$/.test(exitDate)) ipoDate = exitDate;
          } else if (kind === 'acquired' || kind === 'acquired-ambiguous') {
            status = 'Acquired';
            companyType = 'Acquired';
          } else if (kind === 'defunct') status = 'Defunct';
          const basis = kind === 'listing' ? 'ipo' : kind === 'acquired' ? 'merger' : kind === 'devalued' ? 'reported' : null;
          if (basis && exitDate && exitUsd !== null) valuations.push({ date: exitDate, valuationUsd: exitUsd, basis });
          else if (basis && exitUsd === null) notes.exitValuationMissing!++;
        }
      }
      parsed.push({ listIndex, rowIndex, name, aliases, country: c.country, industry, valuations, status, companyType, ipoDate });
    });
  });

  // The same company listed twice in one table (two valuation rounds, same country): one row.
  const merged = mergeRepeatedRows(
    parsed,
    (p) => `${p.listIndex}|${slug(p.name)}`,
    (group) => group.every((q) => q.country === group[0]!.country && q.status === group[0]!.status && q.companyType === group[0]!.companyType),
    notes,
  );

  const keys = uniqueKeys(
    merged.map((p) => ({ base: slug(p.name) || 'company', name: p.name, id: `${p.listIndex}-${String(p.rowIndex).padStart(5, '0')}` })),
  );
  const rows: SourceRow[] = merged.map((p, i) => ({
    key: keys[i]!,
    name: p.name,
    aliases: p.aliases,
    headquartersCountry: p.country,
    industry: p.industry,
    status: p.status,
    companyType: p.companyType,
    ipoDate: p.ipoDate,
    url: WIKIPEDIA_UNICORNS_URL,
    asOf: cfg.retrieved,
    valuations: [...p.valuations].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0)),
  }));

  const { rows: written } = writeSource(
    {
      id: cfg.id,
      name: `Wikipedia: List of unicorn startup companies (current and former), snapshot ${cfg.retrieved}`,
      url: WIKIPEDIA_UNICORNS_URL,
      retrieved: cfg.retrieved,
      licence: WIKIPEDIA_LICENCE,
      via: `${viaRef(cfg.mirror, [cfg.currentPath, cfg.formerPath].map((p) => (p.includes(' ') ? JSON.stringify(p) : p)))}; ${cfg.script}`,
      priority: cfg.priority,
    },
    rows,
  );
  summarise(cfg.id, written, notes);
  if (unmappedIndustries.size) {
    console.log(`${cfg.id} unmapped industries: ${[...unmappedIndustries.entries()].sort().map(([k, n]) => `${k} (${n})`).join('; ')}`);
  }
  if (misalignedRows.length) console.log(`${cfg.id} misaligned rows: ${misalignedRows.join('; ')}`);
  if (unknownReasons.length) console.log(`${cfg.id} exit reasons not read: ${unknownReasons.join('; ')}`);
  for (const k of ['anthropic', 'spacex', 'stripe', 'databricks', 'openai', 'bytedance']) {
    const r = written.find((x) => x.key === k);
    console.log(`${cfg.id} check ${k}: ${r ? JSON.stringify({ name: r.name, country: r.headquartersCountry, industry: r.industry, status: r.status, companyType: r.companyType, ipoDate: r.ipoDate, valuations: r.valuations }) : 'absent'}`);
  }
}
