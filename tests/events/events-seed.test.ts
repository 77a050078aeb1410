/** The 17 seeded events and the band rules every event must satisfy (docs/decisions.md §6). */
import { describe, expect, test } from 'bun:test';
import { loadDataset } from '../../seeds/company-dataset.ts';
import { loadEvents } from '../../seeds/events.ts';
import { bandIssues, type EventRecord } from '../../server/events/event-schema.ts';

describe('the seeded events', () => {
  test('17 valid events, every company in the company dataset', async () => {
    const events = await loadEvents();
    expect(events).toHaveLength(17);
    // In the curated records, so in the test sample too (seeds/company-dataset.ts).
    const companies = new Set((await loadDataset()).records.filter((r) => r.provenance?.[0]?.id === 'curated').map((r) => r.sourceId));
    for (const e of events) expect(companies.has(e.companySourceId!)).toBe(true);
    expect(events.filter((e) => e.company === 'SpaceX')).toHaveLength(2);
    for (const e of events.filter((x) => x.venue.structure === 'bands')) {
      const total = e.bands.reduce((s, b) => s + b.seedPrice, 0);
      expect(total).toBeGreaterThan(0.9);
      expect(total).toBeLessThan(1.1);
    }
  });
});

describe('band rules', () => {
  const base = (bands: ReadonlyArray<readonly [number, number | null]>): EventRecord => ({
    id: 'x-ipo',
    name: 'X',
    company: 'X',
    companySourceId: null,
    status: 'open',
    resolvedBandIndex: null,
    endDate: null,
    volumeUsd: null,
    venue: { name: 'polymarket', eventSlug: null, gammaEventId: null, negRisk: null, structure: 'bands' },
    bands: bands.map(([min, max], i) => ({ label: `b${i}`, minValuation: min, maxValuation: max, seedPrice: 0.2, venue: { tokenId: null, conditionId: null, question: null, threshold: null } })),
  });

  test('a No IPO band, then contiguous bands up to an open top band, is valid', () => {
    expect(bandIssues(base([[0, 0], [0, 100], [100, 200], [200, null]]))).toEqual([]);
  });
  test.each([
    ['a gap', [[0, 100], [150, null]], 'contiguous'],
    ['No IPO not first', [[0, 100], [0, 0], [100, null]], 'No IPO'],
    ['closed top band', [[0, 100], [100, 200]], 'open-ended'],
    ['open band in the middle', [[0, null], [100, null]], 'only the top band'],
  ] as const)('%s is refused', (_, bands, message) => {
    expect(bandIssues(base(bands)).join('\n')).toContain(message);
  });
  test('a resolved index needs a resolved event', () => {
    expect(bandIssues({ ...base([[0, 100], [100, null]]), resolvedBandIndex: 1 }).join()).toContain('resolvedBandIndex');
  });
});
