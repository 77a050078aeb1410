/**
 * positions/sync (docs/decisions.md §7): first orders/sync (so fills the venue knows are recorded), then the
 * wallet's token balances are allotted to the user's positions oldest first. A position is
 * verified when the wallet holds at least its shares of every band; an open position none of whose
 * tokens remain in the funding wallet is closed (`removed`); tokens left over are `untracked`.
 * On the paper venue its ledger stands in for the chain.
 */
import { and, asc, eq, inArray } from 'drizzle-orm';
import { positions } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import { microsToUsd } from '../lib/money.ts';
import type { TradingHandles } from './handles.ts';
import { openCredentials } from './credentials.ts';
import { executionOf } from './execution.ts';
import { syncOrders } from './order-sync.ts';
import { bandsOf } from './queries.ts';
import { tokensOf } from '../events/tokens.ts';
import { closeAsGone } from './ledger-writes.ts';
import { getSettings, type TradingUser } from './settings.ts';
import { callVenue } from './venue-calls.ts';

export async function syncPositions(services: TradingHandles, user: TradingUser, walletAddress: string | undefined) {
  const execution = executionOf(services, user.accountId);
  const funding = (await getSettings(execution.db, user)).walletAddress;
  const wallet = walletAddress ?? funding;
  if (!wallet) throw new ApiError('BAD_REQUEST', 'walletAddress: required: send it, or set it with PUT /api/trading/settings');
  const credentials = await openCredentials(execution.db, services.credentialCipher, user);

  const mine = and(eq(positions.accountId, user.accountId), eq(positions.userId, user.userId));
  const wasPending = await execution.db.select({ id: positions.id }).from(positions).where(and(mine, eq(positions.status, 'pending')));
  await syncOrders(services, user);

  const active = await execution.db
    .select()
    .from(positions)
    .where(and(mine, inArray(positions.status, ['open', 'pending'])))
    .orderBy(asc(positions.createdAt), asc(positions.id));
  const bands = await bandsOf(execution.db, active.map((p) => p.id));
  const snapshot = await services.marketData.snapshot();
  const supported = snapshot.events.flatMap((e) => tokensOf(e).map((token) => ({ eventId: e.id, token })));
  // Every token the listed events trade, and every token a position holds (even one no longer listed in the snapshot).
  const tokenIds = [...new Set([...supported.map((s) => s.token.id), ...[...bands.values()].flat().map((b) => b.bandId)])];
  const balances = await callVenue('the wallet balances', execution.timeoutMs, () => execution.venue.getTokenBalances(credentials, tokenIds, wallet));
  // Only the funding wallet's balances can close positions: another address proves nothing about them.
  const mayClose = funding !== null && wallet.toLowerCase() === funding.toLowerCase();

  const free = new Map(balances);
  let removed = 0;
  const checked = [];
  for (const position of active) {
    const held = bands.get(position.id)!.filter((b) => b.sharesMicros > 0);
    let verified = true;
    let anyLeft = false;
    for (const band of held) {
      const available = free.get(band.bandId) ?? 0;
      if (available < band.sharesMicros) verified = false;
      if (available > 0) anyLeft = true;
      free.set(band.bandId, Math.max(0, available - band.sharesMicros));
    }
    let status = position.status;
    if (mayClose && position.status === 'open' && held.length > 0 && !anyLeft && (await closeAsGone(execution.db, position.id))) {
      removed++;
      status = 'closed';
    }
    checked.push({ id: position.id, eventId: position.eventId, side: position.side, status, onChainVerified: verified && held.length > 0 });
  }

  const proven = new Set(checked.filter((p) => p.status === 'open' && p.onChainVerified).map((p) => p.id));
  const untracked = supported
    .filter((s) => (free.get(s.token.id) ?? 0) > 0)
    .map((s) => ({ bandId: s.token.id, eventId: s.eventId, label: s.token.label, tokens: microsToUsd(free.get(s.token.id)!) }));
  return {
    walletAddress: wallet,
    synced: checked.length,
    added: wasPending.filter((p) => proven.has(p.id)).length,
    removed,
    positions: checked,
    untracked,
  };
}
