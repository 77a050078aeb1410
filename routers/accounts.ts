import { z } from 'zod';
import { creditAccount, getAccount, setAccountRate } from '../server/accounts/accounts.ts';
import { microsToUsd, usdToMicros } from '../server/lib/money.ts';
import { walletsOf } from '../server/auth/siwe.ts';
import { router } from '../server/trpc/init.ts';
import { dashboardProcedure } from '../server/trpc/procedures.ts';
import { iso, isoString, noInput, usdAmount } from './params.ts';

const TAG = ['Accounts (dashboard)'];

const accountView = z.object({
  accountId: z.string(),
  balanceUsd: z.number(),
  costPerRequestUsd: z.number(),
  createdAt: isoString(),
  wallets: z.array(z.string()).meta({ description: 'Wallets that sign in to this account (EIP-4361)' }),
});

function toAccountView(account: Awaited<ReturnType<typeof getAccount>>, defaultRateMicros: number, wallets: string[]) {
  return {
    accountId: account.id,
    balanceUsd: microsToUsd(account.balanceMicros),
    costPerRequestUsd: microsToUsd(account.costPerRequestMicros ?? defaultRateMicros),
    createdAt: iso(account.createdAt),
    wallets,
  };
}

export const accountsRouter = router({
  me: dashboardProcedure
    .meta({ session: true, openapi: { method: 'GET', path: '/accounts/me', tags: TAG, summary: 'Balance and rate of the account named by x-account-id' } })
    .input(noInput())
    .output(accountView)
    .query(async ({ ctx }) => {
      const account = await getAccount(ctx.services.database.db, ctx.accountId);
      return toAccountView(account, ctx.services.config.costPerRequestMicros, await walletsOf(ctx.services.database.db, ctx.accountId));
    }),

  credit: dashboardProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/accounts/credits',
        tags: TAG,
        summary: 'Add funds (idempotent on reference: a repeated reference credits nothing)',
      },
    })
    .input(
      z.strictObject({
        amountUsd: usdAmount({ min: 0.000001, max: 1_000_000 }),
        reference: z.string().min(1).max(128).meta({ description: 'Unique per account, e.g. the stablecoin transfer hash' }),
      }),
    )
    .output(z.object({ accountId: z.string(), balanceUsd: z.number(), credited: z.boolean() }))
    .mutation(async ({ ctx, input }) => {
      const result = await creditAccount(ctx.services.database.db, {
        accountId: ctx.accountId,
        amountMicros: usdToMicros(input.amountUsd),
        reference: input.reference,
      });
      return { accountId: ctx.accountId, balanceUsd: microsToUsd(result.balanceMicros), credited: result.credited };
    }),

  setRate: dashboardProcedure
    .meta({ openapi: { method: 'PUT', path: '/accounts/rate', tags: TAG, summary: "Set the account's standard per-request rate" } })
    .input(z.strictObject({ costPerRequestUsd: usdAmount({ min: 0, max: 100 }) }))
    .output(accountView)
    .mutation(async ({ ctx, input }) => {
      const account = await setAccountRate(ctx.services.database.db, {
        accountId: ctx.accountId,
        costPerRequestMicros: usdToMicros(input.costPerRequestUsd),
      });
      return toAccountView(account, ctx.services.config.costPerRequestMicros, await walletsOf(ctx.services.database.db, ctx.accountId));
    }),
});
