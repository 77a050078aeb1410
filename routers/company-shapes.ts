/**
 * Shapes more than one company router answers: where a figure comes from, and a funding round (GET
 * /api/private-companies/{id}/rounds, GET /api/funding-rounds, an investor's recent rounds).
 */
import { z } from 'zod';

export const figureSource = z
  .object({
    id: z.string().meta({ description: 'The source the figure comes from: data/sources/<id>, or `curated` (the service\'s curated records) or `import` (a file an operator imported)', example: 'curated' }),
    url: z.string().nullable().meta({ description: 'The public page the figure was taken from; null when the record names none', example: 'https://en.wikipedia.org/wiki/OpenAI' }),
    asOf: z.string().meta({ description: 'The date the figure holds for (YYYY, YYYY-MM or YYYY-MM-DD)', example: '2026-03-31' }),
  })
  .meta({ description: 'Where a figure comes from and the date it holds for' });

const usdOrNull = (description: string) => z.number().int().nullable().meta({ description });

export const round = z.object({
  id: z.string().meta({ description: 'Stable: the company\'s sourceId, the date and the round type', example: 'openai:2026-03-31:venture-round' }),
  companyId: z.number().int(),
  date: z.string().meta({ description: 'YYYY-MM-DD or YYYY-MM', example: '2026-03-31' }),
  roundType: z.string().nullable().meta({ description: 'As the source words it (Series C, Tender offer (secondary), IPO, …)', example: 'Venture Round' }),
  amountUsd: usdOrNull('Raised, in USD; null when not reported'),
  preMoneyValuationUsd: usdOrNull('Pre-money valuation in USD, where reported'),
  postMoneyValuationUsd: usdOrNull('Post-money valuation in USD, where reported'),
  pricePerShareUsd: z.number().nullable().meta({ description: 'Price per share in USD, where reported' }),
  leadInvestors: z.array(z.string()).meta({ description: 'Lead investors of this round, where the source names them per round (else empty)' }),
  investors: z.array(z.string()).meta({ description: 'Investors of this round, where the source names them per round (else empty; the company\'s key investors are in its record\'s extra.keyInvestors)' }),
  source: figureSource,
});
