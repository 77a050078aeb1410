/**
 * `npm run events:sync` — refreshes every event (or those named) from Polymarket's Gamma API: band
 * token ids, market versions, neg-risk flags, trading parameters, status, end date and volume.
 * Band ids never change. Prints one JSON line per event; exits 1 if any event had problems (those
 * bands keep their previous mapping), 2 for usage errors.
 *
 *   npm run events:sync -- [--event openai-ipo ...] [--gamma-url URL] [--dry-run]
 *   GAMMA_API_URL   default https://gamma-api.polymarket.com
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ConfigError, loadConfig } from './config.ts';
import { fetchGammaEvent } from './events/gamma-client.ts';
import { applyEventSync, planEventSync } from './events/gamma-sync.ts';
import { listEvents } from './events/queries.ts';
import type { Services } from './services.ts';
import { closeServices, exitOnStartupFailure, openServices } from './start.ts';
import { createLogger } from './lib/logger.ts';

const gammaUrl = z.url({ protocol: /^https?$/ });

export async function syncEvents(services: Services, options: { events?: string[]; gammaUrl: string; dryRun: boolean; fetch?: typeof fetch }) {
  const db = services.database.db;
  const all = await listEvents(db);
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
        lines.push({ event: event.id, problems: [`Gamma has no event ${event.venue.eventSlug}`] });
        continue;
      }
      const plan = planEventSync(event, gamma);
      if (!options.dryRun) await applyEventSync(db, plan);
      lines.push({ event: event.id, status: plan.event.status, bandsMapped: plan.bands.length, bands: event.bands.length, problems: plan.problems, applied: !options.dryRun });
    } catch (error) {
      lines.push({ event: event.id, problems: [String((error as Error).message)] });
    }
  }
  return lines;
}

if (import.meta.main) {
  let exitCode = 0;
  let services: Services | undefined;
  try {
    const { values } = parseArgs({ args: process.argv.slice(2), options: { event: { type: 'string', multiple: true }, 'gamma-url': { type: 'string' }, 'dry-run': { type: 'boolean' } } });
    const url = gammaUrl.safeParse(values['gamma-url'] ?? process.env.GAMMA_API_URL ?? 'https://gamma-api.polymarket.com');
    if (!url.success) throw new ConfigError('GAMMA_API_URL / --gamma-url must be an http(s) URL');
    const config = loadConfig({ LOG_LEVEL: 'warn', ...process.env });
    // stdout is one JSON line per event: log lines go to stderr.
    services = await openServices(config, { seed: false, logger: createLogger(config.logLevel, 'stderr') });
    const lines = await syncEvents(services, { events: values.event, gammaUrl: url.data, dryRun: values['dry-run'] ?? false });
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
