import { z } from 'zod';
import { creditAccount, DEPOSIT_REFERENCE_PREFIX, getAccount, OPERATOR_REFERENCE_RULE, setAccountRate, setBillingPlan } from '../server/accounts/accounts.ts';
import { microsToUsd, usdToMicros } from '../server/lib/money.ts';
import { walletsOf } from '../server/auth/siwe.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { dashboardProcedure } from '../server/platform/procedures/base.ts';
import { audited } from '../server/audit/log.ts';
import { credited, planSet, rateSet } from '../server/audit/entries.ts';
import { auditActorOf } from '../server/platform/procedures/audit-actor.ts';
import { iso, isoString, noInput, usdAmount } from './params.ts';

const TAG = ['Accounts (dashboard)'];

const accountView = z.object({
  accountId: z.string(),
  balanceUsd: z.number(),
  costPerRequestUsd: z.number(),
  createdAt: isoString(),
  wallets: z.array(z.string()).meta({ description: 'Wallets that sign in to this account (EIP-4361)' }),
  billingPlan: z.enum(['prepaid', 'metered']).meta({ description: 'prepaid: paid from the balance; metered: exported to Stripe, never refused for balance' }),
  stripeCustomerId: z.string().nullable(),
  monthlyCapUsd: z.number().nullable().meta({ description: 'Metered accounts: requests above this spend in a UTC month are refused (402)' }),
  meteredThisMonthUsd: z.number().meta({ description: 'Metered spend of the current UTC month' }),
});

function toAccountView(account: Awaited<ReturnType<typeof getAccount>>, defaultRateMicros: number, wallets: string[]) {
  return {
    accountId: account.id,
    balanceUsd: microsToUsd(account.balanceMicros),
    costPerRequestUsd: microsToUsd(account.costPerRequestMicros ?? defaultRateMicros),
    createdAt: iso(account.createdAt),
    wallets,
    billingPlan: account.billingPlan,
    stripeCustomerId: account.stripeCustomerId,
    monthlyCapUsd: account.monthlyCapMicros === null ? null : microsToUsd(account.monthlyCapMicros),
    meteredThisMonthUsd: microsToUsd(account.meteredSpentMicros),
  };
}

