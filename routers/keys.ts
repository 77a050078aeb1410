import { z } from 'zod';
import { createApiKey, listApiKeys, revokeApiKey } from '../server/accounts/api-keys.ts';
import { router } from '../server/trpc/init.ts';
import { accountCreatingProcedure, dashboardProcedure } from '../server/trpc/procedures.ts';
import { iso, isoOrNull, isoString, noInput } from './params.ts';

const TAG = ['API keys (dashboard)'];

const keyRecord = z.object({
  id: z.string(),
  name: z.string(),
  maskedKey: z.string().meta({ example: 'pipo_7Hq2…x9Zk' }),
  createdAt: isoString(),
  lastUsed: isoString().nullable(),
  status: z.enum(['active', 'revoked']),
});

export const keysRouter = router({
  list: dashboardProcedure
    .meta({ session: true, openapi: { method: 'GET', path: '/keys', tags: TAG, summary: "The account's API keys, masked" } })
    .input(noInput())
    .output(z.object({ keys: z.array(keyRecord) }))
    .query(async ({ ctx }) => {
      const keys = await listApiKeys(ctx.services.database.db, ctx.accountId);
      return { keys: keys.map((k) => ({ ...k, createdAt: iso(k.createdAt), lastUsed: isoOrNull(k.lastUsed) })) };
    }),

  /** The one dashboard route that may name a new account: its first key creates it. */
  create: accountCreatingProcedure
    .meta({
      session: true,
      openapi: { method: 'POST', path: '/keys', tags: TAG, summary: 'Create an API key; the full key is returned only here' },
      successStatus: 201,
    })
    .input(z.strictObject({ name: z.string().trim().min(1).max(64) }))
    .output(z.object({ id: z.string(), name: z.string(), key: z.string(), maskedKey: z.string(), createdAt: isoString() }))
    .mutation(async ({ ctx, input }) => {
      const created = await createApiKey(ctx.services.database.db, { accountId: ctx.accountId, name: input.name });
      return { ...created, createdAt: iso(created.createdAt) };
    }),

  revoke: dashboardProcedure
    .meta({ session: true, openapi: { method: 'DELETE', path: '/keys/{id}', tags: TAG, summary: 'Revoke an API key (permanent, immediate)', errorResponses: [404] } })
    .input(z.strictObject({ id: z.string().min(1).max(64) }))
    .output(z.object({ success: z.literal(true), id: z.string(), status: z.literal('revoked'), revokedAt: isoString() }))
    .mutation(async ({ ctx, input }) => {
      const revoked = await revokeApiKey(ctx.services.database.db, { accountId: ctx.accountId, keyId: input.id });
      return { success: true as const, id: revoked.id, status: 'revoked' as const, revokedAt: iso(revoked.revokedAt) };
    }),
});
