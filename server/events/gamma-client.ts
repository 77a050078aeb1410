/**
 * Reading events from Polymarket's Gamma API — one by slug (`GET /events/slug/<slug>`), or every
 * `ipo`-tagged one, page by page, for discovery (`GET /events?tag_slug=ipo`) — tolerantly: unknown
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
  /** Gamma's ordering index within the group (">$1T" carries "15"), not a valuation: never read as one. */
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

export interface IpoEventsOptions {
  baseUrl: string;
  /** Gamma's `closed` filter: the open events, or the closed ones (two passes read both). */
  closed: boolean;
  fetch?: typeof fetch;
  timeoutMs?: number;
  pageSize?: number;
  /** A bound on the pages read; reaching it with the last page full is an error, not a silent cut. */
  maxPages?: number;
}

/**
 * Every `ipo`-tagged event, open or closed, as Gamma sent it: raw objects, each parsed later on its own
 * (discovery.ts) so that one malformed event does not lose the page. Pages are read by offset until
 * one comes back short. Offset paging can repeat an event when the list shifts between two pages:
 * repeats (same id) are kept once.
 */
export async function fetchIpoEvents(options: IpoEventsOptions): Promise<unknown[]> {
  const pageSize = options.pageSize ?? 100;
  const maxPages = options.maxPages ?? 50;
  if (!Number.isInteger(pageSize) || pageSize < 1 || !Number.isInteger(maxPages) || maxPages < 1) throw new RangeError('pageSize and maxPages must be positive integers');
  const base = options.baseUrl.replace(/\/$/, '');
  const seen = new Set<string>();
  const events: unknown[] = [];
  for (let page = 0; page < maxPages; page++) {
    const offset = page * pageSize;
    const what = `the ${options.closed ? 'closed' : 'open'} IPO events at offset ${offset}`;
    const url = `${base}/events?tag_slug=ipo&closed=${options.closed}&limit=${pageSize}&offset=${offset}`;
    let response: Response;
    try {
      response = await (options.fetch ?? fetch)(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(options.timeoutMs ?? 10_000) });
    } catch (error) {
      throw new GammaError(`Gamma did not answer for ${what}: ${errorMessage(error)}`, { cause: error });
    }
    if (!response.ok) throw new GammaError(`Gamma answered ${response.status} for ${what}`);
    const body: unknown = await response.json().catch(() => undefined);
    if (!Array.isArray(body)) throw new GammaError(`Gamma's answer for ${what} is not a list of events`);
    for (const event of body) {
      const id = event && typeof event === 'object' && 'id' in event ? String(event.id) : null;
      if (id !== null && seen.has(id)) continue;
      if (id !== null) seen.add(id);
      events.push(event);
    }
    if (body.length < pageSize) return events;
  }
  throw new GammaError(`Gamma listed more than ${maxPages} pages of ${pageSize} ${options.closed ? 'closed' : 'open'} IPO events; raise maxPages`);
}
