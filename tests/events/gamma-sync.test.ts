/**
 * The event sync from Gamma: markets matched to bands by meaning (titles, thresholds, "No IPO"),
 * Yes tokens per market version (v1 clobTokenIds, v2 positionIds), ladders, problems reported and
 * left alone, band ids never changed, a second run changing nothing, the seeds no longer overwriting
 * a synced event, and the CLI end to end against a local Gamma stand-in.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../db/client.ts';
import { seedDatabase } from '../../seeds/index.ts';
import { fetchGammaEvent, gammaEventSchema } from '../../server/events/gamma-client.ts';
import { marketMeaning } from '../../server/events/discovery.ts';
import { applyEventSync, planEventSync } from '../../server/events/gamma-sync.ts';
import { findEvent, listEvents } from '../../server/events/queries.ts';
import { upsertEvents } from '../../server/events/store.ts';
import { createLogger } from '../../server/lib/logger.ts';
import { syncEvents } from '../../server/commands/sync-events.ts';
import { createTestApp, type TestApp } from '../harness/app.ts';
import { engine } from '../harness/databases.ts';

const fixture = (slug: string) => JSON.parse(readFileSync(new URL(`../fixtures/gamma/${slug}.json`, import.meta.url), 'utf8'));
const gamma = (slug: string) => gammaEventSchema.parse(fixture(slug));

let t: TestApp;
let server: ReturnType<typeof Bun.serve>;
const served: Record<string, unknown> = {};
let failNext = 0;

beforeAll(async () => {
  t = await createTestApp();
  for (const slug of ['openai-ipo-closing-market-cap', 'kraken-ipo-closing-market-cap-above', 'anthropic-ipo-closing-market-cap-119', 'perplexity-ipo-closing-market-cap']) served[slug] = fixture(slug);
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (request) => {
      if (failNext > 0) {
        failNext--;
        return new Response('upstream error', { status: 500 });
      }
      const slug = decodeURIComponent(new URL(request.url).pathname.replace(/^\/events\/slug\//, ''));
      return served[slug] ? Response.json(served[slug]) : Response.json({ error: 'not found' }, { status: 404 });
    },
  });
});
afterAll(async () => {
  server.stop(true);
  await t.close();
});

describe('reading a band title (the reading discovery uses too)', () => {
  test.each([
    ['<$500B', { kind: 'range', min: 0, max: 500 }],
    ['$500-750B', { kind: 'range', min: 500, max: 750 }],
    ['$750B-1.0T', { kind: 'range', min: 750, max: 1000 }],
    ['$1.0-1.25T', { kind: 'range', min: 1000, max: 1250 }],
    ['$1.5T+', { kind: 'range', min: 1500, max: null }],
    ['$350M–$700M', { kind: 'range', min: 0.35, max: 0.7 }],
    ['No IPO by December 31, 2026', { kind: 'noIpo' }],
  ])('%s → %j', (title, expected) => expect(marketMeaning({ groupItemTitle: title, question: null })).toEqual(expected as never));
});

describe('planning', () => {
  test('a bands event: every band gets its Yes token, whatever the order Gamma lists markets in', async () => {
    const event = await findEvent(t.database.db, 'openai-ipo');
    const source = gamma('openai-ipo-closing-market-cap');
    const plan = planEventSync(event, source);
    expect(plan.problems).toEqual([]);
    expect(plan.bands.map((b) => b.bandIndex)).toEqual(event.bands.map((_, i) => i));
    for (const band of plan.bands) {
      const market = source.markets.find((m) => m.clobTokenIds![0] === band.venue.tokenId)!;
      expect(market).toBeDefined();
      expect(band.venue).toMatchObject({ noTokenId: market.clobTokenIds![1], version: 'v1', negRisk: true, tickSize: 0.01, minOrderSize: 5, conditionId: market.conditionId });
    }
    // No IPO is band 0; "$1.5T+" is the open top band.
    expect(plan.bands[0]!.venue.question).toContain('not IPO');
    expect(source.markets.find((m) => m.clobTokenIds![0] === plan.bands.at(-1)!.venue.tokenId)!.groupItemTitle).toBe('$1.5T+');
    expect(plan.event).toMatchObject({ status: 'open', volumeUsd: 4321987.5 });
    expect(plan.event.venue).toMatchObject({ eventSlug: 'openai-ipo-closing-market-cap', gammaEventId: 48292, negRisk: true });
  });

  test('a ladder: each "above $X" market maps to the band starting at X; the bottom band has none', async () => {
    const event = await findEvent(t.database.db, 'kraken-ipo');
    const plan = planEventSync(event, gamma('kraken-ipo-closing-market-cap-above'));
    expect(plan.problems).toEqual([]);
    expect(plan.bands.map((b) => [b.bandIndex, b.venue.threshold])).toEqual(event.bands.slice(1).map((b, i) => [i + 1, b.minValuation]));
  });

  test('a ladder as Gamma sends it: each ">$X" market maps to the band starting at X, never at its ordering index', async () => {
    // groupItemThreshold orders the group, highest threshold first (">$1B" carries "3"); here the
    // indexes 3, 2 and 1 are also thresholds, so reading them as thresholds would map the wrong bands.
    const thresholds = [1, 2, 3, 5];
    const token = (i: number) => `${i + 1}${'7'.repeat(76)}`;
    await upsertEvents(t.database.db, [
      {
        id: 'consensys-ipo',
        name: 'Consensys IPO closing market cap',
        company: 'Consensys',
        companySourceId: null,
        status: 'open',
        resolvedBandIndex: null,
        endDate: null,
        volumeUsd: null,
        venue: { name: 'polymarket', eventSlug: 'consensys-ipo-closing-market-cap-above', gammaEventId: 120001, negRisk: false, structure: 'ladder' },
        bands: [0, ...thresholds].map((min, i) => ({
          label: `band ${i}`,
          minValuation: min,
          maxValuation: thresholds[i] ?? null,
          seedPrice: 0.2,
          venue: { tokenId: null, conditionId: null, question: null, threshold: i ? min : null },
        })),
      },
    ]);
    const source = gammaEventSchema.parse({
      id: '120001',
      slug: 'consensys-ipo-closing-market-cap-above',
      title: 'Consensys IPO closing market cap above ___ ?',
      negRisk: false,
      closed: false,
      markets: thresholds.map((x, i) => ({
        id: String(930001 + i),
        question: `Consensys IPO closing market cap above $${x}B?`,
        groupItemTitle: `>$${x}B`,
        groupItemThreshold: String(thresholds.length - 1 - i),
        groupItemRange: JSON.stringify([String(x * 1e9), String((thresholds[i + 1] ?? x + 1) * 1e9)]),
        outcomes: '["Yes", "No"]',
        outcomePrices: '["0.5", "0.5"]',
        clobTokenIds: JSON.stringify([token(i), token(i + 5)]),
        version: 'v1',
        negRisk: false,
        active: true,
        closed: false,
        acceptingOrders: true,
      })),
    });
    const plan = planEventSync(await findEvent(t.database.db, 'consensys-ipo'), source);
    expect(plan.problems).toEqual([]);
    expect(plan.bands.map((b) => [b.bandIndex, b.venue.threshold, b.venue.tokenId])).toEqual(thresholds.map((x, i) => [i + 1, x, token(i)]));
  });

  test('a v2 market takes its token from positionIds', async () => {
    const event = await findEvent(t.database.db, 'anthropic-ipo');
    const source = gamma('anthropic-ipo-closing-market-cap-119');
    const plan = planEventSync(event, source);
    expect(plan.problems).toEqual([]);
    const v2 = source.markets.find((m) => m.version === 'v2')!;
    expect(plan.bands.find((b) => b.venue.version === 'v2')!.venue.tokenId).toBe(v2.positionIds![0]!);
  });

  test('mismatches are reported and those bands keep their mapping', async () => {
    const event = await findEvent(t.database.db, 'perplexity-ipo');
    const plan = planEventSync(event, gamma('perplexity-ipo-closing-market-cap'));
    expect(plan.problems.some((p) => p.includes('unknown market version "v3"'))).toBe(true);
    expect(plan.problems.some((p) => p.includes('matches no band'))).toBe(true);
    expect(plan.problems.some((p) => p.includes(`band ${event.bands.length - 1}`) && p.includes('has no market'))).toBe(true);
    expect(plan.bands.map((b) => b.bandIndex)).not.toContain(2);
  });
});

describe('applying', () => {
  test('band ids never change, a second run changes nothing, and the seeds leave a synced event alone', async () => {
    const db = t.database.db;
    const before = await findEvent(db, 'openai-ipo');
    const plan = planEventSync(before, gamma('openai-ipo-closing-market-cap'));
    await applyEventSync(db, plan);
    const after = await findEvent(db, 'openai-ipo');
    expect(after.bands.map((b) => b.id)).toEqual(before.bands.map((b) => b.id));
    expect(after.bands.map((b) => b.venue.tokenId)).toEqual(plan.bands.map((b) => b.venue.tokenId));
    await applyEventSync(db, planEventSync(after, gamma('openai-ipo-closing-market-cap'), new Date(after.venue.syncedAt!)));
    expect((await findEvent(db, 'openai-ipo')).bands).toEqual(after.bands);
    await seedDatabase(db, createLogger('silent'));
    expect((await findEvent(db, 'openai-ipo')).bands.map((b) => b.venue.tokenId)).toEqual(plan.bands.map((b) => b.venue.tokenId));
  });

  test('the sync over HTTP: mapped events, reported problems, a 404, a dry run, and an upstream failure', async () => {
    const url = `http://127.0.0.1:${server.port}`;
    const dry = await syncEvents(t.services, { events: ['anthropic-ipo'], gammaUrl: url, dryRun: true });
    expect(dry).toEqual([
      { event: 'anthropic-ipo', status: 'open', bandsMapped: 7, bands: 7, resolution: { gamma: 'pending', chain: 'not configured', action: 'none', reason: 'not resolved' }, problems: [], applied: false },
    ]);
    expect((await findEvent(t.database.db, 'anthropic-ipo')).bands[0]!.venue.tokenId).toBeNull();
    const lines = await syncEvents(t.services, { events: ['anthropic-ipo', 'perplexity-ipo', 'strava-ipo', 'nope'], gammaUrl: url, dryRun: false });
    expect(lines.find((l) => l.event === 'anthropic-ipo')).toMatchObject({ bandsMapped: 7, problems: [], applied: true });
    expect((lines.find((l) => l.event === 'perplexity-ipo')!.problems as string[]).length).toBeGreaterThan(0);
    // Gone from Gamma: closed here (it stops trading), never deleted.
    expect(lines.find((l) => l.event === 'strava-ipo')).toMatchObject({ status: 'closed', problems: [expect.stringContaining('Gamma has no event strava-ipo-closing-market-cap: closed here, never deleted')] });
    expect((await findEvent(t.database.db, 'strava-ipo')).status).toBe('closed');
    expect(lines.find((l) => l.event === 'nope')!.problems).toEqual(['no event nope']);
    failNext = 1;
    const failed = await syncEvents(t.services, { events: ['kraken-ipo'], gammaUrl: url, dryRun: false });
    expect(failed[0]!.problems).toEqual([expect.stringContaining('Gamma answered 500')]);
    expect(await fetchGammaEvent('x', { baseUrl: 'http://127.0.0.1:9', timeoutMs: 200 }).catch((e) => e.name)).toBe('GammaError');
  });
});

describe('the CLI', () => {
  test.skipIf(engine !== 'pglite')('npm run events:sync against a Gamma stand-in, on an embedded database', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'pipo-gamma-'));
    try {
      const db = await openDatabase({ kind: 'pglite', dataDir });
      await db.migrate();
      await seedDatabase(db.db, createLogger('silent'));
      await db.close();
      const child = Bun.spawn([process.execPath, 'server/commands/sync-events.ts', '--event', 'openai-ipo', '--event', 'kraken-ipo'], {
        cwd: new URL('../..', import.meta.url).pathname,
        env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', DATA_DIR: dataDir, GAMMA_API_URL: `http://127.0.0.1:${server.port}` },
        stdout: 'pipe',
        stderr: 'pipe',
      });
      const code = await child.exited;
      // Log lines (JSON too) may precede the report lines.
      const lines = (await new Response(child.stdout).text()).trim().split('\n').map((l) => JSON.parse(l)).filter((l) => 'event' in l);
      expect({ code, lines: lines.map((l) => [l.event, l.bandsMapped, l.problems]) }).toEqual({
        code: 0,
        lines: [
          ['kraken-ipo', 6, []],
          ['openai-ipo', 7, []],
        ],
      });
      const reopened = await openDatabase({ kind: 'pglite', dataDir });
      const synced = (await listEvents(reopened.db)).find((e) => e.id === 'openai-ipo')!;
      expect(synced.bands.every((b) => /^\d{70,78}$/.test(b.venue.tokenId ?? ''))).toBe(true);
      await reopened.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
