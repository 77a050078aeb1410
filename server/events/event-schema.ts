/**
 * An event as the seed files hold it, with the band rules of docs/decisions.md §6: ascending, contiguous and
 * exclusive bands; a "No IPO" band, if any, first as 0..0; the top band open (max null).
 */
import { z } from 'zod';

const bandVenue = z.strictObject({
  tokenId: z.string().regex(/^\d{1,100}$/, 'must be a decimal token id').nullable(),
  conditionId: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex id').nullable(),
  question: z.string().nullable(),
  threshold: z.number().nonnegative().nullable(),
});

const slug = z.string().regex(/^[a-z0-9][a-z0-9-]{1,63}$/, 'must be a lowercase slug');

export const eventRecordSchema = z.strictObject({
  id: slug,
  /** Other ids the event answers to (server/events/resolve.ts), e.g. the docs' `spacex-ipo`. */
  aliases: z.array(slug).optional(),
  name: z.string().min(1),
  company: z.string().min(1),
  companySourceId: z.string().nullable(),
  status: z.enum(['open', 'closed', 'resolved']),
  resolvedBandIndex: z.number().int().nonnegative().nullable(),
  endDate: z.iso.datetime({ offset: true }).nullable(),
  volumeUsd: z.number().nonnegative().nullable(),
  venue: z.strictObject({
    name: z.literal('polymarket'),
    eventSlug: z.string().min(1).nullable(),
    gammaEventId: z.number().int().positive().nullable(),
    negRisk: z.boolean().nullable(),
    structure: z.enum(['bands', 'ladder']),
  }),
  bands: z
    .array(
      z.strictObject({
        label: z.string().min(1),
        minValuation: z.number().nonnegative(),
        maxValuation: z.number().nonnegative().nullable(),
        seedPrice: z.number().min(0).max(1),
        venue: bandVenue,
      }),
    )
    .min(1),
  sources: z.array(z.string()).optional(),
  notes: z.string().optional(),
});

export type EventRecord = z.infer<typeof eventRecordSchema>;

/** Cross-band rules; each message names the band. */
export function bandIssues(e: EventRecord): string[] {
  const issues: string[] = [];
  const bands = e.bands;
  bands.forEach((b, i) => {
    const noIpo = b.minValuation === 0 && b.maxValuation === 0;
    if (noIpo && i !== 0) issues.push(`bands.${i}: a No IPO band must be band 0`);
    if (b.maxValuation !== null && b.maxValuation < b.minValuation) issues.push(`bands.${i}: maxValuation below minValuation`);
    if (b.maxValuation === null && i !== bands.length - 1) issues.push(`bands.${i}: only the top band may be open-ended`);
    if (!noIpo && b.maxValuation !== null && b.maxValuation === b.minValuation) issues.push(`bands.${i}: empty range`);
    if (i > 0) {
      const previous = bands[i - 1]!;
      const previousNoIpo = previous.minValuation === 0 && previous.maxValuation === 0;
      const expectedMin = previousNoIpo ? 0 : previous.maxValuation;
      if (b.minValuation !== expectedMin) issues.push(`bands.${i}: starts at ${b.minValuation}, expected ${expectedMin} (contiguous, ascending)`);
    }
  });
  if (bands.at(-1)!.maxValuation !== null && !(bands.length === 1 && bands[0]!.maxValuation === 0)) issues.push('the top band must be open-ended (maxValuation null)');
  if (e.resolvedBandIndex !== null && (e.status !== 'resolved' || e.resolvedBandIndex >= bands.length)) issues.push('resolvedBandIndex needs status resolved and an existing band');
  const tokens = bands.map((b) => b.venue.tokenId).filter((t) => t !== null);
  if (new Set(tokens).size !== tokens.length) issues.push('duplicate token ids');
  return issues;
}

/** The band id: the venue's token id where known, else a stable paper id. */
export const bandIdOf = (eventId: string, index: number, tokenId: string | null) => tokenId ?? `paper-${eventId}-${index}`;

/**
 * Ids that would name two events: every event's id, venue slug and aliases must be unique across the
 * file (one id, one event, on every route).
 */
export function idCollisions(records: EventRecord[]): string[] {
  const owner = new Map<string, string>();
  const issues: string[] = [];
  for (const e of records) {
    for (const key of new Set([e.id, e.venue.eventSlug, ...(e.aliases ?? [])])) {
      if (key === null) continue;
      const other = owner.get(key);
      if (other !== undefined && other !== e.id) issues.push(`${e.id}: "${key}" already names ${other}`);
      else owner.set(key, e.id);
    }
  }
  return issues;
}
