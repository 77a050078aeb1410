/**
 * Trading settings and venue credentials (interface.md "Trading settings and credentials",
 * decisions §7). Key+User routes: everything is scoped to (account, x-user-id).
 */
import { getAddress, isAddress } from 'viem';
import { z } from 'zod';
import { credentialStatus, deleteCredentials, storeCredentials } from '../server/trading/credentials.ts';
import { getSettings, updateSettings, type TradingUser } from '../server/trading/settings.ts';
import type { Services } from '../server/services.ts';
import { router } from '../server/trpc/init.ts';
import { userProcedure } from '../server/procedures/base.ts';
import { noInput, optionalParams } from './params.ts';

const TAGS = ['Trading settings and credentials'];

const floor = (description: string) => z.number().min(0).max(1).optional().meta({ description });
const settingsView = z.object({
  floorL: z.number(),
  floorS: z.number(),
  walletAddress: z.string().nullable(),
  hasCredentials: z.boolean(),
  signerAddress: z.string().nullable().meta({ description: 'The session key that signs orders on the live venue; null on the paper venue' }),
});
const outcome = z.object({ success: z.boolean(), message: z.string() });

async function settingsOf(services: Services, user: TradingUser) {
  const db = services.database.db;
  const [settings, status] = await Promise.all([getSettings(db, user), credentialStatus(db, user)]);
  return { ...settings, ...status };
}

export const tradingSettingsRouter = router({
  get: userProcedure
    .meta({ session: true, openapi: { method: 'GET', path: '/trading/settings', tags: TAGS, summary: 'Floors, wallet and whether venue credentials are stored' } })
    .input(noInput())
    .output(settingsView)
    .query(({ ctx }) => settingsOf(ctx.services, ctx.user)),

  update: userProcedure
    .meta({ openapi: { method: 'PUT', path: '/trading/settings', tags: TAGS, summary: 'Change floors and wallet; answers the full settings' } })
    .input(
      optionalParams({
        floorL: floor('LONG floor, 0 to 1'),
        floorS: floor('SHORT floor, 0 to 1'),
        walletAddress: z
          .string()
          .refine((a) => isAddress(a, { strict: false }), 'must be an EVM address (0x and 40 hex digits)')
          .transform((a) => getAddress(a))
          .nullable()
          .optional()
          .meta({ description: 'The funding wallet; null clears it' }),
      }),
    )
    .output(settingsView)
    .mutation(async ({ ctx, input }) => {
      await updateSettings(ctx.services.database.db, ctx.user, input);
      return settingsOf(ctx.services, ctx.user);
    }),

  storeCredentials: userProcedure
    .meta({
      openapi: { method: 'POST', path: '/trading/credentials', tags: TAGS, summary: 'Store venue credentials (checked with the venue, encrypted at rest)', errorResponses: [403] },
    })
    .input(z.strictObject({ apiKey: z.string().min(1).max(512), secret: z.string().min(1).max(512), passphrase: z.string().min(1).max(512) }))
    .output(outcome)
    .mutation(async ({ ctx, input }) => {
      const { database, venue, credentialCipher } = ctx.services;
      await storeCredentials(database.db, venue, credentialCipher, ctx.user, input);
      return { success: true, message: 'Venue credentials stored' };
    }),

  deleteCredentials: userProcedure
    .meta({ openapi: { method: 'DELETE', path: '/trading/credentials', tags: TAGS, summary: 'Delete stored venue credentials (idempotent)' } })
    .input(noInput())
    .output(outcome)
    .mutation(async ({ ctx }) => {
      const deleted = await deleteCredentials(ctx.services.database.db, ctx.user);
      return { success: true, message: deleted ? 'Venue credentials deleted' : 'No venue credentials were stored' };
    }),
});
