/**
 * Live redemption: a settled position's paying tokens — the winning band's Yes shares,
 * every band's of a voided event — are redeemed from the user's deposit wallet for pUSD, in one
 * batch signed by the user's session key and submitted by Polymarket's relayer (wallet-batch.ts,
 * relayer-http.ts). Call targets, per market (docs.polymarket.com/trading/ctf/redeem):
 *   - v1 market: `redeemPositions(pUSD, 0, conditionId, [1, 2])` on the CTF collateral adapter, or on
 *     the neg-risk CTF collateral adapter for neg-risk markets (the adapters pull the wallet's whole
 *     balance of the condition's tokens and pay pUSD);
 *   - v2 (Protocol V2) market: `redeem(bytes31 conditionId, outcomeIndex, amount)` on the Router.
 *
 * Exactly once, across retries, crashes and instances. The chain burns what it redeems, so a second
 * batch can only redeem nothing; the wallet's nonce lets one batch per nonce execute; and our record
 * (polymarket_redemptions) is written before anything is signed:
 *   1. the intent, with the block height, so a later run can search the chain from there;
 *   2. the relayer's transaction id as soon as it answers; polled until STATE_CONFIRMED gives the hash.
 *      A transaction the relayer reports failed, no longer knows, or leaves in flight after the
 *      wallet's nonce moved past the batch's is given up (its id cleared) and the chain decides;
 *   3. with no id recorded (a crash between submission and record, a failed attempt), the tokens'
 *      balance decides: still held → sign and submit again (at the wallet's current nonce); gone → the
 *      redemption happened — its hash is a sibling settlement's recorded one (the user's two positions
 *      share the tokens) or the last transfer of those tokens out of the wallet since the intent;
 *      found nowhere (the tokens are in another wallet) → unpaid, with the reason, never marked paid.
 * A first attempt also clears the position's losing bands (for nothing); retries pay only, so a
 * loser's call can never hold the payout back. A redemption still in flight throws
 * RedemptionPending: the settlement stays unpaid and the next run (events:sync, the settlement
 * worker, a repeated resolution) finishes it.
 */
import { and, eq, ne, sql } from 'drizzle-orm';
import { encodeFunctionData, getAddress, pad, parseAbi, toHex, zeroHash, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Db } from '../../../db/client.ts';
import { polymarketRedemptions } from '../../../db/schema.ts';
import type { RedemptionChain } from '../../chain/redemption-chain.ts';
import type { Redemption, VenueCredentials } from '../venue.ts';
import { isRelayerFailure, RelayerError, type RelayerHttp } from './relayer-http.ts';
import type { TokenMap, VenueToken } from './token-map.ts';
import { signBatchAsSessionKey, type WalletCall } from './wallet-batch.ts';
import { errorMessage } from '../../lib/error-message.ts';

/** Polygon mainnet addresses (docs.polymarket.com/resources/contracts). */
export const REDEMPTION_CONTRACTS = {
  pUsd: getAddress('0xc011a7e12a19f7b1f670d46f03b03f3342e82dfb'),
  ctfAdapter: getAddress('0xada100db00ca00073811820692005400218fce1f'),
  negRiskAdapter: getAddress('0xada2005600dec949baf300f4c6120000bdb6eaab'),
  router: getAddress('0x12121212006e4cd160d18e3f00711da5c3372600'),
  walletFactory: getAddress('0x00000000000fb5c9adea0298d729a0cb3823cc07'),
};
export type RedemptionContracts = typeof REDEMPTION_CONTRACTS;

const ADAPTER = parseAbi(['function redeemPositions(address collateralToken, bytes32 parentCollectionId, bytes32 conditionId, uint256[] indexSets)']);
const ROUTER = parseAbi(['function redeem(bytes31 conditionId, uint256 outcomeIndex, uint256 amount)']);

/** Not a failure: the redemption is on its way (or the chain has not reported payouts yet); the next run finishes it. */
export class RedemptionPending extends Error {
  override name = 'RedemptionPending';
}

export interface RedeemerOptions {
  db: Db;
  tokens: TokenMap;
  chain: RedemptionChain;
  relayer: RelayerHttp;
  contracts?: Partial<RedemptionContracts>;
  /** How long one call waits for the relayer to confirm before leaving it to the next run. */
  waitMs?: number;
  pollMs?: number;
  /** A signed batch's validity (the relayer needs at least 10 s of it). */
  deadlineSeconds?: number;
  now?: () => number;
}

type Intent = typeof polymarketRedemptions.$inferSelect;

export class Redeemer {
  private contracts: RedemptionContracts;
  private now: () => number;

  constructor(private options: RedeemerOptions) {
    this.contracts = { ...REDEMPTION_CONTRACTS, ...options.contracts };
    this.now = options.now ?? Date.now;
  }

