/**
 * Entity resolution: which rows of which sources are one company (docs/data.md "Merge rules").
 * A row joins an existing company by web domain first, then by name (or a known alias), never when
 * the two disagree on domain or country, and never twice from the same source (two YC companies
 * called "Pilot" stay two companies). Everything else is a new company. Rows are taken in a fixed
 * order (curated, then sources by priority, rows by key), so the result is the same on every run.
 */
import type { CompanyRecord } from '../../server/companies/company-schema.ts';
import { domainOf, fold, slug } from '../../server/companies/names.ts';
import type { SourceManifest, SourceRow } from './source-row.ts';

export interface Part {
  source: SourceManifest;
  row: SourceRow;
}

/**
 * A written identity decision (data/joins.json), each with its reason: a row that is one company with
 * an earlier row although the rules would keep them apart (`sameAs`), a row that is not the company an
 * earlier row is although the names match (`notSameAs`), or other names the row's company is known by
 * that the source does not give (`aliases`: a company renamed since the snapshot).
 */
export interface Join {
  /** `<source id>:<row key>`: the row the entry is about. */
  row: string;
  /** `<source id>:<row key>` of a row merged before it (a source of lower priority number, or earlier in the same source), or `curated:<sourceId>`. */
  sameAs?: string;
  /** `<source id>:<row key>` of a row merged before it whose company this row's is not. */
  notSameAs?: string;
  /** Names the row's company is also known by (they become its aliases and are matched like the row's own). */
  aliases?: string[];
  why: string;
}

export interface Entity {
  sourceId: string;
  curated?: CompanyRecord;
  parts: Part[];
  domains: Set<string>;
  countries: Set<string>;
  /** Name keys of every name the company is known by (nameKey). */
  names: Set<string>;
  /** Name keys of its own names (a record's or row's name and registered name, not aliases). */
  ownNames: Set<string>;
}

const LEGAL = /\b(inc|incorporated|llc|l l c|ltd|limited|corp|corporation|co|company|gmbh|s ?a|ag|plc|b ?v|n ?v|srl|oy|ab|pte|pty|sas|spa|se)\b/g;
/** Words that often trail a name in one source and not another ("Mistral AI" / "Mistral"). */
const TRAILING = /\b(ai|labs?|technologies|technology|tech|software|systems|group|holdings|hq|app|io|health|bio|robotics|energy|finance|capital)\b/g;

/**
 * A name as compared: folded, punctuation and legal forms gone. A legal form leading other words is
 * part of the name ("AB Labs" is not "Labs"); anywhere else it goes ("Klarna AB", "Acme Co Ltd", "Inc.").
 */
export function nameKey(name: string): string {
  const words = fold(name)
    .replace(/&/g, ' and ')
    .replace(/[^a-z0-9]+/g, ' ')
    .replace(/^\s*the /, '')
    .trim();
  const first = /^\S+/.exec(words)?.[0] ?? '';
  const rest = words.slice(first.length).replace(LEGAL, ' ').trim();
  return (rest ? `${first} ${rest}` : first.replace(LEGAL, '')).replace(/\s+/g, ' ').trim();
}

/** The looser key, used only when both sides name the same country. */
export function looseKey(name: string): string {
  const loose = nameKey(name).replace(TRAILING, ' ').replace(/\s+/g, '').trim();
  return loose.length >= 3 ? loose : nameKey(name).replace(/\s+/g, '');
}

/** A record's slug: lowercase a-z, 0-9 and -, at most 100 characters. */
export const slugOf = (text: string) => slug(text, 100) || 'company';

/** Domains that many companies share (site builders, social networks): never evidence of identity. */
const SHARED_HOSTS = /(^|\.)(github\.io|notion\.site|linkedin\.com|facebook\.com|medium\.com|google\.com|wixsite\.com|webflow\.io|vercel\.app|carrd\.co|substack\.com|twitter\.com|x\.com|instagram\.com|apple\.com|angel\.co|crunchbase\.com|ycombinator\.com)$/;

export class Resolver {
  readonly entities: Entity[] = [];
  private byDomain = new Map<string, Entity>();
  private byName = new Map<string, Entity[]>();
  private byLoose = new Map<string, Entity[]>();
  private taken = new Set<string>();
  /** Domains given by more than one row of one source: ambiguous, so not used to join. */
  private ambiguous = new Set<string>();

