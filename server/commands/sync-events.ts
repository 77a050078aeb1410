/**
 * `npm run events:sync` — refreshes every event (or those named) from Polymarket's Gamma API: band
 * token ids, market versions, neg-risk flags, trading parameters, status, end date and volume.
 * Band ids never change. Then resolution (events/resolution-sources.ts): each market's outcome as
 * Gamma reports it and as the chain records it (Conditional Tokens payout vectors, read through
 * POLYGON_RPC_URL); an outcome both agree on is applied and the event's positions settle; one source
 * alone waits, two that disagree are reported and nothing is applied. Last, every resolved event's
 * unfinished settlements are retried (a deferred position, an unpaid or interrupted redemption).
 * Prints one JSON line per event; exits 1 if any event had problems (those bands keep their previous
 * mapping; a contradiction is one), 2 for usage errors.
 *
 *   npm run events:sync -- [--event openai-ipo ...] [--gamma-url URL] [--dry-run] [--discover]
 *     --discover   first looks for new IPO valuation events on Gamma (docs/trading.md "The market
 *                  universe"): lists or proposes them (EVENT_AUTO_LIST), skipping what it cannot read
 *   GAMMA_API_URL   default https://gamma-api.polymarket.com
 *   POLYGON_RPC_URL the chain source; unset, resolutions seen on Gamma wait for an operator
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ConfigError, loadConfig } from '../config.ts';
import { runDiscoveryPass } from '../events/discovery-pass.ts';
import { closeOpenEvent } from '../events/store.ts';
import { fetchGammaEvent } from '../events/gamma-client.ts';
import { applyEventSync, planEventSync, type EventSyncPlan } from '../events/gamma-sync.ts';
import { findEvent, listEvents, type EventWithBands } from '../events/queries.ts';
import { resolveEventOutcome } from '../trading/resolution.ts';
import { chainVerdict, decideResolution, eventOutcome, gammaVerdict, type MarketVerdict } from '../events/resolution-sources.ts';
import { createPolygonClient } from '../chain/position-reader.ts';
import { createResolutionReader, type ResolutionReader } from '../chain/resolution-reader.ts';
import { settleEvent } from '../trading/settlement.ts';
import type { Services } from '../platform/services.ts';
import { closeServices, exitOnStartupFailure, openServices } from '../platform/start.ts';
import { createLogger } from '../lib/logger.ts';
import { errorMessage } from '../lib/error-message.ts';

const gammaUrl = z.url({ protocol: /^https?$/ });

/** Both sources' outcome for the event, and what the sync does with them. */
async function readResolution(event: EventWithBands, plan: EventSyncPlan, chain: ResolutionReader | undefined) {
  const gammaVerdicts = new Map<number, MarketVerdict>([...plan.markets].map(([i, m]) => [i, gammaVerdict(m)]));
  let chainVerdicts: Map<number, MarketVerdict> | null = null;
  if (chain) {
    const payouts = await chain.payoutsOf([...plan.markets.values()].map((m) => m.conditionId ?? ''));
    chainVerdicts = new Map(
      [...plan.markets].map(([i, m]) => {
        const yesIndex = Math.max(0, (m.outcomes ?? []).findIndex((o) => o.toLowerCase() === 'yes'));
        return [i, chainVerdict(m.conditionId ? payouts.get(m.conditionId) : null, yesIndex)];
      }),
    );
  }
  const gamma = eventOutcome(event, gammaVerdicts);
  const onChain = chainVerdicts ? eventOutcome(event, chainVerdicts) : null;
  return { gamma, chain: onChain, decision: decideResolution(event, gamma, onChain) };
}

