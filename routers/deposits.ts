/**
 * Stablecoin deposits: claim a transfer now, or list them. The account's owner (a
 * signed-in session) or the operator (dashboard key + x-account-id); never billed. The watcher
 * credits transfers without a claim too (server/deposits/watcher.ts).
 */
import { z } from 'zod';
import { limitFailedClaims } from '../server/platform/procedures/deposit-claim-limits.ts';
import { claimReceipts } from '../server/deposits/claim-reads.ts';
import { claimDeposit, listDeposits, type DepositView } from '../server/deposits/deposits.ts';
import { ApiError } from '../server/errors.ts';
import type { Services } from '../server/platform/services.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { dashboardProcedure } from '../server/platform/procedures/base.ts';
import { iso, isoOrNull, isoString, optionalParams, wholeNumber } from './params.ts';

const TAG = ['Accounts (dashboard)'];

const deposit = z.object({
  id: z.string(),
  chainId: z.number().int(),
  txHash: z.string(),
  logIndex: z.number().int(),
  token: z.string().meta({ description: 'The stablecoin contract' }),
  from: z.string().meta({ description: 'The sending wallet' }),
  amount: z.number().meta({ description: 'USD (6 decimals, exact)' }),
  status: z.enum(['pending', 'credited', 'unclaimed', 'dropped']).meta({ description: 'pending: its block is not final yet; credited; dropped: a chain reorganisation removed it' }),
  blockNumber: z.number().int(),
  creditedAt: isoString().nullable(),
  createdAt: isoString(),
});
const view = (d: DepositView) => ({ ...d, creditedAt: isoOrNull(d.creditedAt), createdAt: iso(d.createdAt) });

function chainOf(services: Services) {
  if (!services.config.deposits.address || !services.depositChain) {
    throw new ApiError('NOT_FOUND', 'Deposits are not enabled on this server (DEPOSIT_ADDRESS and POLYGON_RPC_URL)');
  }
  return services.depositChain;
}

export const depositsRouter = router({
  claim: dashboardProcedure
    .meta({
      session: true,
      openapi: {
        method: 'POST',
        path: '/accounts/deposits',
        tags: TAG,
        summary: 'Claim a stablecoin transfer to the deposit address: credited once its block is final (pending until then)',
        description:
          'Credits the account with the stablecoin transfers of this transaction to the service\'s deposit address (GET /api/accounts/deposits shows it), without waiting for the watcher: pending until its block is final, then credited once (claiming again credits nothing more). 404 when deposits are not enabled on this server or the transaction is not mined. Failed claims are limited per account and per client address (RATE_LIMIT_DEPOSIT_FAILURE_*): past the limit, 429 with Retry-After. 503 when the Polygon RPC does not answer.',
        errorResponses: [404, 503],
      },
    })
    .input(
      z.strictObject({
        txHash: z
          .string()
          .regex(/^0x[0-9a-fA-F]{64}$/, 'must be 0x followed by 64 hexadecimal digits')
          .meta({ description: 'The transaction that sent the stablecoin to the deposit address', example: '0x9b2f5c1e7d4a8b3c6e0f1a2d5b8c7e4f3a6d9c0b1e2f5a8d7c4b3e6f9a0d1c2b' }),
      }),
    )
    .output(z.object({ deposits: z.array(deposit) }))
    .mutation(async ({ ctx, input }) => {
      const chain = chainOf(ctx.services);
      const { config } = ctx.services;
      // Bounded chain reads per claim source: failed claims are limited per account and
      // address, and receipts are read once per hash, unknown hashes not again for a while.
      const { deposits } = await limitFailedClaims(ctx, ctx.accountId, () =>
        claimDeposit(ctx.services.database.db, chain, config.deposits, { accountId: ctx.accountId, txHash: input.txHash }, { readReceipt: claimReceipts(chain, config.deposits.notFound) }),
      );
      return { deposits: deposits.map(view) };
    }),

  list: dashboardProcedure
    .meta({
      session: true,
      openapi: {
        method: 'GET',
        path: '/accounts/deposits',
        tags: TAG,
        summary: "The account's deposits, newest first, with their transaction hashes",
        description:
          'The stablecoin transfers credited (or pending) to the account, newest first: chain, transaction, token, sender, amount and status, paged with limit and offset; and the deposit address to send to (null when deposits are not enabled).',
      },
    })
    .input(
      optionalParams({
        limit: wholeNumber({ min: 1, max: 1000 }).default(100).meta({ description: 'Deposits per page, 1 to 1000, default 100', example: 20 }),
        offset: wholeNumber({ min: 0, max: 1_000_000 }).default(0).meta({ description: 'Deposits to skip, default 0', example: 0 }),
      }),
    )
    .output(z.object({ deposits: z.array(deposit), total: z.number().int(), depositAddress: z.string().nullable() }))
    .query(async ({ ctx, input }) => {
      const page = await listDeposits(ctx.services.database.db, ctx.accountId, { limit: input.limit, offset: input.offset });
      return { deposits: page.deposits.map(view), total: page.total, depositAddress: ctx.services.config.deposits.address ?? null };
    }),
});
