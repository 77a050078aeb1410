/** GET /trading/users: the account's trading users (x-user-id values), for choosing whose positions to read. */
import { z } from 'zod';
import { accountUsers } from '../server/trading/account-users.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { apiKeyProcedure } from '../server/platform/procedures/base.ts';
import { iso, isoString, optionalParams, wholeNumber } from './params.ts';

export const tradingUsersRouter = router({
  list: apiKeyProcedure
    .meta({
      scope: 'trading:read',
      session: true,
      openapi: {
        method: 'GET',
        path: '/trading/users',
        tags: ['Positions'],
        summary: "The account's trading users (every x-user-id it has traded for or configured), most recently active first",
        description:
          'Every trading user of the calling account (each x-user-id it has traded for or stored settings for), most recently active first, with how many positions each holds: for choosing whose positions to read. Needs only the key (no x-user-id).',
      },
    })
    .input(optionalParams({ limit: wholeNumber({ min: 1, max: 1000 }).default(200).meta({ description: 'At most this many users, 1 to 1000, default 200', example: 50 }) }))
    .output(
      z.object({
        users: z.array(
          z.object({
            userId: z.string().meta({ description: 'The x-user-id to send to read or trade for this user' }),
            openPositions: z.number().int().meta({ description: 'Positions open or pending' }),
            positions: z.number().int().meta({ description: 'All positions, whatever their status' }),
            lastActivityAt: isoString().nullable(),
          }),
        ),
      }),
    )
    .query(async ({ ctx, input }) => ({
      users: (await accountUsers(ctx.services.database.db, ctx.principal.accountId, input.limit)).map((u) => ({ ...u, lastActivityAt: u.lastActivityAt ? iso(u.lastActivityAt) : null })),
    })),
});
