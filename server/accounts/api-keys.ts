/**
 * API keys: `pipo_live_` or `pipo_test_` (the key's mode, modes.ts; keys made before modes are
 * `pipo_` and live) + 32 random bytes in base58. Only the SHA-256 is stored; the plaintext is returned
 * once, by createApiKey. Keys are looked up in the database on every request (never cached), so a revocation is seen by every
 * instance on its very next request.
 */
import { and, desc, eq, inArray, isNull, sql } from 'drizzle-orm';
import { prepared } from '../../db/prepared.ts';
import type { Db } from '../../db/client.ts';
import { accounts, apiKeys } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import { base58 } from '../lib/base58.ts';
import { newId } from '../lib/ids.ts';
import { SCOPES, type Scope } from './scopes.ts';
import { bothSides, keyPrefixOf, modeOfAccount, TEST_KEY_SCOPES, testSideOf, type Mode } from './modes.ts';

/** `pipo_` + base58 (keys before modes), or `pipo_live_`/`pipo_test_` + base58 (base58 has no `_`). */
const API_KEY_SHAPE = /^pipo_(?:(?:live|test)_)?[1-9A-HJ-NP-Za-km-z]{40,46}$/;
/** lastUsed is written at most once a minute per key, so a busy key does not write on every request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

export function hashApiKey(key: string): string {
  return new Bun.CryptoHasher('sha256').update(key).digest('hex');
}

export function maskApiKey(prefix: string, last4: string): string {
  return `${prefix}…${last4}`;
}

export interface ApiKeyView {
  id: string;
  name: string;
  maskedKey: string;
  createdAt: Date;
  lastUsed: Date | null;
  status: 'active' | 'revoked';
  spendCapMicros: number | null;
  capPeriod: 'day' | 'month' | null;
  /** Spent in the cap's current window (capped keys; 0 otherwise). */
  spentMicros: number;
  /** What the key may do (scopes.ts); null = every scope, including any added later. */
  scopes: Scope[] | null;
  mode: Mode;
}

/**
 * Issues a key. Creating an account's first key creates the account, in the same statement (the only
 * way an account comes to exist over HTTP; see accounts.ts); a test key belongs to the account's test
 * side (modes.ts), created with it, beside the account itself.
 */
const scopesOf = (scopes: readonly Scope[] | null) => (scopes ? SCOPES.filter((s) => scopes.includes(s)) : null);

export async function createApiKey(db: Db, input: { accountId: string; name: string; spendCapMicros?: number | null; capPeriod?: 'day' | 'month' | null; scopes?: readonly Scope[] | null; mode?: Mode }) {
  const mode = input.mode ?? 'live';
  const prefix = keyPrefixOf(mode);
  const key = prefix + base58(crypto.getRandomValues(new Uint8Array(32)));
  const owner = mode === 'test' ? testSideOf(input.accountId) : input.accountId;
  const row = {
    id: newId('key'),
    accountId: owner,
    name: input.name,
    keyHash: hashApiKey(key),
    // The mode's prefix and four characters of the key: enough to tell keys apart in a list.
    keyPrefix: key.slice(0, prefix.length + 4),
    keyLast4: key.slice(-4),
    spendCapMicros: input.spendCapMicros ?? null,
    capPeriod: input.spendCapMicros == null ? null : (input.capPeriod ?? 'month'),
    // In the vocabulary's order, once each: the listing shows them as stored. A test key that names none holds TEST_KEY_SCOPES.
    scopes: scopesOf(input.scopes ?? (mode === 'test' ? TEST_KEY_SCOPES : null)),
  };
  const owners = mode === 'test' ? [{ id: input.accountId }, { id: owner }] : [{ id: owner }];
  const account = db.$with('account').as(
    db.insert(accounts).values(owners).onConflictDoNothing({ target: accounts.id }).returning({ id: accounts.id }),
  );
  const [created] = await db.with(account).insert(apiKeys).values(row).returning({ createdAt: apiKeys.createdAt });
  return { id: row.id, name: row.name, key, mode, maskedKey: maskApiKey(row.keyPrefix, row.keyLast4), createdAt: created!.createdAt, spendCapMicros: row.spendCapMicros, capPeriod: row.capPeriod, scopes: row.scopes };
}

