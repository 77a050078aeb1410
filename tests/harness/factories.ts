/** Test data built through the domain functions (the HTTP paths are tested on their own). */
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { creditAccount, ensureAccount } from '../../server/accounts/accounts.ts';
import { createApiKey } from '../../server/accounts/api-keys.ts';
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
