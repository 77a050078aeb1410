/**
 * What a key may do (docs/accounts.md, "Scoped keys"). Every billed key route needs one scope; a key
 * holds a set of them, or all of them (`scopes` null: every key made before scopes existed, and every
 * key made without naming any, keeps today's behaviour). A session is the account holder's and holds
 * all. A call outside its key's scopes is 403 FORBIDDEN naming the scope, and costs nothing.
 */
export const SCOPES = ['data:read', 'trading:read', 'trading:write', 'account:read', 'account:write'] as const;
export type Scope = (typeof SCOPES)[number];

export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'data:read': 'private companies, rounds and investors (the premium-rate data)',
  'trading:read': 'positions, orders, history, settlements, quotes, the trading users and the account stream',
  'trading:write': 'buy, sell, venue credentials, trading settings, orders/sync and positions/sync',
  'account:read': 'usage, billing, balance history and webhooks (read)',
  'account:write': 'webhooks (create, delete, test, rotate the secret)',
};

/** The scope a billed key route needs when its definition names none: by its price and kind. */
export function defaultScope(route: { access?: string; billing?: string }, kind: 'query' | 'mutation' | 'subscription'): Scope | undefined {
  if (route.billing === 'premium') return 'data:read';
  if (route.access === 'user') return kind === 'mutation' ? 'trading:write' : 'trading:read';
  return undefined;
}

/** Whether a key holding `held` (null: all) may call a route needing `needed`. */
export const allows = (held: readonly string[] | null, needed: Scope) => held === null || held.includes(needed);

/** The refusal's message: which scope, and what the key holds. */
export const missingScopeMessage = (needed: Scope, held: readonly string[]) =>
  `This API key lacks the scope ${needed} (it holds ${held.length ? held.join(', ') : 'none'}); create a key with it (POST /api/keys, scopes) or use a key that has it`;
