/**
 * Keeps what the records hold as things of their own (db/tables/company-graph.ts): each written
 * company's rounds, investor links and search names are replaced from its record, in the transaction
 * that writes the record, and the investors it touches get their portfolio counts recounted.
 */
import { inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { companyInvestors, companyNames, fundingRounds, investors, type StoredFigureSource } from '../../db/schema.ts';
import { dateKey, roundsOf } from './history.ts';
import { namesOf, slug } from './names.ts';
import type { Company } from './queries.ts';

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0] | Db;

/** An investor as a source describes it (data/sources/investors/), written by the seed step. */
export interface InvestorFact {
  name: string;
  type: string | null;
  country: string | null;
  website: string | null;
  source: StoredFigureSource;
}

/** The investor's stable id: its name as a slug (`Sequoia Capital` → `sequoia-capital`). */
export const investorSlug = (name: string) => slug(name, 120);

const BATCH = 500;

async function insertBatches<T>(rows: T[], insert: (batch: T[]) => Promise<unknown>) {
  for (let start = 0; start < rows.length; start += BATCH) await insert(rows.slice(start, start + BATCH));
}

/** Writes investor facts (type, country, website, source), by slug; investors named only in rounds stay as they are. */
export async function upsertInvestorFacts(tx: Tx, facts: InvestorFact[]) {
  const rows = facts.map((f) => ({ slug: investorSlug(f.name), name: f.name, type: f.type, country: f.country, website: f.website, source: f.source }));
  await insertBatches(rows, (batch) =>
    tx
      .insert(investors)
      .values(batch)
      .onConflictDoUpdate({
        target: investors.slug,
        set: { name: sql`excluded.name`, type: sql`excluded.type`, country: sql`excluded.country`, website: sql`excluded.website`, source: sql`excluded.source`, updatedAt: sql`now()` },
        setWhere: sql`(${investors.name}, ${investors.type}, ${investors.country}, ${investors.website}, ${investors.source}) is distinct from (excluded.name, excluded.type, excluded.country, excluded.website, excluded.source)`,
      }),
  );
}

/** Replaces the rounds, investor links and names of these companies from their records. */
export async function rebuildCompanyGraph(tx: Tx, rows: Company[]) {
  if (!rows.length) return;
  const ids = rows.map((r) => r.id);
  const previous = await tx.selectDistinct({ id: companyInvestors.investorId }).from(companyInvestors).where(inArray(companyInvestors.companyId, ids));
  await tx.delete(fundingRounds).where(inArray(fundingRounds.companyId, ids));
  await tx.delete(companyInvestors).where(inArray(companyInvestors.companyId, ids));
  await tx.delete(companyNames).where(inArray(companyNames.companyId, ids));

  const rounds = rows.flatMap((company) => roundsOf(company).map((round) => ({ company, round })));
  // Every investor named, by slug (the first spelling seen names a new investor).
  const named = new Map<string, string>();
  const nameOf = (n: string) => {
    const slug = investorSlug(n);
    if (slug && !named.has(slug)) named.set(slug, n.trim());
    return slug;
  };
  for (const { round } of rounds) for (const n of [...round.leadInvestors, ...round.investors]) nameOf(n);
  for (const company of rows) for (const n of (company.extra?.keyInvestors as string[] | undefined) ?? []) nameOf(n);
  await insertBatches([...named].map(([slug, name]) => ({ slug, name })), (batch) => tx.insert(investors).values(batch).onConflictDoNothing({ target: investors.slug }));
  const idOf = new Map<string, number>();
  for (let start = 0, slugs = [...named.keys()]; start < slugs.length; start += BATCH) {
    const found = await tx.select({ id: investors.id, slug: investors.slug }).from(investors).where(inArray(investors.slug, slugs.slice(start, start + BATCH)));
    for (const f of found) idOf.set(f.slug, f.id);
  }
  const investorId = (n: string) => idOf.get(investorSlug(n));

  const roundRows = rounds.map(({ company, round }) => ({
    id: round.id,
    companyId: company.id,
    date: round.date,
    dateKey: dateKey(round.date),
    roundType: round.roundType,
    roundTypeKey: round.roundType?.trim().toLowerCase() ?? null,
    amountUsd: round.amountUsd,
    preMoneyValuationUsd: round.preMoneyValuationUsd,
    postMoneyValuationUsd: round.postMoneyValuationUsd,
    pricePerShareUsd: round.pricePerShareUsd,
    leadInvestors: round.leadInvestors,
    investors: round.investors,
    investorIds: [...new Set([...round.leadInvestors, ...round.investors].flatMap((n) => investorId(n) ?? []))].sort((a, b) => a - b),
    source: round.source,
    industryKey: company.industry?.trim().toLowerCase() ?? null,
    countryKey: company.headquartersCountry?.trim().toLowerCase() ?? null,
  }));
  await insertBatches(roundRows, (batch) => tx.insert(fundingRounds).values(batch));

  // Portfolio links: every investor of a round (earliest date, whether it led one) and every key investor.
  const links = new Map<string, { investorId: number; companyId: number; firstDate: string | null; led: boolean }>();
  const link = (companyId: number, n: string, date: string | null, led: boolean) => {
    const id = investorId(n);
    if (id === undefined) return;
    const key = `${id}:${companyId}`;
    const current = links.get(key);
    if (!current) return void links.set(key, { investorId: id, companyId, firstDate: date, led });
    if (date && (!current.firstDate || dateKey(date) < dateKey(current.firstDate))) current.firstDate = date;
    current.led ||= led;
  };
  for (const { company, round } of rounds) {
    for (const n of round.leadInvestors) link(company.id, n, round.date, true);
    for (const n of round.investors) link(company.id, n, round.date, false);
  }
  for (const company of rows) for (const n of (company.extra?.keyInvestors as string[] | undefined) ?? []) link(company.id, n, null, false);
  await insertBatches([...links.values()], (batch) => tx.insert(companyInvestors).values(batch));

  const names = rows.flatMap((company) => namesOf(company).map((n) => ({ companyId: company.id, ...n })));
  await insertBatches(names, (batch) => tx.insert(companyNames).values(batch));

  const touched = [...new Set([...previous.map((p) => p.id), ...idOf.values()])];
  for (let start = 0; start < touched.length; start += BATCH) {
    await tx.execute(
      sql`update ${investors} set portfolio_count = (select count(*) from ${companyInvestors} ci where ci.investor_id = ${investors.id}), updated_at = now()
          where ${inArray(investors.id, touched.slice(start, start + BATCH))}
            and portfolio_count <> (select count(*) from ${companyInvestors} ci where ci.investor_id = ${investors.id})`,
    );
  }
}
