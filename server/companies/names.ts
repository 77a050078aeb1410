/**
 * The names a company is found by, folded one way for storage (company_names) and for queries, so
 * that "Zürich", "ZURICH" and "zurich" meet: Unicode compatibility form, accents dropped, lower case,
 * inner whitespace collapsed; a name's trailing legal form ("Inc.", "GmbH") is dropped, so a
 * registered name that only adds one is not stored twice and "Stripe, Inc." finds Stripe exactly.
 */
export function fold(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * A name as a part of an id (an investor's slug, a built record's or a market company's sourceId):
 * folded, every run of anything but a-z and 0-9 one `-`, at most `max` characters, no `-` at either
 * end; '' when nothing is left.
 */
export function slug(text: string, max: number): string {
  return fold(text)
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, max)
    .replace(/-+$/, '');
}

/** A legal-form suffix ("Stripe, Inc." → "Stripe"): a registered name that only adds one is no other name. */
const LEGAL_SUFFIX = /[,\s]+(inc|incorporated|llc|l\.l\.c|ltd|limited|corp|corporation|co|gmbh|ag|s\.?a|s\.?a\.?s|plc|b\.?v|n\.?v|pte\.? ltd|pty\.? ltd|oy|ab|s\.?r\.?l|s\.?p\.?a|se)\.?$/;

/** A name as stored and searched: folded, without a trailing legal form. */
export function nameForm(text: string): string {
  let folded = fold(text);
  for (let stripped = folded.replace(LEGAL_SUFFIX, ''); stripped !== folded && stripped.length > 0; stripped = folded.replace(LEGAL_SUFFIX, '')) folded = stripped;
  return folded;
}

/** The web domain of a site (`https://www.stripe.com/x` → `stripe.com`); null when it is not a URL. */
export function domainOf(website: string | null | undefined): string | null {
  if (!website) return null;
  try {
    const host = new URL(website).hostname.toLowerCase().replace(/^www\d?\./, '');
    return host.includes('.') ? host : null;
  } catch {
    return null;
  }
}

export const NAME_KIND = { name: 0, registeredName: 1, alias: 2, domain: 3 } as const;

/** Folded names of a record, each once, with the most telling kind (name before alias before domain). */
export function namesOf(c: { name: string; registeredName?: string | null; aliases?: string[] | null; website?: string | null }) {
  const out = new Map<string, number>();
  const add = (text: string | null | undefined, kind: number) => {
    const folded = text ? nameForm(text) : '';
    if (folded && !out.has(folded)) out.set(folded, kind);
  };
  add(c.name, NAME_KIND.name);
  add(c.registeredName, NAME_KIND.registeredName);
  for (const alias of c.aliases ?? []) add(alias, NAME_KIND.alias);
  const domain = domainOf(c.website);
  if (domain && !out.has(domain)) out.set(domain, NAME_KIND.domain);
  return [...out].map(([folded, kind]) => ({ folded, kind }));
}
