/**
 * Operator routes on events (dashboard key): resolving an event settles its open positions
 * (server/trading/resolution.ts). Like every dashboard route it names an existing account in
 * x-account-id: the operator's own, recorded in the request log as who resolved it.
 */
import { z } from 'zod';
import { resolveEventOutcome } from '../server/trading/resolution.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { dashboardProcedure } from '../server/platform/procedures/base.ts';

export const eventsRouter = router({
  resolve: dashboardProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/events/{eventId}/resolution',
        tags: ['Operations'],
        summary: 'Resolve an event to its winning band, or void it (or correct either before anything settled); settles its open positions, exactly once',
        description:
          'For operators (a dashboard key, and x-account-id naming the operator\'s own account, recorded as who resolved it). Records the outcome, then settles every open position of the event: winning-band shares pay $1 (voided: every share $0.50) and the venue pays them out. Calling it again with the same outcome changes nothing and retries unpaid settlements; positions with a sale still pending settle on a later call.',
        errorResponses: [400, 404],
      },
    })
    .input(
      z
        .strictObject({
          eventId: z.string().min(1).max(200).meta({ description: 'Our id, the venue\'s event slug or an alias', example: 'openai-ipo' }),
          winningBandId: z.string().min(1).max(200).optional().meta({ description: 'The id of the band that won (GET /api/trading/events); or send voided', example: 'paper-openai-ipo-3' }),
          voided: z.literal(true).optional().meta({ description: 'The event was cancelled: every band\'s shares pay $0.50 (Polymarket\'s 50-50 for a cancelled market)', example: true }),
        })
        // One outcome per request: the example names the winning band (the other way is { "voided": true }).
        .meta({ examples: [{ winningBandId: 'paper-openai-ipo-3' }] })
        .refine((b) => (b.winningBandId === undefined) !== (b.voided === undefined), { message: 'send exactly one of winningBandId and voided', path: ['winningBandId'] }),
    )
    .output(
      z.object({
        eventId: z.string(),
        status: z.enum(['resolved', 'voided']),
        winningBandId: z.string().nullable().meta({ description: 'null when voided' }),
        winningBandLabel: z.string().nullable(),
        changed: z.boolean().meta({ description: 'false when the event already had this outcome (nothing is paid twice)' }),
        settled: z.number().int().meta({ description: 'Positions settled by this call' }),
        paid: z.number().int().meta({ description: 'Settlements the venue paid during this call' }),
        unpaid: z.number().int().meta({ description: 'Settlements still unpaid (retried by the next resolution call)' }),
        deferred: z.number().int().meta({ description: 'Open positions with a sale still pending: they settle on a later call' }),
      }),
    )
    .mutation(({ ctx, input }) => resolveEventOutcome(ctx.services, input.eventId, input.voided ? { voided: true } : { winningBandId: input.winningBandId! })),
});
