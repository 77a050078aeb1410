/**
 * 500-global: 500 Global's portfolio (500.co/companies) → data/sources/500-global/.
 *
 * Reads data/raw/500global_startups.json of github:nathanaelguitar/team17-vc-scout-model (the public
 * portfolio API response, `res[]`, committed 2026-07-16). Funds (businessModel "Fund" / stage "Active fund")
 * and test accounts are dropped. Name = business name (in the casing of the matching alternative name when
 * one exists); the legal name becomes registeredName when it differs. No one-liners. An investment date
 * that is not a real past day (a placeholder, or a day after the snapshot) leaves the link undated.
 *
 *   bun data/extract/500-global.ts
 */
import type { SourceRow } from '../build/source-row.ts';
import {
  type Mirror, clean, dedupeAliases, gitShow, isoDay, normaliseCountry, normaliseWebsite, slug, stripCorporateSuffix,
  summarise, uniqueKeys, viaRef, writeSource,
} from './common.ts';

const MIRROR: Mirror = { owner: 'nathanaelguitar', repo: 'team17-vc-scout-model', commit: 'c0f6e48821b33d0b5d05df0008075f43164d0301' };
const PATH = 'data/raw/500global_startups.json';
const PORTFOLIO = 'https://500.co/companies';
// The upstream commit that added the file (bb3a7c0, 2026-07-16).
const RETRIEVED = '2026-07-16';

interface Org {
  id: number;
  name?: string | null;
  alternativeName?: string | null;
  businessName?: string | null;
  companyUrl?: string | null;
  countryOfOperation?: { name?: string | null } | null;
}
interface Startup {
  id: number;
  organization: Org;
  businessModel?: { name?: string | null } | null;
  stage?: { name?: string | null } | null;
  investments?: { initialInvestDate?: string | null }[] | null;
}

const all = (JSON.parse(gitShow(MIRROR, PATH)) as { res: Startup[] }).res;
const notes = {
  upstreamRecords: all.length,
  droppedFunds: 0,
  droppedTestAccounts: 0,
  nameFromAlternative: 0,
  nameFromLegal: 0,
  droppedWebsites: 0,
  unknownCountries: 0,
  placeholderInvestDates: 0,
  futureInvestDates: 0,
  exitedStageNoStatus: 0,
  dissolved: 0,
};
const unknownCountries = new Set<string>();

const tidy = (s: unknown) => clean(String(s ?? '').replace(/[\s,;]+$/, ''));

const kept = all.filter((s) => {
  const o = s.organization;
  if (clean(s.businessModel?.name) === 'Fund' || /fund/i.test(clean(s.stage?.name) ?? '')) {
    notes.droppedFunds++;
    return false;
  }
  if (/\btest account\b/i.test(`${o.name ?? ''} ${o.businessName ?? ''}`)) {
    notes.droppedTestAccounts++;
    return false;
  }
  return Boolean(tidy(o.businessName) || tidy(o.name));
});

/** The domain's first label without "www.", lowercased alphanumerics: "https://www.fysical.com/x" → "fysical". */
function domainLabel(url: string | null): string | null {
  if (!url) return null;
  const host = new URL(url).hostname.replace(/^www\./, '');
  return host.split('.')[0]!.replace(/[^a-z0-9]/g, '') || null;
}

const parsed = kept.map((s) => {
  const o = s.organization;
  const legal = tidy(o.name);
  const business = tidy(o.businessName);
  // Alternative names, minus descriptive ones ("Kudo Digital Solutions Pte Ltd (acquired by Grab Inc)").
  const alts = (o.alternativeName ?? '').split(';').map((a) => tidy(a)).filter((a): a is string => a !== null && !/[()]/.test(a));
  const website = normaliseWebsite(o.companyUrl);
  let name: string;
  if (business) {
    name = alts.find((a) => a.toLowerCase() === business.toLowerCase()) ?? business;
  } else {
    const label = domainLabel(website);
    const bare = (a: string) => a.toLowerCase().replace(/\.(com|io|ai|co|me|net|org|app)$/, '').replace(/[^a-z0-9]/g, '');
    const byDomain = label ? alts.find((a) => bare(a) === label) : undefined;
    if (byDomain) name = byDomain;
    else if (alts.length === 1) name = alts[0]!;
    else if (legal) name = stripCorporateSuffix(legal) || legal;
    else name = alts[0]!;
    if (alts.includes(name)) notes.nameFromAlternative++;
    else notes.nameFromLegal++;
  }
  return { s, o, legal, name, alts, website };
});

const keys = uniqueKeys(parsed.map((p) => ({ base: slug(p.name) || (p.legal ? slug(p.legal) : '') || `500-global-${p.s.id}`, name: p.name, id: String(p.s.id).padStart(8, '0') })));

const rows: SourceRow[] = parsed.map(({ s, o, legal, name, alts, website }, i) => {
  if (clean(o.companyUrl) && !website) notes.droppedWebsites++;
  const rawCountry = clean(o.countryOfOperation?.name);
  const country = normaliseCountry(rawCountry);
  if (rawCountry && !country) {
    notes.unknownCountries++;
    unknownCountries.add(rawCountry);
  }
  const first = s.investments?.[0]?.initialInvestDate;
  let date = isoDay(first);
  if (clean(first) && !date) notes.placeholderInvestDates++;
  // A date after the snapshot cannot be a past investment (Cerberus: 2026-12-18 in a file of 2026-07-16):
  // not a fact, so the link stays undated, like a placeholder date.
  if (date && date > RETRIEVED) {
    notes.futureInvestDates++;
    date = null;
  }
  const stage = clean(s.stage?.name);
  // "Exited" does not say how (acquisition, IPO, buy-back, secondary), so it sets no status.
  if (stage === 'Exited') notes.exitedStageNoStatus++;
  let status: SourceRow['status'] = null;
  if (stage === 'Dissolved') {
    status = 'Defunct';
    notes.dissolved++;
  }
  const registeredName = legal && legal.toLowerCase() !== name.toLowerCase() ? legal : null;
  return {
    key: keys[i]!,
    name,
    aliases: dedupeAliases(name, alts.filter((a) => a.toLowerCase() !== registeredName?.toLowerCase())),
    registeredName,
    website,
    headquartersCountry: country,
    status,
    url: PORTFOLIO,
    asOf: RETRIEVED,
    rounds: date ? [{ date, roundType: 'Investment (500 Global)', amountUsd: null, investors: ['500 Global'], leadInvestors: [] }] : [],
    investors: date ? [] : ['500 Global'],
  };
});

const { rows: written } = writeSource(
  {
    id: '500-global',
    name: '500 Global portfolio',
    url: PORTFOLIO,
    retrieved: RETRIEVED,
    licence: '500 Global public portfolio API (no licence file upstream); identity facts only, no one-liners',
    via: `${viaRef(MIRROR, [PATH])}; data/extract/500-global.ts`,
    priority: 43,
  },
  rows,
);
summarise('500-global', written, { ...notes, unknownCountryValues: [...unknownCountries].join(' | ') });