export async function syncEvents(services: Services, options: { events?: string[]; gammaUrl: string; dryRun: boolean; fetch?: typeof fetch; chain?: ResolutionReader }) {
  const db = services.database.db;
  const all = await listEvents(db, 'all');
  const chosen = options.events?.length ? all.filter((e) => options.events!.includes(e.id)) : all;
  const unknown = (options.events ?? []).filter((id) => !all.some((e) => e.id === id));
  const lines: Record<string, unknown>[] = unknown.map((id) => ({ event: id, problems: [`no event ${id}`] }));
  for (const event of chosen) {
    if (!event.venue.eventSlug) {
      lines.push({ event: event.id, skipped: 'no venue event slug' });
      continue;
    }
    try {
      const gamma = await fetchGammaEvent(event.venue.eventSlug, { baseUrl: options.gammaUrl, fetch: options.fetch, timeoutMs: services.config.venueTimeoutMs });
      if (!gamma) {
        // Gone from the venue: it stops trading here too, and is kept (positions, history, settlement).
        const closed = event.status === 'open' && !options.dryRun && (await closeOpenEvent(db, event.id));
        const status = closed || (event.status === 'open' && options.dryRun) ? 'closed' : event.status;
        lines.push({ event: event.id, status, problems: [`Gamma has no event ${event.venue.eventSlug}: ${status === 'closed' ? 'closed here, never deleted' : `left ${status}`}`], applied: !options.dryRun });
        continue;
      }
      // Read again now: an operator may have resolved the event while earlier events were synced.
      const current = await findEvent(db, event.id);
      const plan = planEventSync(current, gamma);
      const resolution = await readResolution(current, plan, options.chain);
      const { decision } = resolution;
      // An outcome seen but not applied still stops trading: the event is closed until it is settled.
      if ((decision.action === 'wait' || decision.action === 'contradiction') && plan.event.status === 'open') plan.event.status = 'closed';
      if (decision.action === 'contradiction') plan.problems.push(decision.reason);
      let settlement: unknown = undefined;
      if (!options.dryRun) {
        await applyEventSync(db, plan);
        plan.event.status = (await findEvent(db, event.id)).status;
        if (decision.action === 'apply') {
          const outcome = await resolveEventOutcome(services, event.id, decision.outcome, { kind: 'system', id: 'event-sync', clientIp: null, requestId: null });
          plan.event.status = outcome.status;
          settlement = { settled: outcome.settled, paid: outcome.paid, unpaid: outcome.unpaid, deferred: outcome.deferred };
        } else if (plan.event.status === 'resolved' || plan.event.status === 'voided') {
          // Finishes what an earlier run (or an operator's resolution) left: deferred positions, unpaid redemptions.
          settlement = await settleEvent(services, event.id);
        }
      }
      lines.push({
        event: event.id,
        status: plan.event.status,
        bandsMapped: plan.bands.length,
        bands: event.bands.length,
        resolution: { gamma: resolution.gamma.kind === 'resolved' ? event.bands[resolution.gamma.bandIndex]!.id : resolution.gamma.kind, chain: resolution.chain === null ? 'not configured' : resolution.chain.kind === 'resolved' ? event.bands[resolution.chain.bandIndex]!.id : resolution.chain.kind, action: decision.action, ...('reason' in decision ? { reason: decision.reason } : {}) },
        ...(settlement ? { settlement } : {}),
        problems: plan.problems,
        applied: !options.dryRun,
      });
    } catch (error) {
      lines.push({ event: event.id, problems: [errorMessage(error)] });
    }
  }
  return lines;
}

if (import.meta.main) {
  let exitCode = 0;
  let services: Services | undefined;
  try {
    const { values } = parseArgs({
      args: process.argv.slice(2),
      options: { event: { type: 'string', multiple: true }, 'gamma-url': { type: 'string' }, 'dry-run': { type: 'boolean' }, discover: { type: 'boolean' } },
    });
    const url = gammaUrl.safeParse(values['gamma-url'] || process.env.GAMMA_API_URL || 'https://gamma-api.polymarket.com');
    if (!url.success) throw new ConfigError('GAMMA_API_URL / --gamma-url must be an http(s) URL');
    const config = loadConfig({ LOG_LEVEL: 'warn', ...process.env, GAMMA_API_URL: url.data });
    // stdout is one JSON line per event: log lines go to stderr.
    services = await openServices(config, { seed: false, logger: createLogger(config.logLevel, 'stderr') });
    const rpc = config.polymarket.polygonRpcUrl;
    const chain = rpc ? createResolutionReader(createPolygonClient(rpc, { timeoutMs: config.venueTimeoutMs })) : undefined;
    if (values.discover) {
      // First the new events (one line: what it listed or proposed, what it skipped and why), then the sync.
      const report = await runDiscoveryPass(services, { dryRun: values['dry-run'] ?? false });
      console.log(JSON.stringify({ discovery: report }));
    }
    const lines = await syncEvents(services, { events: values.event, gammaUrl: url.data, dryRun: values['dry-run'] ?? false, chain });
    for (const line of lines) console.log(JSON.stringify(line));
    if (lines.some((l) => Array.isArray(l.problems) && l.problems.length)) exitCode = 1;
  } catch (error) {
    exitOnStartupFailure(error); // a locked data directory, PostgreSQL not answering: one line, its exit code
    exitCode = error instanceof ConfigError || (error as Error).name === 'TypeError' ? 2 : 1;
    console.error(error instanceof ConfigError ? error.message : error);
  } finally {
    if (services) await closeServices(services);
  }
  process.exit(exitCode);
}
