/**
 * The calling account's balance history (docs/accounts.md "Balance history"): every credit — an
 * operator's or a stablecoin deposit — newest first and keyset-paged, with the totals that explain
 * the balance. Billed at the standard rate like GET /api/billing, with a key or a signed-in session.
 */
import { z } from 'zod';
import { BALANCE_ENTRY_KINDS, balanceCursorProblem, balanceTotals, listBalanceEntries } from '../server/accounts/balance-history.ts';
import { microsToUsd } from '../server/lib/money.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { apiKeyProcedure } from '../server/platform/procedures/base.ts';
import { iso, isoString, optionalParams, wholeNumber } from './params.ts';

const entry = z.object({
  id: z.string().meta({ description: 'The credit', example: 'crd_7Rk2VbN9qWx4TmL8cHz3Pd' }),
  amountUsd: z.number().meta({ description: 'USD added to the balance (6 decimals, exact)', example: 25 }),
  kind: z.enum(BALANCE_ENTRY_KINDS).meta({
    description: 'deposit: a stablecoin deposit credited once final (depositId names it); operator_credit: funds the operator added (POST /api/accounts/credits or the CLI)',
    example: 'deposit',
  }),
  reference: z.string().meta({
    description: 'The credit\'s reference, unique per account: deposit:<chain id>:<tx hash>:<log index> for a deposit, the operator\'s own text for an operator credit',
    example: 'deposit:137:0x9b2f5c1e7d4a8b3c6e0f1a2d5b8c7e4f3a6d9c0b1e2f5a8d7c4b3e6f9a0d1c2b:0',
  }),
  depositId: z.string().nullable().meta({ description: 'The deposit credited (GET /api/accounts/deposits); null for an operator credit', example: 'dep_5Hq8WnR3xKpC7mVb2TyL9f' }),
  createdAt: isoString(),
});

const totals = z
  .object({
    creditedUsd: z.number().meta({ description: 'Every credit of the account, all time (deposits and operator credits)', example: 12 }),
    spentUsd: z.number().meta({ description: 'Every billed request of the account, all time, this request included (usageCostUsd of GET /api/billing)', example: 2.11 }),
    balanceUsd: z.number().meta({ description: 'The prepaid balance after this request', example: 9.89 }),
  })
  .meta({
    description: 'Read together: for a prepaid account balanceUsd = creditedUsd − spentUsd. Usage billed to a metered plan counts in spentUsd but is exported to Stripe, never taken from the balance.',
  });

export const balanceHistoryRouter = router({
  list: apiKeyProcedure
    .meta({
      scope: 'account:read',
      session: true,
      openapi: {
        method: 'GET',
        path: '/accounts/balance-history',
        tags: ['Account and billing'],
        summary: 'Every credit of the calling account, newest first, keyset-paged, with the totals that explain its balance',
        description:
          'Every balance credit of the calling account, newest first (ties by id): stablecoin deposits once credited (kind deposit, with their depositId) and the operator\'s credits (kind operator_credit), each with its amount and reference. Paged by cursor: pass the answer\'s nextCursor back for the next page (null on the last); there is no total. totals holds every credit and every billed request of the account, all time, and the balance: for a prepaid account balanceUsd = creditedUsd − spentUsd. With a signed-in session: that account, billed like a key\'s call (its row has no key).',
      },
    })
    .input(
      optionalParams(
        {
          limit: wholeNumber({ min: 1, max: 200 }).default(50).meta({ description: 'Entries per page, 1 to 200, default 50', example: 20 }),
          cursor: z
            .string()
            .min(1)
            .max(1000)
            .meta({ description: 'The nextCursor of the previous page (opaque); absent for the first page', example: 'WyJuZXdlc3QiLCIyMDI2LTExLTIyVDA2OjAwOjAwLjAwMDAwMFoiLCJjcmRfN1JrMlZiTjlxV3g0VG1MOGNIejNQZCJd' })
            .optional(),
        },
        { check: ({ cursor }) => balanceCursorProblem(cursor) },
      ),
    )
    .output(
      z.object({
        entries: z.array(entry),
        nextCursor: z.string().nullable().meta({ description: 'Pass as cursor for the next page; null on the last page' }),
        limit: z.number().int(),
        totals,
      }),
    )
    .query(async ({ ctx, input }) => {
      const db = ctx.services.database.db;
      const accountId = ctx.principal.accountId;
      const [page, sums] = await Promise.all([listBalanceEntries(db, { accountId, limit: input.limit, cursor: input.cursor }), balanceTotals(db, accountId)]);
      return {
        entries: page.entries.map((e) => ({ id: e.id, amountUsd: microsToUsd(e.amountMicros), kind: e.kind, reference: e.reference, depositId: e.depositId, createdAt: iso(e.createdAt) })),
        nextCursor: page.nextCursor,
        limit: input.limit,
        totals: { creditedUsd: microsToUsd(sums.creditedMicros), spentUsd: microsToUsd(sums.spentMicros), balanceUsd: microsToUsd(sums.balanceMicros) },
      };
    }),
});
