/**
 * Discovering IPO valuation events on Gamma: the paged `ipo`-tag read (fetchIpoEvents) against a local
 * stand-in, and recognizeIpoEvent on what it returns — exactly the valuation events recognised, with
 * their bands, thresholds, tokens and seed prices as stated here; every other event skipped with a
 * reason naming what is wrong; every record valid by the event schema and the band rules. Then the
 * ids (Polymarket's numeric slug suffixes dropped, collisions numbered).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { baseEventId, recognizeIpoEvent, uniqueEventId, type Recognition } from '../../server/events/discovery.ts';
import { bandIssues, eventRecordSchema, type EventRecord } from '../../server/events/event-schema.ts';
import { fetchGammaEvent, fetchIpoEvents, gammaEventSchema, GammaError } from '../../server/events/gamma-client.ts';
import { GammaStandin } from '../harness/gamma-standin.ts';

type Raw = Record<string, any>;
const DIR = new URL('../fixtures/gamma/discovery/', import.meta.url);
const fixture = (slug: string): Raw => JSON.parse(readFileSync(new URL(`${slug}.json`, DIR), 'utf8'));
const ALL = readdirSync(DIR).map((f) => fixture(f.replace(/\.json$/, '')));

/** The Yes token a fixture's market carries (v2 markets: positionIds). */
function yesToken(slug: string, marketId: string) {
  const m = fixture(slug).markets.find((x: Raw) => x.id === marketId);
  return m.version === 'v2' ? m.positionIds[0] : JSON.parse(m.clobTokenIds)[0];
}
const conditionOf = (slug: string, marketId: string) => fixture(slug).markets.find((x: Raw) => x.id === marketId).conditionId;

const recordOf = (r: Recognition): EventRecord => {
  if (!r.ok) throw new Error(`not recognised: ${r.reason}`);
  return r.record;
};
const reasonOf = (r: Recognition) => (r.ok ? `recognised as ${r.record.id}` : r.reason);
/** A band as [label, min, max, seed price, Yes token, ladder threshold]. */
const bandRows = (e: EventRecord) => e.bands.map((b) => [b.label, b.minValuation, b.maxValuation, b.seedPrice, b.venue.tokenId, b.venue.threshold]);

let gamma: GammaStandin;
beforeAll(() => {
  gamma = new GammaStandin(ALL).start();
});
afterAll(() => gamma.stop());

