/**
 * One discovery pass (docs/trading.md "The market universe"): Gamma's open IPO events, every page,
 * and its closed ones (an event closed there that trades here is closed here),
 * each recognised (discovery.ts) or skipped with its reason, and the new ones written once
 * (listing.ts: listed at once with EVENT_AUTO_LIST, else proposed). Known events (the same Gamma id
 * or slug) are the sync's to refresh. Runs as a background job on every instance
 * (EVENT_DISCOVERY_INTERVAL_MS), from `npm run events:sync -- --discover` and from the operator's
 * POST /api/events/discover; a dry run writes nothing and says what it would list.
 */
import type { EventsHandles } from './handles.ts';
import { startJob, type Job } from '../lib/jobs.ts';
import { recognizeIpoEvent } from './discovery.ts';
import { fetchIpoEvents, gammaEventSchema, GammaError } from './gamma-client.ts';
import { ApiError } from '../errors.ts';
import { addDiscoveredEvents, eventNames, type AddedEvent, type DiscoveredEvent } from './listing.ts';
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { events } from '../../db/schema.ts';
import { closeOpenEvent } from './store.ts';

export interface DiscoveryReport {
  /** IPO events Gamma listed as open (recognised or not). */
  seen: number;
  /** New events written (or, in a dry run, that would be), with their listing. */
  added: AddedEvent[];
  /** Venue slugs of recognised events already here: the sync refreshes them. */
  known: string[];
  /** What was not listed, and why (one entry per event). */
  skipped: Array<{ slug: string; reason: string }>;
  /** Our ids of open events Gamma lists as closed, closed here by this pass (or, in a dry run, that would be). */
  closed: string[];
  dryRun: boolean;
}

/**
 * Closes the open events here that Gamma's closed IPO events name (by Gamma id or slug); answers their
 * ids. Closed events Gamma has that were never here are no business of discovery (it lists open ones).
 */
async function closeKnownEvents(db: Db, closedRaw: unknown[], dryRun: boolean): Promise<string[]> {
  const ids = new Set<string>();
  const slugs = new Set<string>();
  for (const raw of closedRaw) {
    const event = raw as { id?: unknown; slug?: unknown };
    if (typeof event?.id === 'string' || typeof event?.id === 'number') ids.add(String(event.id));
    if (typeof event?.slug === 'string') slugs.add(event.slug);
  }
  if (!ids.size && !slugs.size) return [];
  const open = await db
    .select({ id: events.id })
    .from(events)
    .where(and(eq(events.status, 'open'), sql`(${events.venue}->>'gammaEventId' = any(${sql.param([...ids])}::text[]) or ${events.venue}->>'eventSlug' = any(${sql.param([...slugs])}::text[]))`))
    .orderBy(events.id);
  if (dryRun) return open.map((e) => e.id);
  const closed: string[] = [];
  for (const { id } of open) if (await closeOpenEvent(db, id)) closed.push(id);
  return closed;
}

const slugOf = (raw: unknown) => (typeof raw === 'object' && raw !== null && typeof (raw as { slug?: unknown }).slug === 'string' ? (raw as { slug: string }).slug : '(no slug)');

export async function runDiscoveryPass(handles: EventsHandles, options: { dryRun?: boolean; fetch?: typeof fetch } = {}): Promise<DiscoveryReport> {
  const { config, database, logger } = handles;
  const read = (closed: boolean) =>
    fetchIpoEvents({ baseUrl: config.discovery.gammaUrl, closed, fetch: options.fetch, timeoutMs: config.venueTimeoutMs }).catch((error) => {
      // Gamma down or answering nonsense is not the caller's fault, and nothing was written: retry later.
      throw error instanceof GammaError ? new ApiError('VENUE_UNAVAILABLE', `Event discovery could not read Gamma: ${error.message}`, { cause: error }) : error;
    });
  const [raw, closedRaw] = await Promise.all([read(false), read(true)]);
  const report: DiscoveryReport = { seen: raw.length, added: [], known: [], skipped: [], closed: [], dryRun: options.dryRun ?? false };
  // Events Gamma has closed that trade here still stop trading now (their outcome is events:sync's to read).
  report.closed = await closeKnownEvents(database.db, closedRaw, report.dryRun);
  const recognised: DiscoveredEvent[] = [];
  for (const event of raw) {
    const reading = recognizeIpoEvent(event);
    // Recognised, so it parses: the sync maps its venue details from it.
    if (reading.ok) recognised.push({ record: reading.record, gamma: gammaEventSchema.parse(event) });
    else report.skipped.push({ slug: slugOf(event), reason: reading.reason });
  }
  // One policy for band events and ladders alike: both trade on every venue (docs/trading.md "Ladders").
  const autoList = config.discovery.autoList;
  if (report.dryRun) {
    // What a pass would write, named as it would name them (without its lock: nothing is written).
    const names = await eventNames(database.db);
    for (const item of recognised) {
      if (names.known(item.record)) report.known.push(item.record.venue.eventSlug ?? item.record.id);
      else report.added.push({ eventId: names.claim(item.record), venueEventSlug: item.record.venue.eventSlug, listing: autoList ? 'listed' : 'proposed' });
    }
  } else {
    const written = await addDiscoveredEvents(database.db, recognised, { autoList, companyFor: handles.companyForMarket });
    report.added.push(...written.added);
    report.known.push(...written.known);
    report.skipped.push(...written.skipped);
  }
  for (const { slug, reason } of report.skipped) logger.info('event discovery skipped an event', { slug, reason });
  for (const added of report.added) logger.info(report.dryRun ? 'event discovery would add' : 'event discovery added', { ...added });
  for (const eventId of report.closed) logger.info(report.dryRun ? 'event discovery would close' : 'event discovery closed', { eventId });
  return report;
}

/** The discovery job (undefined when EVENT_DISCOVERY_INTERVAL_MS is 0). */
export function startEventDiscovery(handles: EventsHandles): Job<DiscoveryReport> | undefined {
  const { intervalMs } = handles.config.discovery;
  if (intervalMs <= 0) return undefined;
  return startJob({ name: 'event_discovery', intervalMs, logger: handles.logger, metrics: handles.metrics.jobs, run: () => runDiscoveryPass(handles) });
}