  async redeem(redemption: Redemption, credentials: VenueCredentials): Promise<{ txHash: string | null }> {
    if (redemption.payoutMicros === 0) return { txHash: null }; // nothing the position held pays
    if (!credentials.walletAddress) throw new Error('no deposit wallet in the trading settings: set walletAddress to redeem');
    if (!credentials.sessionKey) throw new Error('no session key stored with the credentials: store them again to redeem');
    const wallet = getAddress(credentials.walletAddress);
    const paying = await this.payingTokens(redemption);
    let intent = await this.intent(redemption, wallet, paying);
    if (intent.state === 'confirmed') return { txHash: intent.txHash };

    if (intent.relayerTxId) {
      const followed = await this.follow(intent, intent.relayerTxId, 0);
      if ('txHash' in followed) return followed;
      intent = await this.reload(intent.settlementId);
    }
    if (intent.wallet !== wallet.toLowerCase()) {
      // The user changed their funding wallet before anything was sent: redeem where the tokens are now.
      await this.update(intent.settlementId, { wallet: wallet.toLowerCase() });
      intent = await this.reload(intent.settlementId);
    }

    // The paying conditions must have been reported on chain. On a first attempt the position's other
    // (losing) bands whose conditions are reported are redeemed too, for nothing, so no worthless
    // tokens linger; a retry pays only, so a loser's call can never hold the payout back.
    const others = intent.attempts === 0 ? await this.otherTokens(redemption, paying) : [];
    const payouts = await this.options.chain.payoutsOf([...paying, ...others].filter((t) => t.version === 'v1').map((t) => t.conditionId!));
    const unreported = paying.find((t) => t.version === 'v1' && !payouts.get(t.conditionId!));
    if (unreported) throw new RedemptionPending(`the chain has not reported payouts for condition ${unreported.conditionId} yet`);
    const losers = others.filter((t) => payouts.get(t.conditionId!));

    const balances = await this.options.chain.balancesOf(wallet, [...paying, ...losers]);
    const held = paying.filter((t) => (balances.get(t.tokenId) ?? 0n) > 0n);
    if (!held.length) return { txHash: await this.alreadyRedeemed(intent, wallet, paying) };
    held.push(...losers.filter((t) => (balances.get(t.tokenId) ?? 0n) > 0n));

    const calls = held.map((t): WalletCall => this.callFor(t, balances.get(t.tokenId)!));
    const sessionKey = privateKeyToAccount(credentials.sessionKey);
    const [nonce, chainId] = await Promise.all([this.options.chain.walletNonce(wallet), this.options.chain.chainId()]);
    const batch = { wallet, nonce, deadline: BigInt(Math.floor(this.now() / 1000) + (this.options.deadlineSeconds ?? 600)), calls };
    const signature = await signBatchAsSessionKey(sessionKey, batch, chainId);
    await this.update(intent.settlementId, { nonce: nonce.toString(), attempts: sql`${polymarketRedemptions.attempts} + 1`, error: null });
    let relayerTxId: string;
    try {
      relayerTxId = await this.options.relayer.submit(sessionKey.address, batch, signature, `redeem ${redemption.settlementId}`);
    } catch (error) {
      await this.update(intent.settlementId, { error: errorMessage(error).slice(0, 300) });
      if (error instanceof RelayerError && error.status === 400 && /in-flight|busy|nonce/i.test(error.message)) throw new RedemptionPending(error.message);
      throw error;
    }
    await this.update(intent.settlementId, { relayerTxId, state: 'submitted' });
    const followed = await this.follow({ ...intent, nonce: nonce.toString() }, relayerTxId, this.options.waitMs ?? 20_000);
    if ('txHash' in followed) return followed;
    throw new Error(`the redemption failed (${followed.failed}); the next run tries again`);
  }

  /** The venue tokens of the bands that pay, with their conditions. */
  private async payingTokens(redemption: Redemption) {
    const byBand = await this.options.tokens.byBand();
    return redemption.payingTokenIds.map((bandId) => {
      const token = byBand.get(bandId);
      if (!token) throw new Error(`band ${bandId} has no venue token: run events:sync`);
      if (token.version === 'v1' && !token.conditionId) throw new Error(`band ${bandId} has no condition id: run events:sync`);
      return token;
    });
  }

  /** The position's bands that do not pay (v1 markets with a condition: redeemable for nothing once reported). */
  private async otherTokens(redemption: Redemption, paying: VenueToken[]) {
    const byBand = await this.options.tokens.byBand();
    return redemption.holdings
      .map((h) => byBand.get(h.tokenId))
      .filter((t): t is VenueToken => !!t && t.version === 'v1' && !!t.conditionId && !paying.some((p) => p.conditionId === t.conditionId));
  }

  private callFor(token: VenueToken, balance: bigint): WalletCall {
    if (token.version === 'v2') {
      // A Protocol V2 position id is (31-byte condition id << 8) | outcome index.
      const id = BigInt(token.tokenId);
      const data = encodeFunctionData({ abi: ROUTER, functionName: 'redeem', args: [toHex(id >> 8n, { size: 31 }), id & 0xffn, balance] });
      return { target: this.contracts.router, value: 0n, data };
    }
    const data = encodeFunctionData({ abi: ADAPTER, functionName: 'redeemPositions', args: [this.contracts.pUsd, zeroHash, pad(token.conditionId as Hex), [1n, 2n]] });
    return { target: token.negRisk ? this.contracts.negRiskAdapter : this.contracts.ctfAdapter, value: 0n, data };
  }