describe('discovery through Gamma', () => {
  const discover = async (closed: boolean) => (await fetchIpoEvents({ baseUrl: gamma.url, closed, pageSize: 3 })).map((raw) => ({ slug: (raw as Raw).slug as string, result: recognizeIpoEvent(raw) }));

  test('exactly the IPO valuation events are recognised, with their bands, tokens, thresholds and seed prices', async () => {
    gamma.setEvents(ALL);
    const found = [...(await discover(false)), ...(await discover(true))].filter((d) => d.result.ok);
    expect(found.map((d) => d.slug).sort()).toEqual(['anthropic-ipo-closing-market-cap-119', 'databricks-ipo-closing-market-cap', 'spacex-ipo-closing-market-cap-above']);
    const records = Object.fromEntries(found.map((d) => [d.slug, recordOf(d.result)]));

    const a = 'anthropic-ipo-closing-market-cap-119';
    expect({ ...records[a]!, bands: undefined }).toEqual({
      id: 'anthropic-ipo-closing-market-cap',
      name: 'Anthropic IPO closing market cap',
      company: 'Anthropic',
      companySourceId: null,
      status: 'open',
      resolvedBandIndex: null,
      endDate: '2027-12-31T00:00:00.000Z',
      volumeUsd: 912345.25,
      venue: { name: 'polymarket', eventSlug: a, gammaEventId: 197776, negRisk: true, structure: 'bands' },
      bands: undefined,
    });
    // Gamma lists the markets out of order, titles with ≤, ≥ and en dashes; one market is on Protocol V2.
    expect(bandRows(records[a]!)).toEqual([
      ['No IPO', 0, 0, 0.3, yesToken(a, '504320'), null],
      ['Below $100B', 0, 100, 0.02, yesToken(a, '504321'), null],
      ['$100B–$200B', 100, 200, 0.05, yesToken(a, '504322'), null],
      ['$200B–$300B', 200, 300, 0.12, yesToken(a, '504324'), null],
      ['$300B–$400B', 300, 400, 0.2, yesToken(a, '504323'), null],
      ['$400B–$600B', 400, 600, 0.18, yesToken(a, '504325'), null],
      ['$600B+', 600, null, 0.13, yesToken(a, '504326'), null],
    ]);
    expect(yesToken(a, '504322')).toBe(fixture(a).markets.find((m: Raw) => m.id === '504322').positionIds[0]);
    expect(records[a]!.bands[2]!.venue).toEqual({
      tokenId: yesToken(a, '504322'),
      conditionId: conditionOf(a, '504322'),
      question: 'Will Anthropic’s market cap be between $100B and $200B at market close on IPO day?',
      threshold: null,
    });

    // The captured ladder: thresholds from ">$1T", ">$1.4T" …, not from the ordering index (15, 13, 14, 10, 0).
    const s = 'spacex-ipo-closing-market-cap-above';
    expect(records[s]).toMatchObject({ id: s, name: 'SpaceX IPO closing market cap', company: 'SpaceX', status: 'open', volumeUsd: 6479178.025640003, venue: { gammaEventId: 102007, negRisk: false, structure: 'ladder' } });
    expect(bandRows(records[s]!)).toEqual([
      ['Below $1T', 0, 1000, 0.0095, null, null],
      ['$1T–$1.2T', 1000, 1200, 0.016, yesToken(s, '909466'), 1000],
      ['$1.2T–$1.4T', 1200, 1400, 0.0115, yesToken(s, '909468'), 1200],
      ['$1.4T–$2T', 1400, 2000, 0.328, yesToken(s, '909467'), 1400],
      ['$2T–$4T', 2000, 4000, 0.625, yesToken(s, '915770'), 2000],
      ['$4T+', 4000, null, 0.01, yesToken(s, '2308003'), 4000],
    ]);
    expect(records[s]!.bands[0]!.venue).toEqual({ tokenId: null, conditionId: null, question: null, threshold: null });
    expect(records[s]!.bands[1]!.venue.question).toBe('SpaceX IPO closing market cap above $1T?');

    // Closed on the venue (its prices settled at 1/0): closed here, never resolved by discovery.
    const d = 'databricks-ipo-closing-market-cap';
    expect(records[d]).toMatchObject({ status: 'closed', resolvedBandIndex: null, venue: { structure: 'bands', negRisk: true } });
    expect(bandRows(records[d]!)).toEqual([
      ['Below $100B', 0, 100, 0, yesToken(d, '611000'), null],
      ['$100B–$150B', 100, 150, 1, yesToken(d, '611001'), null],
      ['$150B–$200B', 150, 200, 0, yesToken(d, '611002'), null],
      ['$200B+', 200, null, 0, yesToken(d, '611003'), null],
    ]);

    for (const record of Object.values(records)) {
      expect(eventRecordSchema.parse(record)).toEqual(record);
      expect(bandIssues(record)).toEqual([]);
    }
  });

  test('every other event under the tag is skipped with a reason naming what is wrong', async () => {
    gamma.setEvents(ALL);
    const skipped = Object.fromEntries((await discover(false)).filter((d) => !d.result.ok).map((d) => [d.slug, reasonOf(d.result)]));
    expect(skipped).toEqual({
      'which-bank-will-take-kraken-public': 'which-bank-will-take-kraken-public: not an IPO valuation event (title "Which bank will take Kraken public?")',
      'kraken-ipo-in-2026': 'kraken-ipo-in-2026: not an IPO valuation event (title "Kraken IPO in 2026?")',
      'cerebras-ipo-closing-market-cap': 'cerebras-ipo-closing-market-cap: market 730011 ("$10B-20B"): no token ids (clobTokenIds)',
      'discord-ipo-closing-market-cap': 'discord-ipo-closing-market-cap: market 730021 ("$15B-25B"): unknown market version "v3"',
      'revolut-ipo-closing-market-cap': 'revolut-ipo-closing-market-cap: market 730030 ("<$75B"): outcomes: expected a JSON list',
      'canva-ipo-closing-market-cap': 'canva-ipo-closing-market-cap: markets 730040 (Below $40B) and 730041 ($30B–$50B) overlap',
    });
  });

  test('the same record from a raw payload and from one already parsed; anything else is refused, not thrown', () => {
    for (const slug of ['anthropic-ipo-closing-market-cap-119', 'spacex-ipo-closing-market-cap-above']) {
      expect(recognizeIpoEvent(gammaEventSchema.parse(fixture(slug)))).toEqual(recognizeIpoEvent(fixture(slug)));
    }
    expect(reasonOf(recognizeIpoEvent('nope'))).toStartWith('not a Gamma event: ');
    expect(reasonOf(recognizeIpoEvent({ id: 1, title: 'X IPO closing market cap' }))).toStartWith('not a Gamma event: slug: ');
  });
});

