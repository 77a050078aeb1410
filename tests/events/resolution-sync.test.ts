/**
 * Resolution from the live venue's two sources: `events:sync` reads each market's
 * outcome from Gamma and from the chain (Conditional Tokens payout vectors, on an in-process EVM with
 * the CTF stand-in at its real address). An outcome both report is applied and the event's positions
 * settle, once however often the sync runs; one source alone waits (the event is closed, trading
 * stopped); two that disagree are reported and nothing changes; an applied outcome is never changed
 * by a sync. The per-source rules (bands, ladders, 50-50 voids) are checked on their own first.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { keccak256, toHex, type Hex } from 'viem';
import { POSITION_CONTRACTS } from '../../server/chain/position-reader.ts';
import { createResolutionReader } from '../../server/chain/resolution-reader.ts';
import { findEvent } from '../../server/events/queries.ts';
import { chainVerdict, decideResolution, eventOutcome, gammaVerdict, type MarketVerdict } from '../../server/events/resolution-sources.ts';
import { gammaEventSchema, gammaMarketSchema } from '../../server/events/gamma-client.ts';
import { applyEventSync, planEventSync } from '../../server/events/gamma-sync.ts';
import { syncEvents } from '../../server/commands/sync-events.ts';
import type { TestApp } from '../harness/app.ts';
import { contractAbi, startEvm, type InProcessEvm } from '../harness/in-process-evm.ts';
import { api, buy, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp, ledgerOf, TEST_VENUE } from '../harness/trading-venue.ts';

const CTF = POSITION_CONTRACTS.v1;
const fixture = (slug: string) => JSON.parse(readFileSync(new URL(`../fixtures/gamma/${slug}.json`, import.meta.url), 'utf8'));

describe('reading one source', () => {
  const market = (fields: Record<string, unknown>) => gammaMarketSchema.parse({ id: '1', outcomes: '["Yes","No"]', ...fields });
  test('Gamma: closed, UMA resolved and prices of exactly 1/0 (or 0.5/0.5); anything else is pending', () => {
    expect(gammaVerdict(market({ closed: true, umaResolutionStatus: 'resolved', outcomePrices: '["1","0"]' }))).toBe('yes');
    expect(gammaVerdict(market({ closed: true, umaResolutionStatus: 'resolved', outcomePrices: '["0","1"]' }))).toBe('no');
    expect(gammaVerdict(market({ closed: true, outcomePrices: '["0.5","0.5"]' }))).toBe('split');
    expect(gammaVerdict(market({ closed: true, outcomes: '["No","Yes"]', outcomePrices: '["0","1"]' }))).toBe('yes');
    expect(gammaVerdict(market({ closed: true, umaResolutionStatus: 'proposed', outcomePrices: '["1","0"]' }))).toBe('pending');
    expect(gammaVerdict(market({ closed: false, outcomePrices: '["1","0"]' }))).toBe('pending');
    expect(gammaVerdict(market({ closed: true, outcomePrices: '["0.97","0.03"]' }))).toBe('pending');
    expect(gammaVerdict(undefined)).toBe('pending');
  });
  test('the chain: a payout vector, or nothing reported', () => {
    expect(chainVerdict({ numerators: [1n, 0n], denominator: 1n })).toBe('yes');
    expect(chainVerdict({ numerators: [0n, 1n], denominator: 1n })).toBe('no');
    expect(chainVerdict({ numerators: [1n, 1n], denominator: 2n })).toBe('split');
    expect(chainVerdict({ numerators: [0n, 1n], denominator: 1n }, 1)).toBe('yes');
    expect(chainVerdict(null)).toBe('pending');
  });
  const bands = { venue: { structure: 'bands' }, bands: [{}, {}, {}, {}] } as any;
  const ladder = { venue: { structure: 'ladder' }, bands: [{}, {}, {}, {}] } as any;
  const verdicts = (...v: [number, MarketVerdict][]) => new Map(v);
  test.each([
    ['bands: one Yes, the rest No', bands, verdicts([0, 'no'], [1, 'no'], [2, 'yes'], [3, 'no']), { kind: 'resolved', bandIndex: 2 }],
    ['bands: one Yes, one not yet reported', bands, verdicts([0, 'no'], [1, 'pending'], [2, 'yes'], [3, 'no']), { kind: 'pending' }],
    ['bands: a band without a market', bands, verdicts([0, 'no'], [2, 'yes'], [3, 'no']), { kind: 'pending' }],
    ['bands: two Yes', bands, verdicts([0, 'yes'], [1, 'no'], [2, 'yes'], [3, 'no']), { kind: 'inconsistent' }],
    ['bands: every band No', bands, verdicts([0, 'no'], [1, 'no'], [2, 'no'], [3, 'no']), { kind: 'inconsistent' }],
    ['bands: every market 50-50', bands, verdicts([0, 'split'], [1, 'split'], [2, 'split'], [3, 'split']), { kind: 'voided' }],
    ['bands: some 50-50', bands, verdicts([0, 'split'], [1, 'no'], [2, 'yes'], [3, 'no']), { kind: 'inconsistent' }],
    ['ladder: above 1 and 2, not 3', ladder, verdicts([1, 'yes'], [2, 'yes'], [3, 'no']), { kind: 'resolved', bandIndex: 2 }],
    ['ladder: above nothing → the bottom band', ladder, verdicts([1, 'no'], [2, 'no'], [3, 'no']), { kind: 'resolved', bandIndex: 0 }],
    ['ladder: above 2 but not 1', ladder, verdicts([1, 'no'], [2, 'yes'], [3, 'no']), { kind: 'inconsistent' }],
    ['ladder: one not reported', ladder, verdicts([1, 'yes'], [2, 'pending'], [3, 'no']), { kind: 'pending' }],
  ])('%s', (_, event, v, expected) => expect(eventOutcome(event, v)).toMatchObject(expected));

  test('deciding: both agree → apply; one alone → wait; they disagree → contradiction; stored outcomes are never changed', () => {
    const event = { status: 'open', resolvedBandIndex: null, bands: [{ id: 'b0', label: 'No IPO' }, { id: 'b1', label: '$1T' }] } as any;
    const won = (bandIndex: number) => ({ kind: 'resolved' as const, bandIndex });
    const pending = { kind: 'pending' as const, detail: '' };
    expect(decideResolution(event, won(1), won(1))).toEqual({ action: 'apply', outcome: { winningBandId: 'b1' } });
    expect(decideResolution(event, { kind: 'voided' }, { kind: 'voided' })).toEqual({ action: 'apply', outcome: { voided: true } });
    expect(decideResolution(event, won(1), pending)).toMatchObject({ action: 'wait', reason: expect.stringContaining('waiting for the chain') });
    expect(decideResolution(event, pending, won(1))).toMatchObject({ action: 'wait', reason: expect.stringContaining('waiting for Gamma') });
    expect(decideResolution(event, won(1), null)).toMatchObject({ action: 'wait', reason: expect.stringContaining('POLYGON_RPC_URL') });
    expect(decideResolution(event, won(1), won(0))).toMatchObject({ action: 'contradiction', reason: expect.stringContaining('but the chain reports band b0') });
    expect(decideResolution(event, pending, pending)).toMatchObject({ action: 'none' });
    const resolved = { ...event, status: 'resolved', resolvedBandIndex: 1 };
    expect(decideResolution(resolved, won(1), won(1))).toMatchObject({ action: 'none' });
    expect(decideResolution(resolved, won(0), won(0))).toMatchObject({ action: 'contradiction', reason: expect.stringContaining('left as it is') });
  });
});

// The sync settles on whatever venue runs; the paper venue pays at once (live redemption: polymarket-redemption.test.ts).
describe.skipIf(TEST_VENUE !== 'paper')('events:sync with Gamma and the chain', () => {
  let t: TestApp;
  let evm: InProcessEvm;
  let gammaServer: ReturnType<typeof Bun.serve>;
  let gammaUrl: string;
  let alice: Trader;
  const served: Record<string, any> = {};
  /** Each market's question id on the chain (we are its oracle), by Gamma market id. */
  const questions = new Map<string, Hex>();
  const ctfAbi = contractAbi('ConditionalTokens');

  /** A fixture whose markets carry conditions prepared on the in-process chain. */
  async function onChain(slug: string) {
    const event = fixture(slug);
    for (const market of event.markets) {
      const questionId = keccak256(toHex(`${slug}/${market.id}`));
      await evm.write({ address: CTF, abi: ctfAbi, functionName: 'prepareCondition', args: [evm.deployer, questionId, 2n] });
      market.conditionId = await evm.client.readContract({ address: CTF, abi: ctfAbi, functionName: 'getConditionId', args: [evm.deployer, questionId, 2n] });
      questions.set(market.id, questionId);
    }
    return event;
  }
  /** Gamma's view after resolution: every market closed and resolved, `winner` (a groupItemTitle) Yes, or all 50-50. */
  function gammaResolved(event: any, winner: string | 'void') {
    const copy = structuredClone(event);
    copy.closed = true;
    for (const m of copy.markets) {
      Object.assign(m, { closed: true, acceptingOrders: false, umaResolutionStatus: 'resolved' });
      m.outcomePrices = JSON.stringify(winner === 'void' ? ['0.5', '0.5'] : m.groupItemTitle === winner ? ['1', '0'] : ['0', '1']);
    }
    return copy;
  }
  async function reportOnChain(event: any, winner: string | 'void') {
    for (const m of event.markets) {
      const payouts = winner === 'void' ? [1n, 1n] : m.groupItemTitle === winner ? [1n, 0n] : [0n, 1n];
      await evm.write({ address: CTF, abi: ctfAbi, functionName: 'reportPayouts', args: [questions.get(m.id)!, payouts] });
    }
  }
  const sync = async (eventId: string, chain = true) => (await syncEvents(t.services, { events: [eventId], gammaUrl, dryRun: false, chain: chain ? createResolutionReader(evm.client) : undefined }))[0]!;
  const eventView = async (eventId: string) => (await api(t, alice, 'GET', '/api/trading/events')).body.events.find((e: any) => e.id === eventId);
  const bandOf = async (eventId: string, title: string) => {
    const event = await findEvent(t.database.db, eventId);
    const market = served[eventId].markets.find((m: any) => m.groupItemTitle === title);
    return event.bands.find((b) => b.venue.conditionId === market.conditionId)!;
  };

  const slugs: Record<string, string> = { 'openai-ipo': 'openai-ipo-closing-market-cap', 'anthropic-ipo': 'anthropic-ipo-closing-market-cap-119' };
  const original: Record<string, any> = {};

  beforeAll(async () => {
    t = await createTradingApp({ MARKET_DATA_TTL_MS: '0' });
    evm = await startEvm();
    await evm.deploy('ConditionalTokens', [], CTF);
    gammaServer = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: (request) => {
        const slug = decodeURIComponent(new URL(request.url).pathname.replace(/^\/events\/slug\//, ''));
        const eventId = Object.keys(slugs).find((id) => slugs[id] === slug);
        return eventId ? Response.json(served[eventId]) : Response.json({ error: 'not found' }, { status: 404 });
      },
    });
    gammaUrl = `http://127.0.0.1:${gammaServer.port}`;
    for (const [eventId, slug] of Object.entries(slugs)) served[eventId] = original[eventId] = await onChain(slug);
    // Map the bands (and their conditions) first, while the markets are open.
    for (const eventId of Object.keys(slugs)) expect(await sync(eventId)).toMatchObject({ status: 'open', problems: [] });
    alice = await trader(t);
  }, 120_000);
  afterAll(async () => {
    gammaServer?.stop(true);
    await evm?.close();
    await t?.close();
  });

  test('Gamma alone reports a winner: the event closes (buys refused) but is not resolved', async () => {
    const { res } = await buy(t, alice, { eventId: 'openai-ipo', side: 'LONG', amount: 60 });
    expect(res.status).toBe(200);
    served['openai-ipo'] = gammaResolved(original['openai-ipo'], '$1.0-1.25T');
    const line = await sync('openai-ipo');
    expect(line).toMatchObject({ status: 'closed', resolution: { gamma: (await bandOf('openai-ipo', '$1.0-1.25T')).id, chain: 'pending', action: 'wait' }, problems: [] });
    expect(await eventView('openai-ipo')).toMatchObject({ status: 'closed', winningBandId: null });
    const refused = await buy(t, alice, { eventId: 'openai-ipo', side: 'LONG', amount: 10 });
    expect(refused.res.status).toBe(422);
    // Without a chain reader the sync cannot confirm it either.
    expect(await sync('openai-ipo', false)).toMatchObject({ status: 'closed', resolution: { chain: 'not configured', action: 'wait', reason: expect.stringContaining('POLYGON_RPC_URL') } });
  });

  test('the chain confirms it: resolved and settled; a crash between the payment and its record is reconciled by the next sync, paying once', async () => {
    await reportOnChain(original['openai-ipo'], '$1.0-1.25T');
    const winner = await bandOf('openai-ipo', '$1.0-1.25T');
    const [summary] = (await api(t, alice, 'GET', '/api/trading/positions?eventId=openai-ipo')).body.positions;
    const position = (await api(t, alice, 'GET', `/api/trading/positions/${summary.id}`)).body;
    const held = Math.round(position.bands.find((b: any) => b.bandId === winner.id).tokens * 1e6);
    expect(held).toBeGreaterThan(0);
    const before = await ledgerOf(t).collateral(alice);

    // The venue pays, then the process dies before the payment is recorded.
    const venue = t.services.venue as any;
    const redeem = venue.redeem;
    venue.redeem = async (...args: unknown[]) => {
      await redeem.apply(venue, args);
      throw new Error('crashed before recording the payment');
    };
    let line;
    try {
      line = await sync('openai-ipo');
    } finally {
      venue.redeem = redeem;
    }
    expect(line).toMatchObject({ status: 'resolved', resolution: { gamma: winner.id, chain: winner.id, action: 'apply' }, settlement: { settled: 1, paid: 0, unpaid: 1 }, problems: [] });
    expect(await eventView('openai-ipo')).toMatchObject({ status: 'resolved', winningBandId: winner.id });
    expect(await ledgerOf(t).collateral(alice)).toBe(before + held);

    // The next sync finds the event resolved, asks the venue again, and records the payment it had made.
    expect(await sync('openai-ipo')).toMatchObject({ status: 'resolved', resolution: { action: 'none' }, settlement: { settled: 0, paid: 1, unpaid: 0 } });
    const { settlements } = (await api(t, alice, 'GET', '/api/trading/settlements?eventId=openai-ipo')).body;
    expect(settlements).toHaveLength(1);
    expect(settlements[0]).toMatchObject({ positionId: position.id, winningBandId: winner.id, proceeds: held / 1e6, paid: true });
    expect(await ledgerOf(t).collateral(alice)).toBe(before + held);
    // And again: nothing to apply, settle or pay.
    expect(await sync('openai-ipo')).toMatchObject({ resolution: { action: 'none' }, settlement: { settled: 0, paid: 0, unpaid: 0 } });
    expect(await ledgerOf(t).collateral(alice)).toBe(before + held);
  });

  test('Gamma and the chain disagree: reported, nothing applied, trading stopped', async () => {
    served['anthropic-ipo'] = gammaResolved(original['anthropic-ipo'], original['anthropic-ipo'].markets[0].groupItemTitle);
    await reportOnChain(original['anthropic-ipo'], original['anthropic-ipo'].markets[1].groupItemTitle);
    const line = await sync('anthropic-ipo');
    expect(line).toMatchObject({ status: 'closed', resolution: { action: 'contradiction' } });
    expect((line.problems as string[]).some((p) => p.includes('Gamma reports') && p.includes('but the chain reports'))).toBe(true);
    expect((await findEvent(t.database.db, 'anthropic-ipo')).status).toBe('closed');
  });

  test('an applied outcome is not changed by sources that later disagree', async () => {
    const other = original['openai-ipo'].markets.find((m: any) => m.groupItemTitle !== '$1.0-1.25T').groupItemTitle;
    served['openai-ipo'] = gammaResolved(original['openai-ipo'], other);
    const line = await sync('openai-ipo');
    expect(line).toMatchObject({ status: 'resolved', resolution: { action: 'contradiction' } });
    expect((await findEvent(t.database.db, 'openai-ipo')).resolvedBandIndex).toBe((await bandOf('openai-ipo', '$1.0-1.25T')).bandIndex);
    // A sync that read the event before it was resolved (an operator resolved it meanwhile) writes its
    // mapping but never its stale status over the resolution.
    const stale = { ...(await findEvent(t.database.db, 'openai-ipo')), status: 'open' as const, resolvedBandIndex: null };
    await applyEventSync(t.database.db, planEventSync(stale, gammaEventSchema.parse(original['openai-ipo'])));
    expect(await findEvent(t.database.db, 'openai-ipo')).toMatchObject({ status: 'resolved', resolvedBandIndex: (await bandOf('openai-ipo', '$1.0-1.25T')).bandIndex });
  });
});

