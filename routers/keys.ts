import { z } from 'zod';
import { createApiKey, listApiKeys, revokeApiKey } from '../server/accounts/api-keys.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { accountCreatingProcedure, dashboardProcedure } from '../server/platform/procedures/base.ts';
import { microsToUsd, usdToMicros } from '../server/lib/money.ts';
import { SCOPES, type Scope } from '../server/accounts/scopes.ts';
import { MODES } from '../server/accounts/modes.ts';
import { audited } from '../server/audit/log.ts';
import { keyCreated, keyRevoked } from '../server/audit/entries.ts';
import { auditActorOf } from '../server/platform/procedures/audit-actor.ts';
import { iso, isoOrNull, isoString, noInput, usdAmount } from './params.ts';

const TAG = ['API keys (dashboard)'];

/** A key's scopes as the answers show them: what it may do, and whether that is every scope (null stored). */
const scopeMembers = {
  scopes: z.array(z.enum(SCOPES)).meta({ description: 'What the key may do: every billed key route needs one of these (docs/accounts.md, "Scoped keys")', example: ['data:read', 'trading:read'] }),
  allScopes: z.boolean().meta({ description: 'true: created without scopes, so it holds every scope, including any added later' }),
};
const scopeView = (scopes: readonly Scope[] | null) => ({ scopes: scopes ? [...scopes] : [...SCOPES], allScopes: scopes === null });

const modeMember = {
  mode: z.enum(MODES).meta({ description: 'live: trades on the configured venue, billed from the balance. test: trades on the paper venue, with its own positions, orders, history, webhooks, usage and balance, billed at the test price (docs/accounts.md, "Test mode")', example: 'live' }),
};

const keyRecord = z.object({
  id: z.string(),
  name: z.string(),
  maskedKey: z.string().meta({ example: 'pipo_7Hq2…x9Zk' }),
  createdAt: isoString(),
  lastUsed: isoString().nullable(),
  status: z.enum(['active', 'revoked']),
  spendCapUsd: z.number().nullable().meta({ description: 'Above this spend per capPeriod (UTC) the key answers 402; null: no cap' }),
  capPeriod: z.enum(['day', 'month']).nullable(),
  spentThisPeriodUsd: z.number().nullable().meta({ description: 'Spent in the current day or month (capped keys)' }),
  ...scopeMembers,
  ...modeMember,
});

const capView = (k: { spendCapMicros: number | null; capPeriod: 'day' | 'month' | null; spentMicros?: number }) => ({
  spendCapUsd: k.spendCapMicros === null ? null : microsToUsd(k.spendCapMicros),
  capPeriod: k.capPeriod,
  spentThisPeriodUsd: k.spendCapMicros === null ? null : microsToUsd(k.spentMicros ?? 0),
});

