/**
 * Trading settings and venue credentials (docs/api.md "Trading settings and credentials",
 * docs/decisions.md §7). Key+User routes: everything is scoped to (account, x-user-id).
 */
import { getAddress, isAddress } from 'viem';
import { z } from 'zod';
import { credentialStatus, deleteCredentials, storeCredentials } from '../server/trading/credentials.ts';
import { getSettings, updateSettings, type TradingUser } from '../server/trading/settings.ts';
import type { Services } from '../server/platform/services.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { userProcedure } from '../server/platform/procedures/base.ts';
import { optionalParams } from './params.ts';
import { venueOf } from '../server/trading/venue-of.ts';
import { resetTestUser } from '../server/trading/reset.ts';
import { audited } from '../server/audit/log.ts';
import { auditActorOf } from '../server/platform/procedures/audit-actor.ts';
import { microsToUsd } from '../server/lib/money.ts';

const TAGS = ['Trading settings and credentials'];

const floor = (description: string, example: number) => z.number().min(0).max(1).optional().meta({ description, example });
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
    .meta({
      session: true,
      openapi: {
        method: 'GET',
        path: '/trading/settings',
        tags: TAGS,
        summary: 'Floors, wallet and whether venue credentials are stored',
        description:
          'The trading settings of the user in x-user-id: the LONG and SHORT floors buys use by default (0.20 and 0.15 until changed), the funding wallet, whether venue credentials are stored, and on the live venue the session key that signs the orders.',
      },
    })
    .output(settingsView)
    .query(({ ctx }) => settingsOf(ctx.services, ctx.user)),

  update: userProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/trading/settings',
        tags: TAGS,
        summary: 'Change floors and wallet; answers the full settings',
        description: 'Changes only the fields sent (floors for the next buys, the funding wallet; null clears the wallet) and answers the full settings. A floor outside 0 to 1 is 400 INVALID_FLOOR.',
      },
    })
    .input(
      optionalParams({
        floorL: floor('LONG floor, 0 to 1: what a LONG unit pays if the bottom band wins', 0.25),
        floorS: floor('SHORT floor, 0 to 1: what a SHORT unit pays if the top band wins', 0.15),
        walletAddress: z
          .string()
          .refine((a) => isAddress(a, { strict: false }), 'must be an EVM address (0x and 40 hex digits)')
          .transform((a) => getAddress(a))
          .nullable()
          .optional()
          .meta({ description: 'The funding wallet (an EVM address); null clears it', example: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' }),
      }),
    )
    .output(settingsView)
    .mutation(async ({ ctx, input }) => {
      await updateSettings(ctx.services.database.db, ctx.user, input);
      return settingsOf(ctx.services, ctx.user);
    }),

  storeCredentials: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/trading/credentials',
        tags: TAGS,
        summary: 'Store venue credentials (checked with the venue, encrypted at rest)',
        description:
          'Stores the user\'s venue API credentials, which buys and sales need: they are checked with the venue first (403 INVALID_CREDENTIALS when refused), encrypted at rest and never returned. Storing again replaces them.',
        errorResponses: [403],
      },
    })
    .input(
      z.strictObject({
        apiKey: z.string().min(1).max(512).meta({ description: 'The venue API key', example: '3f8a2c71-9d4e-4b6a-8e15-7c2d9f0b4a63' }),
        secret: z.string().min(1).max(512).meta({ description: 'The venue API secret (base64)', example: 'dGhpc2lzbm90YXJlYWxzZWNyZXRqdXN0YW5leGFtcGxlPQ==' }),
        passphrase: z.string().min(1).max(512).meta({ description: 'The venue API passphrase', example: '9c1e4b7f2a5d8e3b6c0f1a4d7e2b5c8f' }),
      }),
    )
    .output(outcome)
    .mutation(async ({ ctx, input }) => {
      const { database, credentialCipher } = ctx.services;
      // Checked with the venue before anything is written; recorded with the write (never the credentials themselves).
      await audited(database.db, await auditActorOf(ctx), (tx) => storeCredentials(tx, venueOf(ctx.services, ctx.user.accountId), credentialCipher, ctx.user, input), () => ({
        action: 'credentials.stored',
        accountId: ctx.user.accountId,
        targetId: ctx.user.userId,
      }));
      return { success: true, message: 'Venue credentials stored' };
    }),

  deleteCredentials: userProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/trading/credentials',
        tags: TAGS,
        summary: 'Delete stored venue credentials (idempotent)',
        description: 'Deletes the user\'s stored venue credentials; the message says whether there were any. Buys and sales need credentials again afterwards.',
      },
    })
    .output(outcome)
    .mutation(async ({ ctx }) => {
      const deleted = await audited(
        ctx.services.database.db,
        await auditActorOf(ctx),
        (tx) => deleteCredentials(tx, ctx.user),
        (gone) => (gone ? { action: 'credentials.deleted', accountId: ctx.user.accountId, targetId: ctx.user.userId } : null),
      );
      return { success: true, message: deleted ? 'Venue credentials deleted' : 'No venue credentials were stored' };
    }),

  reset: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/trading/reset',
        tags: TAGS,
        summary: 'Start a test user again: its test-mode positions, orders and history removed, the paper balance restored (test keys only)',
        description:
          'With a test key (pipo_test_…): removes every position, order, trade, settlement and idempotency key of the user in test mode and gives its paper account the starting balance again; the settings and stored credentials stay. 403 FORBIDDEN with a live key (live records are never erased); 422 ORDER_REJECTED while an order of the user is still PENDING (POST /api/trading/orders/sync first).',
        errorResponses: [403, 422],
      },
    })
    .output(z.object({ success: z.literal(true), positionsRemoved: z.number().int().meta({ description: 'Positions removed (open or not)' }), paperBalance: z.number().meta({ description: 'The paper account\'s collateral now, USD' }) }))
    .mutation(async ({ ctx }) => {
      const { positionsRemoved, collateralMicros } = await resetTestUser(ctx.services, ctx.user);
      return { success: true as const, positionsRemoved, paperBalance: microsToUsd(collateralMicros) };
    }),
});