  noteAmbiguousDomains(rows: SourceRow[]) {
    const seen = new Set<string>();
    for (const row of rows) {
      const d = usableDomain(row.website);
      if (!d) continue;
      if (seen.has(d)) this.ambiguous.add(d);
      seen.add(d);
    }
  }

  addCurated(record: CompanyRecord) {
    const entity: Entity = { sourceId: record.sourceId, curated: record, parts: [], domains: new Set(), countries: new Set(), names: new Set(), ownNames: new Set() };
    this.taken.add(record.sourceId);
    this.entities.push(entity);
    // A curated name may hold two ("Abnormal AI (Abnormal Security)"): each is a name of the company.
    this.index(entity, [record.name, record.registeredName, ...(record.aliases ?? [])].flatMap(variants), record.website, record.headquartersCountry);
    for (const n of [record.name, record.registeredName].flatMap(variants)) entity.ownNames.add(nameKey(n));
  }

  /**
   * Identity decisions the rules cannot make (data/joins.json: two sources disagreeing on the country,
   * one list naming a company twice, two companies of one name, a company renamed since a snapshot),
   * each with the reason written down.
   */
  constructor(private readonly joins: Join[] = []) {
    for (const j of joins) {
      const kinds = [j.sameAs, j.notSameAs, j.aliases].filter((k) => k !== undefined).length;
      if (kinds !== 1 || !j.why) throw new Error(`data/joins.json: ${j.row} needs exactly one of sameAs, notSameAs, aliases, and a why`);
    }
  }

  /** Entries whose row no source holds: a stale entry of data/joins.json. */
  unusedJoins(): Join[] {
    return this.joins.filter((j) => !this.used.has(j.row));
  }

  private readonly used = new Set<string>();

  add(source: SourceManifest, given: SourceRow): Entity {
    const id = `${source.id}:${given.key}`;
    const entries = this.joins.filter((j) => j.row === id);
    if (entries.length) this.used.add(id);
    // Names written for the row are the row's: matched, indexed and merged (as aliases) like its own.
    const extra = entries.flatMap((j) => j.aliases ?? []);
    const row = extra.length ? { ...given, aliases: [...(given.aliases ?? []), ...extra] } : given;
    const apart = new Set(entries.flatMap((j) => (j.notSameAs ? [this.holding(j.notSameAs, j.row, 'is apart from')] : [])));
    const entity = this.joined(entries) ?? this.find(source, row, apart) ?? this.create(source, row);
    entity.parts.push({ source, row });
    this.index(entity, [row.name, row.registeredName, ...(row.aliases ?? [])], row.website, row.headquartersCountry);
    for (const n of [row.name, row.registeredName]) if (n) entity.ownNames.add(nameKey(n));
    return entity;
  }

  /** The company an earlier row went to (`curated:<sourceId>`: a curated record). */
  private holding(target: string, row: string, verb: string): Entity {
    const e = this.entities.find((c) => (c.curated && `curated:${c.sourceId}` === target) || c.parts.some((p) => `${p.source.id}:${p.row.key}` === target));
    if (!e) throw new Error(`data/joins.json: ${row} ${verb} ${target}, which no earlier row is (an entry names a row of a source merged before it)`);
    return e;
  }

  private joined(entries: Join[]): Entity | undefined {
    const join = entries.find((j) => j.sameAs);
    return join ? this.holding(join.sameAs!, join.row, 'joins') : undefined;
  }

