/**
 * Operator commands: the dashboard's account operations from a shell, on the configured database.
 *
 *   npm run cli -- create-key  --account acme --name "ci bot"
 *   npm run cli -- list-keys   --account acme
 *   npm run cli -- revoke-key  --account acme --key key_…
 *   npm run cli -- credit      --account acme --usd 25 --reference wire-2026-11-22
 *   npm run cli -- set-rate    --account acme --usd 0.001
 *   npm run cli -- set-plan    --account acme --plan metered --stripe-customer cus_… [--monthly-cap-usd 500]
 *   npm run cli -- set-plan    --account acme --plan prepaid
 *   npm run cli -- show        --account acme
 *   npm run cli -- resolve-event --event stripe-ipo --band BAND_ID   (or --void; settles the event's open positions)
 *   npm run cli -- list-events [--listing proposed|listed|hidden]   (every event with its listing)
 *   npm run cli -- approve-event --event ID   (lists a proposed or hidden event; announces event.listed)
 *   npm run cli -- hide-event    --event ID   (takes it off the customers' list; refused while positions are open)
 *   npm run cli -- reencrypt-credentials   (after setting a new TRADING_ENCRYPTION_KEY and listing
 *                                           the old one in TRADING_ENCRYPTION_PREVIOUS_KEYS)
 *
 * stdout is exactly one JSON document (the answer), so `npm run -s cli -- show --account acme | jq`
 * works; log lines and errors go to stderr. Exit codes: 1 for an error (an unknown account), 2 for
 * usage and configuration errors, 75 when a running server holds the embedded data directory (use
 * its HTTP/dashboard routes then), 69 when PostgreSQL did not answer in time.
 *
 * Only create-key creates an account; every other command on an unknown account fails, so a typo
 * never funds or configures a new account.
 */
import { parseArgs } from 'node:util';
import { IDENTIFIER, IDENTIFIER_RULE } from '../lib/identifiers.ts';
import { creditAccount, DEPOSIT_REFERENCE_PREFIX, ensureAccount, OPERATOR_REFERENCE_RULE, getAccount, setAccountRate, setBillingPlan } from '../accounts/accounts.ts';
import { createApiKey, listApiKeys, revokeApiKey } from '../accounts/api-keys.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { ApiError } from '../errors.ts';
import { resolveEventOutcome } from '../trading/resolution.ts';
import { EVENT_LISTINGS, listEventListings, setListing, type EventListing } from '../events/listing.ts';
import { reencryptAllCredentials } from '../trading/credentials.ts';
import { resealWebhookSecrets } from '../webhooks/reseal.ts';
import { createLogger } from '../lib/logger.ts';
import { microsToUsd, parseUsd } from '../lib/money.ts';
import { StartupError } from '../lib/startup-error.ts';
import type { Services } from '../platform/services.ts';
import { closeServices, openServices } from '../platform/start.ts';
import { errorFirstLine, errorMessage } from '../lib/error-message.ts';
import { audited, type AuditActor } from '../audit/log.ts';
import { credited, keyCreated, keyRevoked, listingSet, planSet, rateSet } from '../audit/entries.ts';

const USAGE = `usage: cli <create-key|list-keys|revoke-key|credit|set-rate|set-plan|show> --account ID [--name N] [--key ID] [--usd AMOUNT] [--reference REF]
       [--plan prepaid|metered] [--stripe-customer cus_…] [--monthly-cap-usd AMOUNT]
       cli reencrypt-credentials
       cli resolve-event --event ID (--band BAND_ID | --void)
       cli list-events [--listing proposed|listed|hidden]
       cli approve-event --event ID
       cli hide-event --event ID`;

export class UsageError extends Error {}

const COMMANDS = new Set(['create-key', 'list-keys', 'revoke-key', 'credit', 'set-rate', 'set-plan', 'show']);

function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`--${flag} is required\n${USAGE}`);
  return value;
}

function usd(value: string | undefined): number {
  const micros = parseUsd(required(value, 'usd'));
  if (micros === undefined) throw new UsageError('--usd must be a decimal amount with at most 6 decimals');
  return micros;
}

function parseCommandLine(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        account: { type: 'string' },
        name: { type: 'string' },
        key: { type: 'string' },
        usd: { type: 'string' },
        reference: { type: 'string' },
        event: { type: 'string' },
        band: { type: 'string' },
        void: { type: 'boolean' },
        plan: { type: 'string' },
        'stripe-customer': { type: 'string' },
        'monthly-cap-usd': { type: 'string' },
        listing: { type: 'string' },
      },
    });
  } catch (error) {
    // An unknown or value-less flag (`--acount`): a usage error, not a stack trace.
    throw new UsageError(`${errorMessage(error)}\n${USAGE}`);
  }
}

/** The account a command (other than create-key) works on; an unknown one is an error, never created. */
async function existingAccount(services: Services, accountId: string) {
  try {
    return await getAccount(services.database.db, accountId);
  } catch (error) {
    if (error instanceof ApiError && error.apiCode === 'NOT_FOUND') throw new ApiError('NOT_FOUND', `no account ${accountId}; create it with create-key`);
    throw error;
  }
}

/** Who the audit log says made a change from the command line (it runs on the server, as an operator there). */
const CLI_ACTOR: AuditActor = { kind: 'system', id: 'cli', clientIp: null, requestId: null };