/** A fixture changed by `edit`, then recognised. */
function variant(slug: string, edit: (e: Raw) => void) {
  const e = fixture(slug);
  edit(e);
  return reasonOf(recognizeIpoEvent(e));
}
const market = (e: Raw, id: string) => e.markets.find((m: Raw) => m.id === id);
const drop = (e: Raw, id: string) => (e.markets = e.markets.filter((m: Raw) => m.id !== id));
const A = 'anthropic-ipo-closing-market-cap-119';
const S = 'spacex-ipo-closing-market-cap-above';

describe('what cannot be read is not listed', () => {
  test.each<[string, string, (e: Raw) => void, string]>([
    ['a gap between two bands', A, (e) => drop(e, '504324'), `${A}: no market covers $200B to $300B`],
    ['nothing below the lowest band', A, (e) => drop(e, '504321'), `${A}: no market covers below $100B`],
    ['nothing above the top band', A, (e) => drop(e, '504326'), `${A}: no market covers above $600B`],
    [
      'a range that runs backwards',
      A,
      (e) => Object.assign(market(e, '504323'), { groupItemTitle: '$400–300B', question: 'Will Anthropic’s market cap be between $400B and $300B?' }),
      `${A}: market 504323 has a range that runs backwards ($400B to $300B)`,
    ],
    ['a title its question contradicts', A, (e) => (market(e, '504322').question = 'Will Anthropic’s market cap be between $200B and $300B?'), `${A}: market 504322 ("$100–200B"): its title "$100–200B" and its question disagree`],
    ['two No IPO markets', A, (e) => (market(e, '504321').groupItemTitle = 'No IPO'), `${A}: markets 504320 and 504321 are both "No IPO"`],
    ['band markets outside a neg-risk group', A, (e) => (e.negRisk = false), `${A}: band markets outside a neg-risk group (negRisk false) are not exclusive`],
    ['a clobTokenIds string that is not JSON', A, (e) => (market(e, '504321').clobTokenIds = '["8446'), `${A}: market 504321 ("≤$100B"): clobTokenIds: expected a JSON list`],
    ['a market that is not an object', A, (e) => e.markets.push('x'), `${A}: market ? (""): value: Invalid input: expected object, received string`],
    ['fewer than 2 markets', S, (e) => (e.markets = e.markets.slice(0, 1)), `${S}: fewer than 2 markets (1)`],
    ['a ladder market without a version (as captured)', S, (e) => delete market(e, '909467').version, `${S}: market 909467 (">$1.4T"): unknown market version null`],
    ['two rungs at one threshold', S, (e) => Object.assign(market(e, '2308003'), { groupItemTitle: '>$2T', question: 'SpaceX IPO closing market cap above $2T?' }), `${S}: markets 915770 and 2308003 are both above $2T`],
    [
      'ladder rungs mixed with band markets',
      S,
      (e) => e.markets.push({ ...market(e, '909466'), id: '999', groupItemTitle: '$1T–2T', question: 'SpaceX IPO closing market cap between $1T and $2T?', clobTokenIds: '["1", "2"]' }),
      `${S}: mixes 5 cumulative "above" markets with band markets`,
    ],
    ['a neg-risk group of "above" markets', S, (e) => (e.negRisk = true), `${S}: a neg-risk group whose markets are all "above $X": cumulative markets cannot be exclusive`],
    ['a bare amount no question confirms', S, (e) => Object.assign(market(e, '909466'), { groupItemTitle: '$1T', question: 'SpaceX?' }), `${S}: market 909466 ("$1T"): its title "$1T" names no range the question confirms`],
    ['a conditionId the schema refuses', S, (e) => (market(e, '909466').conditionId = '0x12'), `${S}: the record fails the event schema: bands.1.venue.conditionId: must be a 0x-prefixed 32-byte hex id`],
  ])('%s', (_, slug, edit, reason) => expect(variant(slug, edit)).toBe(reason));

  test('a bare "$16B" title is read with its question; thresholds never come from groupItemThreshold', () => {
    const e = fixture(S);
    for (const m of e.markets) m.groupItemTitle = m.groupItemTitle.replace('>', '');
    const bands = recordOf(recognizeIpoEvent(e)).bands.map((b) => b.venue.threshold);
    expect(bands).toEqual([null, 1000, 1200, 1400, 2000, 4000]);
    for (const m of e.markets) m.groupItemThreshold = '7';
    expect(recordOf(recognizeIpoEvent(e)).bands.map((b) => b.venue.threshold)).toEqual(bands);
  });
});

