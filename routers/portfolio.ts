/**
 * Portfolio history: the user's market value, cost basis and P&L over time, rebuilt
 * from their trades and valued from the valuation candles; the last point is now, consistent with
 * GET /api/trading/positions. Key + x-user-id (standard rate), or a signed-in customer's session.
 * server/history/portfolio.ts, docs/history.md.
 */
import { z } from 'zod';
import { MAX_PORTFOLIO_POINTS, portfolioHistory } from '../server/history/portfolio.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { userProcedure } from '../server/platform/procedures/base.ts';
import { isoInstant, isoString, optionalParams } from './params.ts';

const TAGS = ['Positions'];

export const portfolioRouter = router({
  history: userProcedure
    .meta({
      session: true,
      openapi: {
        method: 'GET',
        path: '/trading/portfolio/history',
        tags: TAGS,
        summary: 'The user\'s portfolio over time: market value, cost basis, realised and unrealised P&L',
        description: `One point per interval boundary in the range, then one at its end; when the range ends now (the default), the last point is valued like GET /trading/positions (every position, at the current bids). At most ${MAX_PORTFOLIO_POINTS} points.`,
      },
    })
    .input(
      optionalParams({
        interval: z.enum(['1h', '1d']).default('1h').meta({ description: '1h (default) or 1d; points on UTC boundaries', example: '1d' }),
        from: isoInstant({ description: 'Start of the range: an ISO 8601 date or date-time; default 7 days (1h) or 365 days (1d) before to' })
          .meta({ example: '2026-10-01' })
          .optional(),
        to: isoInstant({ endOfDay: true, description: 'End of the range, inclusive (a date includes that whole UTC day); default, and at most, now' })
          .meta({ example: '2026-11-22' })
          .optional(),
      }, { ordered: [['from', 'to']] }),
    )
    .output(
      z.object({
        interval: z.enum(['1h', '1d']),
        points: z.array(
          z.object({
            time: isoString(),
            marketValue: z.number().meta({ description: 'What the holdings at that time would fetch at the bids then, USD' }),
            costBasis: z.number().meta({ description: 'Cost basis of the holdings at that time, USD' }),
            realizedPnl: z.number().meta({ description: 'Realised P&L of every trade (sales, settlements) up to that time, USD' }),
            unrealizedPnl: z.number().meta({ description: 'marketValue − costBasis, USD' }),
          }),
        ),
      }),
    )
    .query(({ ctx, input }) => portfolioHistory(ctx.services, ctx.user, input)),
});