export const keysRouter = router({
  list: dashboardProcedure
    .meta({
      session: true,
      openapi: {
        method: 'GET',
        path: '/keys',
        tags: TAG,
        summary: "The account's API keys, masked",
        description:
          'Every API key of the account named by x-account-id (or of the signed-in account), active and revoked, newest first: masked (the full key is shown once, when it is created), when it was last used, and its spend cap with what it spent this period.',
      },
    })
    .input(noInput())
    .output(z.object({ keys: z.array(keyRecord) }))
    .query(async ({ ctx }) => {
      const keys = await listApiKeys(ctx.services.database.db, ctx.accountId);
      return { keys: keys.map((k) => ({ id: k.id, name: k.name, maskedKey: k.maskedKey, status: k.status, createdAt: iso(k.createdAt), lastUsed: isoOrNull(k.lastUsed), ...capView(k), ...scopeView(k.scopes), mode: k.mode })) };
    }),

  /** The one dashboard route that may name a new account: its first key creates it. */
  create: accountCreatingProcedure
    .meta({
      session: true,
      openapi: {
        method: 'POST',
        path: '/keys',
        tags: TAG,
        summary: 'Create an API key; the full key is returned only here',
        description:
          'Creates a key for the account named by x-account-id; an account\'s first key creates the account. The answer\'s `key` is the only time the full key is shown: store it now. An optional spend cap per UTC day or month makes this key alone answer 402 once it is reached (the account\'s other keys keep working). Optional `scopes` limit what the key may do (a call outside them is 403 FORBIDDEN and costs nothing); without them it may do everything. `mode: "test"` makes a test key (`pipo_test_…`): it trades on the paper venue with the account\'s test side — positions, orders, history, webhooks, usage and balance of its own — at the test price, and never reads private-company data (it holds every scope but data:read).',
      },
      successStatus: 201,
    })
    .input(
      z
        .strictObject({
          name: z.string().trim().min(1).max(64).meta({ description: 'A label for the key, 1 to 64 characters, shown in lists', example: 'production backend' }),
          spendCapUsd: usdAmount({ min: 0.000001, max: 10_000_000 }).optional().meta({ description: 'The most this key may spend per capPeriod; above it the key answers 402 (other keys keep working)', example: 50 }),
          capPeriod: z.enum(['day', 'month']).optional().meta({ description: 'UTC day or month (default month); needs spendCapUsd', example: 'month' }),
          scopes: z
            .array(z.enum(SCOPES))
            .min(1)
            .max(SCOPES.length)
            .refine((s) => new Set(s).size === s.length, { message: 'each scope once' })
            .optional()
            .meta({ description: `What the key may do, one or more of ${SCOPES.join(', ')}; a call outside them is 403 FORBIDDEN and costs nothing. Absent: every scope (today's keys); a test key's: every scope but data:read`, example: ['data:read', 'trading:read'] }),
          mode: modeMember.mode.optional().meta({ description: 'live (default) or test', example: 'test' }),
        })
        .refine((input) => input.mode !== 'test' || !input.scopes?.includes('data:read'), {
          path: ['scopes'],
          message: 'a test key cannot hold data:read: private-company data is the same in both modes and is read with a live key',
        })
        .refine((input) => input.capPeriod === undefined || input.spendCapUsd !== undefined, { path: ['capPeriod'], message: 'needs spendCapUsd' }),
    )
    .output(
      z.object({
        id: z.string(),
        name: z.string(),
        key: z.string(),
        maskedKey: z.string(),
        createdAt: isoString(),
        spendCapUsd: z.number().nullable(),
        capPeriod: z.enum(['day', 'month']).nullable(),
        ...scopeMembers,
        ...modeMember,
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const key = {
        accountId: ctx.accountId,
        name: input.name,
        spendCapMicros: input.spendCapUsd === undefined ? null : usdToMicros(input.spendCapUsd),
        capPeriod: input.capPeriod,
        scopes: input.scopes,
        mode: input.mode,
      };
      const created = await audited(ctx.services.database.db, await auditActorOf(ctx), (tx) => createApiKey(tx, key), (k) => keyCreated(ctx.accountId, k));
      const { spendCapUsd, capPeriod } = capView(created);
      return { id: created.id, name: created.name, key: created.key, maskedKey: created.maskedKey, createdAt: iso(created.createdAt), spendCapUsd, capPeriod, ...scopeView(created.scopes), mode: created.mode };
    }),

  revoke: dashboardProcedure
    .meta({
      session: true,
      openapi: {
        method: 'DELETE',
        path: '/keys/{id}',
        tags: TAG,
        summary: 'Revoke an API key (permanent, immediate)',
        description: 'Revokes the key at once and for good: its next request answers 401. Its usage records stay. 404 when the account has no active key with this id.',
        errorResponses: [404],
      },
    })
    .input(z.strictObject({ id: z.string().min(1).max(64).meta({ description: 'The key\'s id (key_…, from GET /api/keys), not the key itself', example: 'key_FnfU71WQeSY3DWtAZpbSi1' }) }))
    .output(z.object({ success: z.literal(true), id: z.string(), status: z.literal('revoked'), revokedAt: isoString() }))
    .mutation(async ({ ctx, input }) => {
      const revoked = await audited(
        ctx.services.database.db,
        await auditActorOf(ctx),
        (tx) => revokeApiKey(tx, { accountId: ctx.accountId, keyId: input.id }),
        (r) => keyRevoked(ctx.accountId, r),
      );
      return { success: true as const, id: revoked.id, status: 'revoked' as const, revokedAt: iso(revoked.revokedAt) };
    }),
});