describe('paging', () => {
  const events = (n: number, closed = false) => Array.from({ length: n }, (_, i) => ({ id: String(100 + i), slug: `e-${i}`, closed }));
  const offsets = () => gamma.listRequests.map((r) => r.query);
  const read = (options: Partial<Parameters<typeof fetchIpoEvents>[0]> = {}) => fetchIpoEvents({ baseUrl: gamma.url, closed: false, ...options });

  test('reads page after page until one comes back short, and only the pass asked for', async () => {
    gamma.setEvents([...events(7), ...events(2, true).map((e) => ({ ...e, id: `c${e.id}` }))]);
    gamma.requests.length = 0;
    expect(((await read({ pageSize: 3 })) as Raw[]).map((e) => e.id)).toEqual(events(7).map((e) => e.id));
    expect(offsets()).toEqual([0, 3, 6].map((offset) => ({ tag_slug: 'ipo', closed: 'false', limit: '3', offset: String(offset) })));

    // A full last page: one more (empty) page says it was the last.
    gamma.setEvents(events(6));
    gamma.requests.length = 0;
    expect(await read({ pageSize: 3 })).toHaveLength(6);
    expect(offsets().map((q) => q.offset)).toEqual(['0', '3', '6']);

    gamma.setEvents(events(2, true));
    gamma.requests.length = 0;
    expect(((await read({ closed: true })) as Raw[]).map((e) => e.slug)).toEqual(['e-0', 'e-1']);
    expect(offsets()).toEqual([{ tag_slug: 'ipo', closed: 'true', limit: '100', offset: '0' }]);
  });

  test('an event listed twice as the list shifts between pages is kept once', async () => {
    gamma.setEvents(events(4));
    // A new event arrives at the head after the first page: the second page starts with one already read.
    let first = true;
    const shifting: typeof fetch = Object.assign(async (input: RequestInfo | URL, init?: RequestInit) => {
      const response = await fetch(input, init);
      if (first) gamma.setEvents([{ id: '99', slug: 'new', closed: false }, ...events(4)]);
      first = false;
      return response;
    }, { preconnect: fetch.preconnect });
    expect(((await read({ pageSize: 2, fetch: shifting })) as Raw[]).map((e) => e.id)).toEqual(['100', '101', '102', '103']);
  });

  test('a list longer than maxPages pages is an error, not a silent cut; failures are GammaErrors', async () => {
    const failure = (p: Promise<unknown>) => p.then(() => 'resolved', (e: Error) => [e instanceof GammaError, e.message]);
    gamma.setEvents(events(4));
    expect(await failure(read({ pageSize: 2, maxPages: 2 }))).toEqual([true, 'Gamma listed more than 2 pages of 2 open IPO events; raise maxPages']);
    gamma.failNext = [503];
    expect(await failure(read())).toEqual([true, 'Gamma answered 503 for the open IPO events at offset 0']);
    const notAList = Object.assign(async () => Response.json({ data: [] }), { preconnect: fetch.preconnect });
    expect(await failure(read({ fetch: notAList }))).toEqual([true, "Gamma's answer for the open IPO events at offset 0 is not a list of events"]);
    expect(await failure(read({ baseUrl: 'http://127.0.0.1:9', timeoutMs: 200 }))).toEqual([true, expect.stringMatching(/^Gamma did not answer for the open IPO events at offset 0: /)]);
  });

  test('the list can change between passes; one event by slug too', async () => {
    const anthropic = fixture(A);
    gamma.setEvents([anthropic]);
    expect((await read()).map((e) => recordOf(recognizeIpoEvent(e)).status)).toEqual(['open']);
    gamma.setEvents([{ ...anthropic, closed: true }]);
    expect(await read()).toEqual([]);
    expect((await read({ closed: true })).map((e) => recordOf(recognizeIpoEvent(e)).status)).toEqual(['closed']);
    expect((await fetchGammaEvent(A, { baseUrl: gamma.url }))?.markets.map((m) => m.id).sort()).toEqual(anthropic.markets.map((m: Raw) => m.id).sort());
    expect(await fetchGammaEvent('nope', { baseUrl: gamma.url })).toBeNull();
  });
});

