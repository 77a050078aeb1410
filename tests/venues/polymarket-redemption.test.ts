/**
 * Live redemption on chain, on an in-process EVM with the real contract
 * interfaces at their Polygon addresses: the Conditional Tokens stand-in, a pUSD ERC-20, the
 * (neg-risk) CTF collateral adapter, each user's deposit wallet, and Polymarket's relayer stand-in
 * (which executes WALLET batches through the wallet factory). Orders go to the CLOB stand-in; what
 * it fills is then minted to the wallet, as the exchange's settlement would.
 *
 * The whole life of a position: bought, partly sold, resolved, redeemed with a batch the user's
 * session key signed — history, settlements and the chain agree to the micro-unit, and repeating the
 * resolution pays nothing more. Then the ways it can go wrong, each paying exactly once: a crash
 * between the redemption and its record (reconciled by the next settlement run, which events:sync
 * and the settlement worker perform), an operator resolving before the chain has reported, a relayer
 * slow to confirm, two positions sharing a wallet's tokens paid by two runs at once, and a batch the
 * wallet refuses (a revoked session key), reported and retried, a funding wallet changed to one
 * without the tokens (never marked paid), and a relayer that forgets a transaction.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { keccak256, parseAbi, toHex, type Address, type Hex } from 'viem';
import { eventBands, events, polymarketRedemptions, settlements } from '../../db/schema.ts';
import { createPositionReader, POSITION_CONTRACTS } from '../../server/chain/position-reader.ts';
import { createRedemptionChain } from '../../server/chain/redemption-chain.ts';
import { settleEvent } from '../../server/trading/settlement.ts';
import { ClobHttp } from '../../server/venues/polymarket/clob-http.ts';
import { Redeemer, REDEMPTION_CONTRACTS } from '../../server/venues/polymarket/redeemer.ts';
import { RelayerHttp } from '../../server/venues/polymarket/relayer-http.ts';
import { TokenMap } from '../../server/venues/polymarket/token-map.ts';
import { PolymarketVenue } from '../../server/venues/polymarket/venue.ts';
import { createTestApp, DASHBOARD_KEY, type TestApp } from '../harness/app.ts';
import { ClobStandin } from '../harness/clob-standin.ts';
import { freshDatabase, type TestDatabase } from '../harness/databases.ts';
import { dashboardHeaders, fundedAccount, newUserId } from '../harness/factories.ts';
import { contractAbi, startEvm, type InProcessEvm } from '../harness/in-process-evm.ts';
import { RelayerStandin } from '../harness/relayer-standin.ts';
import { api, buy, sell, type Trader } from '../harness/trading.ts';

const CTF = POSITION_CONTRACTS.v1;
const C = REDEMPTION_CONTRACTS;
/** What neg-risk positions are keyed by (the real adapter's WrappedCollateral). */
const WRAPPED_COLLATERAL: Address = '0x3A3BD7bb9528E159577F7C2e685CC81A765002E2';
const BUILDER = { apiKey: 'builder-key', secret: Buffer.from('builder secret').toString('base64'), passphrase: 'builder-pass' };
const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)']);
const ERC1155 = parseAbi(['function balanceOf(address, uint256) view returns (uint256)']);

let database: TestDatabase;
let evm: InProcessEvm;
let clob: ClobStandin;
let relayer: RelayerStandin;
let t: TestApp;
const ctfAbi = () => contractAbi('ConditionalTokens');
/** Each band's question (we are the oracle on the in-process chain), by band id. */
const questions = new Map<string, Hex>();
const tokenOf = new Map<string, bigint>();

/** Prepares a condition per band of `eventId` and maps each band to its neg-risk Yes token, as events:sync would. */
async function mapEventOnChain(eventId: string) {
  const bands = await database.db.select().from(eventBands).where(eq(eventBands.eventId, eventId));
  for (const band of bands) {
    const questionId = keccak256(toHex(band.id));
    await evm.write({ address: CTF, abi: ctfAbi(), functionName: 'prepareCondition', args: [evm.deployer, questionId, 2n] });
    const conditionId = (await evm.client.readContract({ address: CTF, abi: ctfAbi(), functionName: 'getConditionId', args: [evm.deployer, questionId, 2n] })) as Hex;
    const positionId = async (indexSet: bigint) => (await evm.client.readContract({ address: C.negRiskAdapter, abi: contractAbi('CollateralAdapter'), functionName: 'positionIdOf', args: [conditionId, indexSet] })) as bigint;
    const [yes, no] = [await positionId(1n), await positionId(2n)];
    questions.set(band.id, questionId);
    tokenOf.set(band.id, yes);
    await database.db
      .update(eventBands)
      .set({ venue: sql`${eventBands.venue} || ${JSON.stringify({ tokenId: yes.toString(), noTokenId: no.toString(), conditionId, version: 'v1', negRisk: true })}::jsonb` })
      .where(eq(eventBands.id, band.id));
  }
}