  private async intent(redemption: Redemption, wallet: Address, paying: VenueToken[]): Promise<Intent> {
    const existing = await this.reload(redemption.settlementId).catch(() => undefined);
    if (existing) return existing;
    const fromBlock = await this.options.chain.blockNumber();
    await this.options.db
      .insert(polymarketRedemptions)
      .values({
        settlementId: redemption.settlementId,
        accountId: redemption.owner.accountId,
        userId: redemption.owner.userId,
        wallet: wallet.toLowerCase(),
        conditionIds: [...new Set(paying.map((t) => t.conditionId ?? `v2:${t.tokenId}`))],
        tokenIds: paying.map((t) => t.tokenId),
        fromBlock: Number(fromBlock),
        state: 'pending',
      })
      .onConflictDoNothing();
    return this.reload(redemption.settlementId);
  }

  private async reload(settlementId: string): Promise<Intent> {
    const [row] = await this.options.db.select().from(polymarketRedemptions).where(eq(polymarketRedemptions.settlementId, settlementId));
    if (!row) throw new Error(`no redemption intent for ${settlementId}`);
    return row;
  }

  private update(settlementId: string, values: Partial<Record<keyof Intent, unknown>>) {
    return this.options.db
      .update(polymarketRedemptions)
      .set({ ...(values as object), updatedAt: sql`now()` })
      .where(eq(polymarketRedemptions.settlementId, settlementId));
  }

  /**
   * Polls a relayer transaction for up to `waitMs`: its hash once confirmed (recorded), or why it is
   * no longer worth waiting for — it failed, the relayer no longer knows it, or the wallet's nonce has
   * moved past the batch's (it executed or never will) — with the id cleared, so the caller falls
   * back to the chain: tokens still there are redeemed again, tokens gone are found. Only the payer
   * that recorded this id clears it (a conditional write). Still in flight → RedemptionPending.
   */
  private async follow(intent: Intent, relayerTxId: string, waitMs: number): Promise<{ txHash: string } | { failed: string }> {
    const until = this.now() + waitMs;
    const giveUp = async (failed: string) => {
      await this.options.db
        .update(polymarketRedemptions)
        .set({ state: 'pending', relayerTxId: null, error: failed.slice(0, 300), updatedAt: sql`now()` })
        .where(and(eq(polymarketRedemptions.settlementId, intent.settlementId), eq(polymarketRedemptions.relayerTxId, relayerTxId), ne(polymarketRedemptions.state, 'confirmed')));
      return { failed };
    };
    for (;;) {
      let tx;
      try {
        tx = await this.options.relayer.transaction(relayerTxId);
      } catch (error) {
        if (error instanceof RelayerError && error.status === 404) return giveUp(`the relayer no longer knows transaction ${relayerTxId}`);
        throw error;
      }
      if (tx.state === 'STATE_CONFIRMED' && tx.transactionHash) {
        await this.update(intent.settlementId, { state: 'confirmed', txHash: tx.transactionHash, error: null });
        return { txHash: tx.transactionHash };
      }
      if (isRelayerFailure(tx.state)) return giveUp(`relayer ${tx.state}: ${tx.error || 'no reason given'}`);
      if (this.now() >= until) {
        if (intent.nonce !== null && (await this.options.chain.walletNonce(getAddress(intent.wallet))) > BigInt(intent.nonce)) {
          return giveUp(`relayer transaction ${relayerTxId} is still ${tx.state}, but the wallet has moved past its nonce`);
        }
        throw new RedemptionPending(`relayer transaction ${relayerTxId} is ${tx.state}`);
      }
      await Bun.sleep(this.options.pollMs ?? 500);
    }
  }

  /**
   * The paying tokens have left the wallet: find the redemption that took them — a sibling
   * settlement's (the user's two positions share tokens) or the last transfer of them out of the
   * wallet since the intent. Found nowhere, the settlement stays unpaid with the reason: the tokens
   * are in another wallet (the setting changed) or left before the intent, which needs a person.
   */
  private async alreadyRedeemed(intent: Intent, wallet: Address, paying: VenueToken[]): Promise<string> {
    const siblings = await this.options.db
      .select({ txHash: polymarketRedemptions.txHash, tokenIds: polymarketRedemptions.tokenIds })
      .from(polymarketRedemptions)
      .where(and(eq(polymarketRedemptions.wallet, intent.wallet), eq(polymarketRedemptions.state, 'confirmed'), ne(polymarketRedemptions.settlementId, intent.settlementId)));
    const sibling = siblings.find((s) => s.tokenIds.some((id) => paying.some((t) => t.tokenId === id)));
    const txHash = sibling?.txHash ?? (await this.options.chain.lastTransferOut(wallet, paying, BigInt(intent.fromBlock)));
    if (!txHash) {
      throw new Error(`the winning tokens are not in wallet ${wallet} and no transfer of them out of it since block ${intent.fromBlock} was found; if they are in another wallet, set walletAddress to it`);
    }
    await this.update(intent.settlementId, { state: 'confirmed', txHash, relayerTxId: null, error: null });
    return txHash;
  }
}