  private find(source: SourceManifest, row: SourceRow, apart: Set<Entity>): Entity | undefined {
    const domain = usableDomain(row.website);
    const country = row.headquartersCountry ? fold(row.headquartersCountry) : null;
    const open = (e: Entity) => !apart.has(e) && !e.parts.some((p) => p.source.id === source.id);
    // Snapshots of one list over time (wikipedia-unicorns-2024-05, -2026-07) name one company by one
    // name even when its listed country changes: a snapshot's row under a name another snapshot gave
    // the company. (Not under a name only another source gave: the lists' "Bird" scooters are not
    // YC's Bird, formerly MessageBird, which the lists also name.)
    const sameList = (e: Entity, key: string) =>
      e.parts.some((p) => family(p.source.id) === family(source.id) && [p.row.name, p.row.registeredName, ...(p.row.aliases ?? [])].some((n) => n && nameKey(n) === key));
    const agrees = (e: Entity, key?: string) =>
      (!domain || !e.domains.size || e.domains.has(domain)) && (!country || !e.countries.size || e.countries.has(country) || (key !== undefined && sameList(e, key)));
    // The same site is the strongest evidence, whatever the countries say (a portfolio's "country of
    // operation" is not a headquarters), as long as the names are plausibly one company's: an acquired
    // company listing its acquirer's site must not join the acquirer.
    if (domain) {
      const e = this.byDomain.get(domain);
      if (e && !this.ambiguous.has(domain) && open(e) && plausiblyNamed(row, e, domain)) return e;
      // A source listing one company twice (same site, same name) lists it once.
      if (e && !apart.has(e) && !open(e) && e.names.has(nameKey(row.name))) return e;
    }
    for (const name of [row.name, row.registeredName, ...(row.aliases ?? [])]) {
      if (!name) continue;
      const key = nameKey(name);
      // Of the companies of that name: first the one the same list named so in another snapshot, then
      // one whose own name it is, before one once called so ("Sift" is YC's Sift, not YC's Paragon,
      // formerly Sift).
      const candidates = (this.byName.get(key) ?? []).filter((c) => open(c) && agrees(c, key));
      const e = candidates.find((c) => sameList(c, key)) ?? candidates.find((c) => c.ownNames.has(key)) ?? candidates[0];
      if (e) return e;
    }
    if (!country) return undefined;
    return (this.byLoose.get(looseKey(row.name)) ?? []).find((c) => open(c) && agrees(c) && c.countries.has(country));
  }

  private create(source: SourceManifest, row: SourceRow): Entity {
    const base = slugOf(row.name);
    let sourceId = base;
    for (let n = 2; this.taken.has(sourceId); n++) sourceId = n === 2 ? `${base}-${source.id}`.slice(0, 120) : `${base}-${source.id}-${n}`.slice(0, 120);
    this.taken.add(sourceId);
    const entity: Entity = { sourceId, parts: [], domains: new Set(), countries: new Set(), names: new Set(), ownNames: new Set() };
    this.entities.push(entity);
    return entity;
  }

  private index(entity: Entity, names: Array<string | null | undefined>, website: string | null | undefined, country: string | null | undefined) {
    const domain = usableDomain(website);
    if (domain) {
      // An ambiguous domain is still indexed (a source's duplicate row finds its twin by it) but is no
      // evidence against another site, and joins no other source's row (find).
      if (!this.ambiguous.has(domain)) entity.domains.add(domain);
      if (!this.byDomain.has(domain)) this.byDomain.set(domain, entity);
    }
    if (country) entity.countries.add(fold(country));
    for (const name of names) {
      if (!name) continue;
      entity.names.add(nameKey(name));
      for (const [map, key] of [
        [this.byName, nameKey(name)],
        [this.byLoose, looseKey(name)],
      ] as const) {
        if (!key) continue;
        const list = map.get(key) ?? [];
        if (!list.includes(entity)) list.push(entity);
        map.set(key, list);
      }
    }
  }
}

/** A source's list, whatever the snapshot: `wikipedia-unicorns-2026-07` → `wikipedia-unicorns`. */
const family = (sourceId: string) => sourceId.replace(/-\d{4}-\d{2}$/, '');

/**
 * Whether a row joining by its site names the same company: a name shares its first word with one of
 * the company's, or the site's own name (`stripe` of stripe.com) is in the row's name or theirs.
 */
function plausiblyNamed(row: SourceRow, entity: Entity, domain: string): boolean {
  const label = domain.split('.')[0]!.replace(/[^a-z0-9]/g, '');
  const keys = [row.name, row.registeredName, ...(row.aliases ?? [])].filter((n): n is string => !!n).map(nameKey);
  const first = (k: string) => k.split(' ')[0]!;
  const compact = (k: string) => k.replace(/ /g, '');
  return keys.some((k) => [...entity.names].some((e) => first(e) === first(k)) || (label.length >= 3 && (compact(k).includes(label) || label.includes(compact(k)))));
}

/**
 * A name and, for "Abnormal AI (Abnormal Security)", both of the names it holds ("Superhuman (formerly
 * Grammarly)" holds Superhuman and Grammarly).
 */
function variants(name: string | null | undefined): string[] {
  if (!name) return [];
  const m = /^(.+?)\s*\(([^()]+)\)\s*$/.exec(name);
  return m ? [name, m[1]!, m[2]!.replace(/^(formerly|previously|fka|f\/k\/a|aka)\s+/i, '')] : [name];
}

function usableDomain(website: string | null | undefined): string | null {
  const d = domainOf(website);
  return d && !SHARED_HOSTS.test(d) ? d : null;
}