/** The oracle reports: `winner`'s Yes pays 1, every other band's No. */
async function reportOnChain(eventId: string, winner: string) {
  const bands = await database.db.select({ id: eventBands.id }).from(eventBands).where(eq(eventBands.eventId, eventId));
  for (const band of bands) await evm.write({ address: CTF, abi: ctfAbi(), functionName: 'reportPayouts', args: [questions.get(band.id)!, band.id === winner ? [1n, 0n] : [0n, 1n]] });
}

/** A trading user whose deposit wallet is a DepositWallet contract that approved the adapters and authorised the service's session key. */
const owners = new Map<string, Address>();
async function liveTrader(): Promise<Trader> {
  const account = await fundedAccount(t, { usd: 100 });
  const userId = newUserId();
  const wallet = userId as Address;
  const owner = privateKeyToAccount(generatePrivateKey());
  await evm.deploy('DepositWallet', [owner.address, C.walletFactory], wallet);
  owners.set(userId, owner.address);
  for (const adapter of [C.ctfAdapter, C.negRiskAdapter]) await evm.write({ address: CTF, abi: ctfAbi(), functionName: 'setApprovalForAll', args: [adapter, true], from: wallet });
  const credentials = { apiKey: crypto.randomUUID(), secret: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url'), passphrase: 'pp' };
  clob.register({ ...credentials, wallet });
  const who: Trader = { account, userId, credentials: { ...credentials, walletAddress: userId }, headers: { ...account.headers, 'x-user-id': userId } };
  expect((await api(t, who, 'PUT', '/api/trading/settings', { walletAddress: userId })).res.status).toBe(200);
  expect((await api(t, who, 'POST', '/api/trading/credentials', credentials)).res.status).toBe(200);
  const { signerAddress } = (await api(t, who, 'GET', '/api/trading/settings')).body;
  clob.authorise(userId, signerAddress);
  await evm.write({ address: wallet, abi: contractAbi('DepositWallet'), functionName: 'authorizeSessionSigner', args: [signerAddress, 2n ** 40n], from: owner.address });
  return who;
}

/** What the CLOB filled for `who` lands in the wallet (the exchange settles on chain). */
async function settleFillsOnChain(who: Trader, eventId: string) {
  const bands = await database.db.select({ id: eventBands.id }).from(eventBands).where(eq(eventBands.eventId, eventId));
  for (const band of bands) {
    const held = clob.held(who.userId, tokenOf.get(band.id)!.toString());
    if (held > 0) await evm.write({ address: CTF, abi: ctfAbi(), functionName: 'mint', args: [who.userId, tokenOf.get(band.id)!, BigInt(held)] });
  }
}

const pUsdOf = async (who: Trader) => Number(await evm.client.readContract({ address: C.pUsd, abi: ERC20, functionName: 'balanceOf', args: [who.userId as Address] }));
const tokensOf = async (who: Trader, bandId: string) => Number(await evm.client.readContract({ address: CTF, abi: ERC1155, functionName: 'balanceOf', args: [who.userId as Address, tokenOf.get(bandId)!] }));
const resolve = async (eventId: string, winningBandId: string) => {
  const res = await t.request(`/api/events/${eventId}/resolution`, {
    method: 'POST',
    headers: { ...dashboardHeaders(DASHBOARD_KEY, (await fundedAccount(t)).accountId), 'content-type': 'application/json' },
    body: JSON.stringify({ winningBandId }),
  });
  expect(res.status).toBe(200);
  return res.json();
};
const settlementsOf = async (who: Trader, eventId: string) => (await api(t, who, 'GET', `/api/trading/settlements?eventId=${eventId}`)).body.settlements;
const bandsOf = async (eventId: string) => (await database.db.select().from(eventBands).where(eq(eventBands.eventId, eventId))).sort((a, b) => a.bandIndex - b.bandIndex);
/** A $60 position whose fills reached the wallet, a winning band it holds, that band's tokens in the wallet and the wallet's pUSD. */
async function openOnChain(who: Trader, eventId: string, side: 'LONG' | 'SHORT') {
  const bought = await buy(t, who, { eventId, side, amount: 60 });
  expect(bought.res.status).toBe(200);
  const positionId = bought.body.positionId as string;
  await settleFillsOnChain(who, eventId);
  const winner = await winnerHeldBy(who, positionId);
  return { positionId, winner, held: await tokensOf(who, winner), pUsdBefore: await pUsdOf(who) };
}

/** A winner that `who`'s position holds shares of (not the "No IPO" band, to vary it from the paper tests). */
const winnerHeldBy = async (who: Trader, positionId: string) => {
  const detail = (await api(t, who, 'GET', `/api/trading/positions/${positionId}`)).body;
  return detail.bands.filter((b: any) => b.tokens > 0).at(-1).bandId as string;
};

beforeAll(async () => {
  database = await freshDatabase();
  evm = await startEvm();
  await evm.deploy('ConditionalTokens', [], CTF);
  await evm.deploy('MiniErc20', [], C.pUsd);
  await evm.deploy('CollateralAdapter', [CTF, C.pUsd, WRAPPED_COLLATERAL], C.negRiskAdapter);
  await evm.deploy('CollateralAdapter', [CTF, C.pUsd, '0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174'], C.ctfAdapter);
  // The adapters pay pUSD from their reserve (the real ones unwrap what the CTF pays them).
  for (const adapter of [C.negRiskAdapter, C.ctfAdapter]) await evm.write({ address: C.pUsd, abi: contractAbi('MiniErc20'), functionName: 'mint', args: [adapter, 10n ** 15n] });
  await database.db.update(events).set({ venue: sql`${events.venue} || '{"structure":"bands"}'::jsonb` });
  for (const eventId of ['openai-ipo', 'anthropic-ipo', 'perplexity-ipo', 'strava-ipo', 'kraken-ipo', 'consensys-ipo', 'ledger-ipo']) await mapEventOnChain(eventId);

  const seedPrices = new Map((await database.db.select().from(eventBands)).map((b) => [String((b.venue as { tokenId?: string }).tokenId), b.seedPrice]));
  clob = new ClobStandin({ referencePrice: (id) => seedPrices.get(id), startingCollateralMicros: 10_000_000_000 }).start();
  relayer = new RelayerStandin({ evm, factory: C.walletFactory, builder: { key: BUILDER.apiKey, secret: BUILDER.secret, passphrase: BUILDER.passphrase } }).start();
  const tokens = new TokenMap(database.db);
  const venue = new PolymarketVenue({
    db: database.db,
    http: new ClobHttp({ baseUrl: clob.url, timeoutMs: 5000 }),
    tokens,
    positions: createPositionReader(evm.client),
    redeemer: new Redeemer({
      db: database.db,
      tokens,
      chain: createRedemptionChain(evm.client),
      relayer: new RelayerHttp({ baseUrl: relayer.url, builder: BUILDER, factory: C.walletFactory, timeoutMs: 5000 }),
      waitMs: 3000,
      pollMs: 20,
    }),
  });
  t = await createTestApp({ VENUE: 'polymarket', POLYMARKET_CLOB_URL: clob.url, MARKET_DATA_TTL_MS: '0' }, { database, venue });
}, 120_000);

afterAll(async () => {
  await t?.close();
  clob?.stop();
  relayer?.stop();
  await evm?.close();
  await database?.close();
});

describe('a position redeemed on chain', () => {
  test('bought, half sold, resolved, redeemed by the session key: history, settlements and the chain agree to the micro-unit; resolving again pays nothing', async () => {
    const alice = await liveTrader();
    const bought = await buy(t, alice, { eventId: 'openai-ipo', side: 'LONG', amount: 60 });
    expect(bought.res.status).toBe(200);
    const positionId = bought.body.positionId as string;
    const sold = await sell(t, alice, { positionId, percentage: 50 });
    expect(sold.res.status).toBe(200);
    await settleFillsOnChain(alice, 'openai-ipo');
    const winner = await winnerHeldBy(alice, positionId);
    const onChainBefore = await tokensOf(alice, winner);
    const detail = (await api(t, alice, 'GET', `/api/trading/positions/${positionId}`)).body;
    expect(Math.round(detail.bands.find((b: any) => b.bandId === winner).tokens * 1e6)).toBe(onChainBefore);
    const pUsdBefore = await pUsdOf(alice);

    await reportOnChain('openai-ipo', winner);
    expect(await resolve('openai-ipo', winner)).toMatchObject({ status: 'resolved', winningBandId: winner, settled: 1, paid: 1, unpaid: 0 });

    const [settlement] = await settlementsOf(alice, 'openai-ipo');
    const redemption = relayer.transactions.at(-1)!;
    // One batch, signed by the service's session key for the user (not the wallet's owner).
    const { signerAddress } = (await api(t, alice, 'GET', '/api/trading/settings')).body;
    expect(redemption).toMatchObject({ state: 'STATE_CONFIRMED', wallet: expect.stringMatching(new RegExp(alice.userId, 'i')), signer: expect.stringMatching(new RegExp(signerAddress, 'i')) });
    // One call per band it held, all to the neg-risk adapter: the winner pays, the losers are cleared for nothing.
    const heldBands = detail.bands.filter((b: any) => b.tokens > 0);
    expect(redemption.calls).toHaveLength(heldBands.length);
    expect(redemption.calls.every((c) => c.target.toLowerCase() === C.negRiskAdapter.toLowerCase())).toBe(true);
    for (const band of heldBands) expect(await tokensOf(alice, band.bandId)).toBe(0);
    expect(settlement).toMatchObject({ positionId, winningBandId: winner, txHash: redemption.hash, proceeds: onChainBefore / 1e6, payoutPerUnit: expect.any(Number) });
    // The chain paid exactly the settlement's proceeds, and took the winning tokens.
    expect((await pUsdOf(alice)) - pUsdBefore).toBe(onChainBefore);
    expect(await tokensOf(alice, winner)).toBe(0);
    // History: BUY, SELL and one SETTLE whose amount is the proceeds; realised P&L adds up.
    const { trades } = (await api(t, alice, 'GET', `/api/trading/history?eventId=openai-ipo`)).body;
    const settle = trades.filter((x: any) => x.action === 'SETTLE');
    expect(settle).toHaveLength(1);
    expect(Math.round(settle[0].amount * 1e6)).toBe(onChainBefore);
    expect(Math.round(settlement.realizedPnl * 1e6)).toBe(onChainBefore - Math.round(detail.cost * 1e6));
    const position = (await api(t, alice, 'GET', `/api/trading/positions/${positionId}`)).body;
    expect(position.status).toBe('settled');

    // Resolving again: nothing to settle, nothing to pay, nothing submitted.
    const submissions = relayer.submissions;
    expect(await resolve('openai-ipo', winner)).toMatchObject({ changed: false, settled: 0, paid: 0, unpaid: 0 });
    expect(relayer.submissions).toBe(submissions);
    expect((await pUsdOf(alice)) - pUsdBefore).toBe(onChainBefore);
  });

  test('a crash between the redemption and its record: the next run finds the redemption on chain and records it, paying nothing more', async () => {
    const bob = await liveTrader();
    const { positionId, winner, held, pUsdBefore } = await openOnChain(bob, 'anthropic-ipo', 'SHORT');
    await reportOnChain('anthropic-ipo', winner);

    // The relayer executes the batch, but its answer never reaches us.
    relayer.loseNextResponse();
    const submissions = relayer.submissions;
    expect(await resolve('anthropic-ipo', winner)).toMatchObject({ settled: 1, paid: 0, unpaid: 1 });
    expect((await pUsdOf(bob)) - pUsdBefore).toBe(held);
    const [row] = await database.db.select().from(settlements).where(eq(settlements.positionId, positionId));
    expect(row).toMatchObject({ paidAt: null, txHash: null, payError: expect.stringContaining('503') });
    const executed = relayer.transactions.at(-1)!;
    expect(executed.state).toBe('STATE_CONFIRMED');

    // The next run (events:sync and the settlement worker run exactly this).
    const second = await settleEvent(t.services, 'anthropic-ipo');
    expect(second).toMatchObject({ settled: 0, paid: 1, unpaid: 0 });
    expect(relayer.submissions).toBe(submissions + 1);
    const [settlement] = await settlementsOf(bob, 'anthropic-ipo');
    expect(settlement.txHash).toBe(executed.hash);
    expect((await pUsdOf(bob)) - pUsdBefore).toBe(held);
    expect(await settleEvent(t.services, 'anthropic-ipo')).toMatchObject({ paid: 0, unpaid: 0 });
  });

  test('resolved before the chain reports, and a relayer slow to confirm: unpaid until the chain can pay, then paid once without a second submission', async () => {
    const carol = await liveTrader();
    const { positionId, winner, held, pUsdBefore } = await openOnChain(carol, 'perplexity-ipo', 'LONG');
    const submissions = relayer.submissions;

    // An operator resolves first: the position settles, the payment waits for the chain.
    expect(await resolve('perplexity-ipo', winner)).toMatchObject({ settled: 1, paid: 0, unpaid: 1 });
    expect(relayer.submissions).toBe(submissions);
    const [waiting] = await database.db.select().from(settlements).where(eq(settlements.positionId, positionId));
    expect(waiting!.payError).toContain('has not reported payouts');

    // The chain reports; the relayer accepts the batch but does not confirm within the run.
    await reportOnChain('perplexity-ipo', winner);
    relayer.hold();
    expect(await settleEvent(t.services, 'perplexity-ipo')).toMatchObject({ paid: 0, unpaid: 1 });
    expect(relayer.submissions).toBe(submissions + 1);
    const [intent] = await database.db.select().from(polymarketRedemptions).where(eq(polymarketRedemptions.settlementId, waiting!.id));
    expect(intent).toMatchObject({ state: 'submitted', relayerTxId: expect.any(String) });
    await relayer.release();

    // The next run follows the recorded relayer transaction instead of submitting again.
    expect(await settleEvent(t.services, 'perplexity-ipo')).toMatchObject({ paid: 1, unpaid: 0 });
    expect(relayer.submissions).toBe(submissions + 1);
    expect((await pUsdOf(carol)) - pUsdBefore).toBe(held);
    expect((await settlementsOf(carol, 'perplexity-ipo'))[0].txHash).toBe(relayer.transactions.at(-1)!.hash);
  });

  test('two positions sharing the wallet\'s tokens, paid by two runs at once: one redemption pays both, once', async () => {
    const dave = await liveTrader();
    const long = await buy(t, dave, { eventId: 'strava-ipo', side: 'LONG', amount: 60 });
    const short = await buy(t, dave, { eventId: 'strava-ipo', side: 'SHORT', amount: 60 });
    expect([long.res.status, short.res.status]).toEqual([200, 200]);
    await settleFillsOnChain(dave, 'strava-ipo');
    const bands = await bandsOf('strava-ipo');
    const longDetail = (await api(t, dave, 'GET', `/api/trading/positions/${long.body.positionId}`)).body;
    const shortDetail = (await api(t, dave, 'GET', `/api/trading/positions/${short.body.positionId}`)).body;
    const sharesOf = (detail: any, bandId: string) => Math.round((detail.bands.find((b: any) => b.bandId === bandId)?.tokens ?? 0) * 1e6);
    const winner = bands.find((b) => sharesOf(longDetail, b.id) > 0 && sharesOf(shortDetail, b.id) > 0)!.id;
    const held = await tokensOf(dave, winner);
    expect(held).toBe(sharesOf(longDetail, winner) + sharesOf(shortDetail, winner));
    const pUsdBefore = await pUsdOf(dave);

    // Settled while the chain is silent, then paid by two runs at once (two instances).
    expect(await resolve('strava-ipo', winner)).toMatchObject({ settled: 2, paid: 0, unpaid: 2 });
    await reportOnChain('strava-ipo', winner);
    await Promise.all([settleEvent(t.services, 'strava-ipo'), settleEvent(t.services, 'strava-ipo')]);
    await settleEvent(t.services, 'strava-ipo'); // whatever a lost race left over
    const paid = await settlementsOf(dave, 'strava-ipo');
    expect(paid).toHaveLength(2);
    expect(paid.every((s: any) => s.txHash && s.txHash === paid[0].txHash)).toBe(true);
    expect(Math.round((paid[0].proceeds + paid[1].proceeds) * 1e6)).toBe(held);
    expect((await pUsdOf(dave)) - pUsdBefore).toBe(held);
    expect(await tokensOf(dave, winner)).toBe(0);
    const unpaid = await database.db.select().from(settlements).where(sql`${settlements.eventId} = 'strava-ipo' and ${settlements.paidAt} is null`);
    expect(unpaid).toHaveLength(0);
  });

  test('a redemption the wallet refuses (the session key was revoked) fails on chain, is reported, and pays once when retried after the key is authorised again', async () => {
    const erin = await liveTrader();
    const { positionId, winner, held, pUsdBefore } = await openOnChain(erin, 'kraken-ipo', 'LONG');
    const { signerAddress } = (await api(t, erin, 'GET', '/api/trading/settings')).body;
    const walletAbi = contractAbi('DepositWallet');
    await evm.write({ address: erin.userId as Address, abi: walletAbi, functionName: 'revokeSessionSigner', args: [signerAddress], from: owners.get(erin.userId)! });
    await reportOnChain('kraken-ipo', winner);

    expect(await resolve('kraken-ipo', winner)).toMatchObject({ settled: 1, paid: 0, unpaid: 1 });
    const [failed] = await settlementsOf(erin, 'kraken-ipo');
    expect(failed).toMatchObject({ paid: false, txHash: null, unpaidReason: expect.stringContaining('InvalidSignature') });
    expect(relayer.transactions.at(-1)!.state).toBe('STATE_FAILED');
    expect(await pUsdOf(erin)).toBe(pUsdBefore);

    await evm.write({ address: erin.userId as Address, abi: walletAbi, functionName: 'authorizeSessionSigner', args: [signerAddress, 2n ** 40n], from: owners.get(erin.userId)! });
    expect(await settleEvent(t.services, 'kraken-ipo')).toMatchObject({ paid: 1, unpaid: 0 });
    const [paid] = await settlementsOf(erin, 'kraken-ipo');
    expect(paid).toMatchObject({ paid: true, txHash: relayer.transactions.at(-1)!.hash, unpaidReason: null });
    expect((await pUsdOf(erin)) - pUsdBefore).toBe(held);
    expect(await settleEvent(t.services, 'kraken-ipo')).toMatchObject({ paid: 0, unpaid: 0 });
    expect((await pUsdOf(erin)) - pUsdBefore).toBe(held);
  });

  test('the funding wallet changed to one without the tokens: unpaid with the reason, never marked paid; set back, it pays once', async () => {
    const fay = await liveTrader();
    const { positionId, winner, held, pUsdBefore } = await openOnChain(fay, 'consensys-ipo', 'LONG');
    const elsewhere = newUserId();
    expect((await api(t, fay, 'PUT', '/api/trading/settings', { walletAddress: elsewhere })).res.status).toBe(200);
    await reportOnChain('consensys-ipo', winner);

    expect(await resolve('consensys-ipo', winner)).toMatchObject({ settled: 1, paid: 0, unpaid: 1 });
    const [unpaid] = await settlementsOf(fay, 'consensys-ipo');
    expect(unpaid).toMatchObject({ paid: false, unpaidReason: expect.stringContaining(`not in wallet ${elsewhere}`) });
    expect(await settleEvent(t.services, 'consensys-ipo')).toMatchObject({ paid: 0, unpaid: 1 });

    expect((await api(t, fay, 'PUT', '/api/trading/settings', { walletAddress: fay.userId })).res.status).toBe(200);
    expect(await settleEvent(t.services, 'consensys-ipo')).toMatchObject({ paid: 1, unpaid: 0 });
    expect((await pUsdOf(fay)) - pUsdBefore).toBe(held);
    expect((await settlementsOf(fay, 'consensys-ipo'))[0]).toMatchObject({ paid: true, txHash: relayer.transactions.at(-1)!.hash });
  });

  test('the relayer forgets a transaction it never executed: the next run falls back to the chain and redeems once', async () => {
    const gus = await liveTrader();
    const { positionId, winner, held, pUsdBefore } = await openOnChain(gus, 'ledger-ipo', 'SHORT');
    await reportOnChain('ledger-ipo', winner);

    relayer.hold();
    expect(await resolve('ledger-ipo', winner)).toMatchObject({ settled: 1, paid: 0, unpaid: 1 });
    relayer.forgetHeld();
    await relayer.release();
    const submissions = relayer.submissions;
    expect(await settleEvent(t.services, 'ledger-ipo')).toMatchObject({ paid: 1, unpaid: 0 });
    expect(relayer.submissions).toBe(submissions + 1);
    expect((await pUsdOf(gus)) - pUsdBefore).toBe(held);
    expect(await settleEvent(t.services, 'ledger-ipo')).toMatchObject({ paid: 0, unpaid: 0 });
    expect((await pUsdOf(gus)) - pUsdBefore).toBe(held);
  });
});