export async function listApiKeys(db: Db, accountId: string): Promise<ApiKeyView[]> {
  const rows = await db
    .select({
      id: apiKeys.id,
      name: apiKeys.name,
      keyPrefix: apiKeys.keyPrefix,
      keyLast4: apiKeys.keyLast4,
      createdAt: apiKeys.createdAt,
      lastUsedAt: apiKeys.lastUsedAt,
      revokedAt: apiKeys.revokedAt,
      spendCapMicros: apiKeys.spendCapMicros,
      capPeriod: apiKeys.capPeriod,
      scopes: apiKeys.scopes,
      owner: apiKeys.accountId,
      /** What the key spent in its current window (0 once a new day or month began). */
      spentMicros: sql<number>`case when ${apiKeys.capWindow} = (case when ${apiKeys.capPeriod} = 'day' then to_char(now() at time zone 'UTC', 'YYYY-MM-DD') else to_char(now() at time zone 'UTC', 'YYYY-MM') end) then ${apiKeys.capSpentMicros} else 0 end`.mapWith(Number),
    })
    .from(apiKeys)
    .where(inArray(apiKeys.accountId, bothSides(accountId)))
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    maskedKey: maskApiKey(r.keyPrefix, r.keyLast4),
    createdAt: r.createdAt,
    lastUsed: r.lastUsedAt,
    status: r.revokedAt ? 'revoked' : 'active',
    spendCapMicros: r.spendCapMicros,
    capPeriod: r.capPeriod,
    spentMicros: r.spentMicros,
    scopes: (r.scopes as Scope[] | null) ?? null,
    mode: modeOfAccount(r.owner),
  }));
}

/** Permanent; a key of either mode of the account. Revoking an unknown, foreign or already revoked key is NOT_FOUND. */
export async function revokeApiKey(db: Db, input: { accountId: string; keyId: string }) {
  const [row] = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKeys.id, input.keyId), inArray(apiKeys.accountId, bothSides(input.accountId)), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id, revokedAt: apiKeys.revokedAt });
  if (!row) throw new ApiError('NOT_FOUND', `No active API key ${input.keyId}`);
  return { id: row.id, revokedAt: row.revokedAt! };
}

export interface KeyPrincipal {
  /** The key that made the request; null for a signed-in customer's session (billed like a key, docs/decisions.md §4). */
  apiKeyId: string | null;
  accountId: string;
  /** The account's own standard rate, or null for the server default. */
  costPerRequestMicros: number | null;
}

/** A key as its lookup finds it: the principal and what it may do (scopes.ts; null = every scope). */
export interface KeyIdentity extends KeyPrincipal {
  scopes: readonly string[] | null;
}

/** The shape every issued key has; anything else is refused without a lookup. */
export const isApiKeyShaped = (presented: string) => API_KEY_SHAPE.test(presented);

/**
 * Resolves a presented key to its account; throws UNAUTHORIZED for anything else. Billed requests are
 * admitted by billing.admitBilledRequest in one statement; this lookup decides only between refusals
 * (is a rate-limited or malformed request 401 or 429/400?).
 */
export async function authenticateApiKey(db: Db, presented: string): Promise<KeyIdentity> {
  if (!isApiKeyShaped(presented)) throw new ApiError('UNAUTHORIZED', 'Invalid API key');
  const lookup = prepared(db, 'api_key_by_hash', (d) =>
    d
      .select({
        apiKeyId: apiKeys.id,
        accountId: apiKeys.accountId,
        revokedAt: apiKeys.revokedAt,
        scopes: apiKeys.scopes,
        costPerRequestMicros: accounts.costPerRequestMicros,
      })
      .from(apiKeys)
      .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
      .where(eq(apiKeys.keyHash, sql.placeholder('hash')))
      .limit(1)
      .prepare('api_key_by_hash'),
  );
  const [row] = await lookup.execute({ hash: hashApiKey(presented) });
  if (!row) throw new ApiError('UNAUTHORIZED', 'Invalid API key');
  if (row.revokedAt) throw new ApiError('UNAUTHORIZED', 'API key has been revoked');
  return { apiKeyId: row.apiKeyId, accountId: row.accountId, costPerRequestMicros: row.costPerRequestMicros, scopes: row.scopes };
}

/** Records that a key was used; written at most once per LAST_USED_RESOLUTION_MS (admitBilledRequest says when). */
export async function touchApiKey(db: Db, apiKeyId: string): Promise<void> {
  await db
    .update(apiKeys)
    .set({ lastUsedAt: new Date() })
    .where(and(eq(apiKeys.id, apiKeyId), sql`(${apiKeys.lastUsedAt} is null or ${apiKeys.lastUsedAt} < now() - make_interval(secs => ${LAST_USED_RESOLUTION_MS / 1000}))`));
}