/** Runs one command against open services; returns what it prints. */
export async function runCli(argv: string[], services: Services): Promise<unknown> {
  const { positionals, values } = parseCommandLine(argv);
  const db = services.database.db;
  const command = positionals[0];
  if (command === 'reencrypt-credentials') {
    const webhookSecrets = await resealWebhookSecrets(db, services.credentialCipher);
    return { ...(await reencryptAllCredentials(db, services.credentialCipher)), webhookSecrets, keyId: services.credentialCipher.currentKeyId };
  }
  if (command === 'resolve-event') {
    if (values.void && values.band) throw new UsageError(`--band and --void exclude each other\n${USAGE}`);
    return resolveEventOutcome(services, required(values.event, 'event'), values.void ? { voided: true } : { winningBandId: required(values.band, 'band') }, CLI_ACTOR);
  }
  if (command === 'list-events') {
    const listing = values.listing;
    if (listing !== undefined && !(EVENT_LISTINGS as readonly string[]).includes(listing)) throw new UsageError(`--listing must be one of ${EVENT_LISTINGS.join(', ')}\n${USAGE}`);
    return { events: await listEventListings(db, listing as EventListing | undefined) };
  }
  if (command === 'approve-event' || command === 'hide-event') {
    return audited(db, CLI_ACTOR, (tx) => setListing(tx, required(values.event, 'event'), command === 'approve-event' ? 'listed' : 'hidden'), listingSet);
  }
  const accountId = required(values.account, 'account');
  if (!IDENTIFIER.test(accountId)) throw new UsageError(`--account must be ${IDENTIFIER_RULE}`);
  if (!COMMANDS.has(command ?? '')) throw new UsageError(USAGE);
  if (command !== 'create-key') await existingAccount(services, accountId);
  switch (command) {
    case 'create-key': {
      await ensureAccount(db, accountId);
      const name = required(values.name, 'name');
      if (name.length > 64) throw new UsageError('--name must be at most 64 characters');
      const key = await audited(db, CLI_ACTOR, (tx) => createApiKey(tx, { accountId, name }), (k) => keyCreated(accountId, k));
      return { ...key, note: 'The full key is shown only now; store it safely.' };
    }
    case 'list-keys':
      return { keys: await listApiKeys(db, accountId) };
    case 'revoke-key':
      return audited(db, CLI_ACTOR, (tx) => revokeApiKey(tx, { accountId, keyId: required(values.key, 'key') }), (r) => keyRevoked(accountId, r));
    case 'credit': {
      const reference = required(values.reference, 'reference');
      if (reference.startsWith(DEPOSIT_REFERENCE_PREFIX)) throw new UsageError(`--reference ${OPERATOR_REFERENCE_RULE}`);
      const amountMicros = usd(values.usd);
      const result = await audited(db, CLI_ACTOR, (tx) => creditAccount(tx, { accountId, amountMicros, reference }), credited(accountId, reference, amountMicros));
      return { accountId, credited: result.credited, balanceUsd: microsToUsd(result.balanceMicros) };
    }
    case 'set-rate': {
      const costPerRequestMicros = usd(values.usd);
      const updated = await audited(db, CLI_ACTOR, (tx) => setAccountRate(tx, { accountId, costPerRequestMicros }), () => rateSet(accountId, costPerRequestMicros));
      return { accountId, costPerRequestUsd: microsToUsd(updated.costPerRequestMicros ?? 0) };
    }
    case 'set-plan': {
      const plan = required(values.plan, 'plan');
      if (plan !== 'prepaid' && plan !== 'metered') throw new UsageError('--plan must be prepaid or metered');
      const customer = values['stripe-customer'];
      if (plan === 'metered' && !/^cus_[A-Za-z0-9]{1,64}$/.test(customer ?? '')) throw new UsageError('--stripe-customer cus_… is required for the metered plan');
      if (plan === 'prepaid' && (customer || values['monthly-cap-usd'])) throw new UsageError('a prepaid account has no --stripe-customer or --monthly-cap-usd');
      const cap = values['monthly-cap-usd'] === undefined ? null : parseUsd(values['monthly-cap-usd']);
      if (cap === undefined || (cap !== null && cap <= 0)) throw new UsageError('--monthly-cap-usd must be a positive decimal amount with at most 6 decimals');
      const change = { accountId, plan, stripeCustomerId: customer ?? null, monthlyCapMicros: cap } as const;
      const updated = await audited(db, CLI_ACTOR, (tx) => setBillingPlan(tx, change), () => planSet(accountId, change));
      return { accountId, billingPlan: updated.billingPlan, stripeCustomerId: updated.stripeCustomerId, monthlyCapUsd: updated.monthlyCapMicros === null ? null : microsToUsd(updated.monthlyCapMicros) };
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

/** What stderr says about a failure: the message of the errors we raise; others in one line too (LOG_LEVEL=debug: with the stack). */
function errorLine(error: unknown): unknown {
  if (error instanceof ApiError || error instanceof UsageError || error instanceof ConfigError || error instanceof StartupError) return error.message;
  if (process.env.LOG_LEVEL === 'debug') return error;
  return `error: ${errorFirstLine(error)}`;
}

if (import.meta.main) {
  // stdout carries the answer only: whatever else would print there (a library's console.log) goes to stderr.
  const printAnswer = (answer: unknown) => process.stdout.write(JSON.stringify(answer, null, 2) + '\n');
  console.log = console.info = console.debug = console.error;
  let exitCode = 0;
  let services: Services | undefined;
  try {
    const config = loadConfig({ LOG_LEVEL: 'warn', ...process.env });
    services = await openServices(config, { seed: false, logger: createLogger(config.logLevel, 'stderr') });
    printAnswer(await runCli(process.argv.slice(2), services));
  } catch (error) {
    exitCode = error instanceof StartupError ? error.exitCode : error instanceof UsageError || error instanceof ConfigError ? 2 : 1;
    console.error(errorLine(error));
  } finally {
    if (services) await closeServices(services);
  }
  process.exit(exitCode);
}
