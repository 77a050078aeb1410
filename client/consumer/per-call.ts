/**
 * Per-call options and per-call costs through batching: calls made in the same tick share one HTTP
 * request (one request id), yet each has its own cost, its own trading user (`userId`) and its own
 * idempotency key (`idempotencyKey`), as input members of the call.
 */
import { createClient, withCallInfo, type CallInfo } from '@pre-ipo/client';
import { env, report } from './env.js';

const OTHER_USER = 'client-package-second-user';
const calls: CallInfo[] = [];
const api = createClient({ baseUrl: env.baseUrl, apiKey: env.apiKey, userId: env.userId, onCall: (info) => calls.push(info) });
const dashboard = createClient({ baseUrl: env.baseUrl, apiKey: env.dashboardKey, headers: { 'x-account-id': env.accountId } });

const balanceBefore = (await dashboard.accounts.me.query()).balanceUsd;

// Three queries in one tick: one request, a cost each (public, billed, public).
const batch = await Promise.all([
  withCallInfo((o) => api.pricing.get.query(undefined, o)),
  withCallInfo((o) => api.billing.get.query(undefined, o)),
  withCallInfo((o) => api.tradingMarket.events.query(undefined, o)),
]);
const open = batch[2].data.events.find((event) => event.status === 'open');
if (!open) throw new Error('no open event');

// Each user's venue credentials, in one batch: the second names its user in the input.
await Promise.all([
  api.tradingSettings.storeCredentials.mutate({ userId: env.userId, apiKey: `paper-${env.userId}`, secret: 'c2VjcmV0', passphrase: 'pass' }),
  api.tradingSettings.storeCredentials.mutate({ userId: OTHER_USER, apiKey: `paper-${OTHER_USER}`, secret: 'c2VjcmV0', passphrase: 'pass' }),
]);

// Two buys in one batch, each with its own user and idempotency key.
const keys = [`buy-a-${Date.now()}`, `buy-b-${Date.now()}`];
const buys = await Promise.all([
  withCallInfo((o) => api.trading.buy.mutate({ eventId: open.id, side: 'LONG', amount: 100, userId: env.userId, idempotencyKey: keys[0] }, o)),
  withCallInfo((o) => api.trading.buy.mutate({ eventId: open.id, side: 'SHORT', amount: 100, userId: OTHER_USER, idempotencyKey: keys[1] }, o)),
]);
// The first again with its key: answered from the record of the first, not bought twice.
const replay = await api.trading.buy.mutate({ eventId: open.id, side: 'LONG', amount: 100, userId: env.userId, idempotencyKey: keys[0] });

// Each user sees their own position (one batch again).
const [mine, theirs] = await Promise.all([api.positions.list.query({ userId: env.userId }), api.positions.list.query({ userId: OTHER_USER })]);

const balanceAfter = (await dashboard.accounts.me.query()).balanceUsd;

report({
  batch: batch.map(({ path, cost, costMicros, requestId }) => ({ path, cost, costMicros, requestId })),
  unitPrice: batch[0].data.costPerRequestUsd,
  buys: buys.map(({ data, requestId, cost }) => ({ positionId: data.positionId, side: data.side, requestId, cost })),
  replayPositionId: replay.positionId,
  mine: mine.positions.map((position) => position.id),
  theirs: theirs.positions.map((position) => position.id),
  balanceBefore,
  balanceAfter,
  calls,
});