describe('ids', () => {
  test.each([
    ['anthropic-ipo-closing-market-cap-119', 'anthropic-ipo-closing-market-cap'],
    ['spacex-ipo-closing-market-cap-above-2t-649-783', 'spacex-ipo-closing-market-cap-above-2t'],
    ['spacex-ipo-closing-market-cap-above-1pt6t-514-594-116', 'spacex-ipo-closing-market-cap-above-1pt6t'],
    ['openai-ipo-closing-market-cap', 'openai-ipo-closing-market-cap'],
    ['SpaceX_IPO  closing--cap-7', 'spacex-ipo-closing-cap'],
    ['2027', '2027'],
    // At most 60 characters, cut between words: room for uniqueEventId's "-N" within the schema's 64.
    [`a-${'long-'.repeat(20)}tail-12`, `a${'-long'.repeat(11)}`],
    [`${'abcd-'.repeat(12)}xyz-3`, `${'abcd-'.repeat(12)}`.slice(0, -1)],
  ])('baseEventId(%s) → %s', (slug, id) => expect(baseEventId(slug)).toBe(id));

  test('uniqueEventId numbers a taken base from 2, and leaves the set to the caller', () => {
    const taken = new Set(['x-ipo', 'x-ipo-2']);
    expect(uniqueEventId('y-ipo', taken)).toBe('y-ipo');
    expect(uniqueEventId('x-ipo', taken)).toBe('x-ipo-3');
    expect(uniqueEventId('x-ipo', new Set(['x-ipo']))).toBe('x-ipo-2');
    expect([...taken]).toEqual(['x-ipo', 'x-ipo-2']);
  });
});
