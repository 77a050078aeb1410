/**
 * Operator commands: the dashboard's account operations from a shell, on the configured database.
 *
 *   npm run cli -- create-key  --account acme --name "ci bot"
 *   npm run cli -- list-keys   --account acme
 *   npm run cli -- revoke-key  --account acme --key key_…
 *   npm run cli -- credit      --account acme --usd 25 --reference wire-2026-11-22
 *   npm run cli -- set-rate    --account acme --usd 0.001
 *   npm run cli -- show        --account acme
 *   npm run cli -- reencrypt-credentials   (after setting a new TRADING_ENCRYPTION_KEY and listing
 *                                           the old one in TRADING_ENCRYPTION_PREVIOUS_KEYS)
 *
 * Output is JSON on stdout; errors go to stderr with exit code 1 (2 for usage errors).
 */
import { parseArgs } from 'node:util';
import { creditAccount, ensureAccount, getAccount, setAccountRate } from './accounts/accounts.ts';
import { createApiKey, listApiKeys, revokeApiKey } from './accounts/api-keys.ts';
import { ConfigError, loadConfig } from './config.ts';
import { ApiError } from './errors.ts';
import { reencryptAllCredentials } from './trading/credentials.ts';
import { microsToUsd, parseUsd } from './lib/money.ts';
import type { Services } from './services.ts';
import { closeServices, openServices } from './start.ts';

const USAGE = `usage: cli <create-key|list-keys|revoke-key|credit|set-rate|show> --account ID [--name N] [--key ID] [--usd AMOUNT] [--reference REF]
       cli reencrypt-credentials`;

export class UsageError extends Error {}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`--${flag} is required\n${USAGE}`);
  return value;
}

function usd(value: string | undefined): number {
  const micros = parseUsd(required(value, 'usd'));
  if (micros === undefined) throw new UsageError('--usd must be a decimal amount with at most 6 decimals');
  return micros;
}

/** Runs one command against open services; returns what it prints. */
export async function runCli(argv: string[], services: Services): Promise<unknown> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { account: { type: 'string' }, name: { type: 'string' }, key: { type: 'string' }, usd: { type: 'string' }, reference: { type: 'string' } },
  });
  const db = services.database.db;
  const command = positionals[0];
  if (command === 'reencrypt-credentials') {
    return { ...(await reencryptAllCredentials(db, services.credentialCipher)), keyId: services.credentialCipher.currentKeyId };
  }
  const accountId = required(values.account, 'account');
  if (!/^[A-Za-z0-9._:@-]{1,128}$/.test(accountId)) throw new UsageError('--account must be 1-128 characters of A-Z a-z 0-9 . _ : @ -');
  switch (command) {
    case 'create-key': {
      await ensureAccount(db, accountId);
      const name = required(values.name, 'name');
      if (name.length > 64) throw new UsageError('--name must be at most 64 characters');
      const key = await createApiKey(db, { accountId, name });
      return { ...key, note: 'The full key is shown only now; store it safely.' };
    }
    case 'list-keys':
      return { keys: await listApiKeys(db, accountId) };
    case 'revoke-key':
      return revokeApiKey(db, { accountId, keyId: required(values.key, 'key') });
    case 'credit': {
      await ensureAccount(db, accountId);
      const result = await creditAccount(db, { accountId, amountMicros: usd(values.usd), reference: required(values.reference, 'reference') });
      return { accountId, credited: result.credited, balanceUsd: microsToUsd(result.balanceMicros) };
    }
    case 'set-rate': {
      await ensureAccount(db, accountId);
      const account = await setAccountRate(db, { accountId, costPerRequestMicros: usd(values.usd) });
      return { accountId, costPerRequestUsd: microsToUsd(account.costPerRequestMicros ?? 0) };
    }
    case 'show': {
      const account = await getAccount(db, accountId);
      return {
        accountId,
        balanceUsd: microsToUsd(account.balanceMicros),
        costPerRequestUsd: microsToUsd(account.costPerRequestMicros ?? services.config.costPerRequestMicros),
        createdAt: account.createdAt,
      };
    }
    default:
      throw new UsageError(USAGE);
  }
}

if (import.meta.main) {
  let exitCode = 0;
  let services: Services | undefined;
  try {
    services = await openServices(loadConfig({ LOG_LEVEL: 'warn', ...process.env }), { seed: false });
    console.log(JSON.stringify(await runCli(process.argv.slice(2), services), null, 2));
  } catch (error) {
    exitCode = error instanceof UsageError || error instanceof ConfigError ? 2 : 1;
    console.error(error instanceof ApiError || error instanceof UsageError || error instanceof ConfigError ? error.message : error);
  } finally {
    if (services) await closeServices(services);
  }
  process.exit(exitCode);
}
