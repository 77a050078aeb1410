/**
 * Reading an event from Polymarket's Gamma API (`GET /events/slug/<slug>`), tolerantly: unknown
 * fields are ignored, and the fields Gamma sends as JSON-encoded strings (`outcomes`,
 * `outcomePrices`, `clobTokenIds`) are decoded.
 */
import { z } from 'zod';
import { errorMessage } from '../lib/error-message.ts';

const jsonList = z.union([z.array(z.string()), z.string()]).transform((value, ctx) => {
  if (Array.isArray(value)) return value;
  try {
    const parsed = JSON.parse(value);
    if (Array.isArray(parsed)) return parsed.map(String);
  } catch {}
  ctx.addIssue({ code: 'custom', message: 'expected a JSON list' });
  return z.NEVER;
});
const numeric = z.union([z.number(), z.string()]).transform((v) => Number(v));

export const gammaMarketSchema = z.object({
  id: z.union([z.string(), z.number()]).transform(String),
  question: z.string().nullish(),
  conditionId: z.string().nullish(),
  slug: z.string().nullish(),
  groupItemTitle: z.string().nullish(),
  groupItemThreshold: numeric.nullish(),
  outcomes: jsonList.nullish(),
  outcomePrices: jsonList.nullish(),
  clobTokenIds: jsonList.nullish(),
  positionIds: jsonList.nullish(),
  version: z.string().nullish(),
  negRisk: z.boolean().nullish(),
  active: z.boolean().nullish(),
  closed: z.boolean().nullish(),
  acceptingOrders: z.boolean().nullish(),
  enableOrderBook: z.boolean().nullish(),
  orderMinSize: numeric.nullish(),
  orderPriceMinTickSize: numeric.nullish(),
  /** UMA's resolution state ("proposed", "disputed", "resolved", …); absent on markets never proposed. */
  umaResolutionStatus: z.string().nullish(),
});

export const gammaEventSchema = z.object({
  id: z.union([z.string(), z.number()]).transform((v) => Number(v)),
  slug: z.string(),
  title: z.string().nullish(),
  endDate: z.string().nullish(),
  negRisk: z.boolean().nullish(),
  active: z.boolean().nullish(),
  closed: z.boolean().nullish(),
  volume: numeric.nullish(),
  markets: z.array(gammaMarketSchema).default([]),
});

export type GammaMarket = z.infer<typeof gammaMarketSchema>;
export type GammaEvent = z.infer<typeof gammaEventSchema>;

export class GammaError extends Error {
  override name = 'GammaError';
}

/** The event, or null when Gamma has no event with this slug. */
export async function fetchGammaEvent(slug: string, options: { baseUrl: string; fetch?: typeof fetch; timeoutMs?: number }): Promise<GammaEvent | null> {
  const url = `${options.baseUrl.replace(/\/$/, '')}/events/slug/${encodeURIComponent(slug)}`;
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(options.timeoutMs ?? 10_000) });
  } catch (error) {
    throw new GammaError(`Gamma did not answer for ${slug}: ${errorMessage(error)}`, { cause: error });
  }
  if (response.status === 404) return null;
  if (!response.ok) throw new GammaError(`Gamma answered ${response.status} for ${slug}`);
  const parsed = gammaEventSchema.safeParse(await response.json().catch(() => undefined));
  if (!parsed.success) throw new GammaError(`Gamma's answer for ${slug} is not an event: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}
