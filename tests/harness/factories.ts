/** Test data built through the domain functions (the HTTP paths are tested on their own). */
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { creditAccount, ensureAccount } from '../../server/accounts/accounts.ts';
import { createApiKey } from '../../server/accounts/api-keys.ts';
import { baseEventId } from '../../server/events/discovery.ts';
import { bandIssues, eventRecordSchema, type EventRecord } from '../../server/events/event-schema.ts';
import { usdToMicros } from '../../server/lib/money.ts';
import type { TestApp } from './app.ts';

let seq = 0;

export interface FundedAccount {
  accountId: string;
  apiKey: string;
  apiKeyId: string;
  headers: Record<string, string>;
}

export async function fundedAccount(test: TestApp, opts: { usd?: number; accountId?: string } = {}): Promise<FundedAccount> {
  const db = test.database.db;
  const accountId = opts.accountId ?? `acct-${process.pid}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;
  await ensureAccount(db, accountId);
  if ((opts.usd ?? 10) > 0) await creditAccount(db, { accountId, amountMicros: usdToMicros(opts.usd ?? 10), reference: `seed-${seq}` });
  const key = await createApiKey(db, { accountId, name: 'test key' });
  return { accountId, apiKey: key.key, apiKeyId: key.id, headers: { 'x-api-key': key.key } };
}

/** A fresh trading user id: an EVM address, as most callers send. */
export function newUserId(): string {
  return privateKeyToAccount(generatePrivateKey()).address;
}

export function dashboardHeaders(dashboardKey: string, accountId: string): Record<string, string> {
  return { 'x-api-key': dashboardKey, 'x-account-id': accountId };
}

/** A discovered bands event, as discovery builds it (from a slug Polymarket suffixed); valid by the event rules. */
export function discoveredEventRecord(slug: string, gammaEventId: number, company = 'Cerebras'): EventRecord {
  const band = (label: string, min: number, max: number | null, price: number, i: number) => ({
    label,
    minValuation: min,
    maxValuation: max,
    seedPrice: price,
    venue: { tokenId: `${gammaEventId}${i}0000000000000001`, conditionId: `0x${`${gammaEventId}${i}`.padEnd(64, 'a')}`, question: `${label}?`, threshold: null },
  });
  const record: EventRecord = {
    id: baseEventId(slug),
    name: `${company} IPO closing market cap`,
    company,
    companySourceId: null,
    status: 'open',
    resolvedBandIndex: null,
    endDate: '2027-06-30T00:00:00.000Z',
    volumeUsd: 125000,
    venue: { name: 'polymarket', eventSlug: slug, gammaEventId, negRisk: true, structure: 'bands' },
    bands: [band('No IPO', 0, 0, 0.2, 0), band('Below $20B', 0, 20, 0.3, 1), band('$20B–$40B', 20, 40, 0.3, 2), band('$40B+', 40, null, 0.2, 3)],
  };
  const issues = [...(eventRecordSchema.safeParse(record).error?.issues.map((i) => i.message) ?? []), ...bandIssues(record)];
  if (issues.length) throw new Error(`discoveredEventRecord: ${issues.join('; ')}`);
  return record;
}
