/**
 * Live and test mode (docs/accounts.md, "Test mode"). Every key is live or test, visible in its
 * prefix (`pipo_live_…`, `pipo_test_…`; keys made before modes, `pipo_…`, are live). A test key
 * belongs to its account's **test side**: a companion account, `<account>~test` (`~` is outside the
 * account-id alphabet, so no account can be named so), created with the account's first test key.
 * Everything a key does happens under its account, and every query already filters by account, so
 * the two modes never mix: a test key's positions, orders, history, settlements, webhooks, stream
 * events, usage and balance are the test side's, and its trades go to the paper venue
 * (trading/venue-of.ts). The live balance never pays for a test call.
 */
import { SCOPES } from './scopes.ts';

export type Mode = 'live' | 'test';
export const MODES = ['live', 'test'] as const;

export const TEST_SIDE_SUFFIX = '~test';

/** The account id of `accountId`'s test side. */
export const testSideOf = (accountId: string) => `${accountId}${TEST_SIDE_SUFFIX}`;

/** Whether an account id is a test side. */
export const isTestSide = (accountId: string) => accountId.endsWith(TEST_SIDE_SUFFIX);

/** The mode of an account id (a test side is test; every other account is live). */
export const modeOfAccount = (accountId: string): Mode => (isTestSide(accountId) ? 'test' : 'live');

/** The live account a test side belongs to (an account id that is no test side is its own). */
export const liveAccountOf = (accountId: string) => (isTestSide(accountId) ? accountId.slice(0, -TEST_SIDE_SUFFIX.length) : accountId);

/** An account and its test side: what belongs to the account in both modes (its keys, its audit log). */
export const bothSides = (accountId: string) => [liveAccountOf(accountId), testSideOf(liveAccountOf(accountId))];

/** The prefix of a new key of this mode. */
export const keyPrefixOf = (mode: Mode) => `pipo_${mode}_`;

/** The mode a presented key claims by its prefix (its lookup confirms it: the prefix is part of what is hashed). */
export const modeOfKey = (key: string): Mode => (key.startsWith('pipo_test_') ? 'test' : 'live');

/** The standard price of a call made with `key` (null: a session's, which is live): test keys pay the test price. */
export const standardCostOf = (config: Prices, key: string | null) => (key !== null && modeOfKey(key) === 'test' ? config.testCostPerRequestMicros : config.costPerRequestMicros);

/** The same for an account: a test side's standard price is the test price. */
export const standardCostOfAccount = (config: Prices, accountId: string) => (isTestSide(accountId) ? config.testCostPerRequestMicros : config.costPerRequestMicros);

type Prices = { costPerRequestMicros: number; testCostPerRequestMicros: number };

/**
 * A test key's scopes when it names none: every scope but data:read. Private-company data is the same
 * in both modes and priced as the product it is; a test key at the test price (free by default) must
 * not be a free way to read it.
 */
export const TEST_KEY_SCOPES = SCOPES.filter((s) => s !== 'data:read');