export const accountsRouter = router({
  me: dashboardProcedure
    .meta({
      session: true,
      openapi: {
        method: 'GET',
        path: '/accounts/me',
        tags: TAG,
        summary: 'Balance and rate of the account named by x-account-id',
        description:
          'The account named by x-account-id (or the signed-in account): its prepaid balance, the price per request that applies to it, its billing plan (with the Stripe customer and monthly cap of a metered account, and its metered spend this month) and the wallets that sign in to it.',
      },
    })
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
        description:
          'Adds amountUsd to the prepaid balance of the account named by x-account-id. The reference makes it safe to retry: a reference the account already used credits nothing and answers credited false with the current balance.',
      },
    })
    .input(
      z.strictObject({
        amountUsd: usdAmount({ min: 0.000001, max: 1_000_000 }).meta({ description: 'USD to add, more than 0 and at most 1,000,000, with at most 6 decimals', example: 25 }),
        reference: z
          .string()
          .min(1)
          .max(128)
          .refine((reference) => !reference.startsWith(DEPOSIT_REFERENCE_PREFIX), OPERATOR_REFERENCE_RULE)
          .meta({ description: `Unique per account, e.g. an invoice or transfer id; shown to the customer in GET /api/accounts/balance-history. Must not start with ${DEPOSIT_REFERENCE_PREFIX} (kept for stablecoin deposits)`, example: 'invoice-2026-11-0042' }),
      }),
    )
    .output(z.object({ accountId: z.string(), balanceUsd: z.number(), credited: z.boolean() }))
    .mutation(async ({ ctx, input }) => {
      const amountMicros = usdToMicros(input.amountUsd);
      // Recorded only when it credited: a repeated reference changes nothing.
      const result = await audited(
        ctx.services.database.db,
        await auditActorOf(ctx),
        (tx) => creditAccount(tx, { accountId: ctx.accountId, amountMicros, reference: input.reference }),
        credited(ctx.accountId, input.reference, amountMicros),
      );
      return { accountId: ctx.accountId, balanceUsd: microsToUsd(result.balanceMicros), credited: result.credited };
    }),

  setRate: dashboardProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/accounts/rate',
        tags: TAG,
        summary: "Set the account's standard per-request rate",
        description:
          'Gives the account named by x-account-id its own price per standard request in place of the server\'s (COST_PER_REQUEST_USD), from its next request on; private-company routes cost ten times it. Answers the account.',
      },
    })
    .input(
      z.strictObject({
        costPerRequestUsd: usdAmount({ min: 0, max: 100 }).meta({ description: 'USD per standard request, 0 to 100, with at most 6 decimals (0 makes the account free)', example: 0.0015 }),
      }),
    )
    .output(accountView)
    .mutation(async ({ ctx, input }) => {
      const costPerRequestMicros = usdToMicros(input.costPerRequestUsd);
      const account = await audited(
        ctx.services.database.db,
        await auditActorOf(ctx),
        (tx) => setAccountRate(tx, { accountId: ctx.accountId, costPerRequestMicros }),
        () => rateSet(ctx.accountId, costPerRequestMicros),
      );
      return toAccountView(account, ctx.services.config.costPerRequestMicros, await walletsOf(ctx.services.database.db, ctx.accountId));
    }),

  setBillingPlan: dashboardProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/accounts/billing-plan',
        tags: TAG,
        summary: "Set the account's plan: prepaid (the balance pays) or metered (usage exported to Stripe, with an optional monthly cap)",
        description:
          'prepaid: every billed request is paid from the balance and refused (402) when it runs out. metered: requests are never refused for balance; their cost is exported to the Stripe customer, and an optional monthly cap refuses requests (402) once a UTC month reaches it. Answers the account.',
      },
    })
    .input(
      z
        .strictObject({
          plan: z.enum(['prepaid', 'metered']).meta({ description: 'prepaid (the balance pays) or metered (usage exported to Stripe)', example: 'metered' }),
          stripeCustomerId: z
            .string()
            .regex(/^cus_[A-Za-z0-9]{1,64}$/, 'must be a Stripe customer id (cus_…)')
            .optional()
            .meta({ description: 'Metered only, and required for it: the Stripe customer the usage is exported to', example: 'cus_Q8aZ3kLm2NpR4t' }),
          monthlyCapUsd: usdAmount({ min: 0.000001, max: 10_000_000 }).optional().meta({ description: 'Metered only: the most a UTC month may cost', example: 500 }),
        })
        .superRefine((input, issue) => {
          if (input.plan === 'metered' && !input.stripeCustomerId) issue.addIssue({ code: 'custom', path: ['stripeCustomerId'], message: 'required for the metered plan' });
          if (input.plan === 'prepaid' && (input.stripeCustomerId || input.monthlyCapUsd !== undefined)) issue.addIssue({ code: 'custom', path: ['plan'], message: 'a prepaid account has no Stripe customer or monthly cap' });
        }),
    )
    .output(accountView)
    .mutation(async ({ ctx, input }) => {
      const db = ctx.services.database.db;
      const change = { accountId: ctx.accountId, plan: input.plan, stripeCustomerId: input.stripeCustomerId, monthlyCapMicros: input.monthlyCapUsd === undefined ? null : usdToMicros(input.monthlyCapUsd) };
      const account = await audited(db, await auditActorOf(ctx), (tx) => setBillingPlan(tx, change), () => planSet(ctx.accountId, change));
      return toAccountView(account, ctx.services.config.costPerRequestMicros, await walletsOf(db, ctx.accountId));
    }),
});
