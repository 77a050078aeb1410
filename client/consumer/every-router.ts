/**
 * An app that installed @pre-ipo/client from its tarball, with nothing of the server: it calls every
 * router of the service once or more (the test type-checks it, then runs it against a live server)
 * and reports what it saw. Each call is awaited alone, so each is an HTTP request of its own.
 */
import { TRPCClientError } from '@trpc/client';
import { createClient, isPreIpoApiError, PreIpoApiError, withCallInfo, type ApiErrorCode, type CallInfo, type RouterOutputs } from '@pre-ipo/client';
import { env, report } from './env.js';

const calls: CallInfo[] = [];
const api = createClient({ baseUrl: env.baseUrl, apiKey: env.apiKey, userId: env.userId, onCall: (info) => calls.push(info) });
const dashboard = createClient({ baseUrl: env.baseUrl, apiKey: env.dashboardKey, headers: { 'x-account-id': env.accountId } });

// Outputs are typed: these annotations are checked by tsc.
const pricing = await withCallInfo((o) => api.pricing.get.query(undefined, o));
const unitPrice: number = pricing.data.costPerRequestUsd;
const authStatus: boolean = (await api.auth.status.query()).signedIn;
const billing = await withCallInfo((o) => api.billing.get.query(undefined, o));
const usage = await api.usage.list.query({ limit: 5 });
const balanceHistory = await api.balanceHistory.list.query({ limit: 5 });
const audit = await api.auditLog.list.query({ limit: 5, action: 'key.created' });
const keys = await dashboard.keys.list.query();
const account: RouterOutputs['accounts']['me'] = await dashboard.accounts.me.query();
const deposits = await dashboard.deposits.list.query();
const companies = await withCallInfo((o) => api.privateCompanies.list.query({ limit: 2, sort: '-valuationUsd' }, o));
const rounds = await withCallInfo((o) => api.fundingRounds.list.query({ limit: 3 }, o));
const investors = await api.investors.list.query({ limit: 3 });
// The bulk export is a file, served on REST only: over tRPC it is a typed refusal that costs nothing.
const exportRefusal = await api.companyExport.get.query({ format: 'ndjson' }).then(
  () => 'answered',
  (error: unknown) => (error instanceof PreIpoApiError ? { code: error.code, status: error.status } : String(error)),
);
// An operator call: an import of nothing writes nothing.
const imported = await dashboard.companyImport.import.mutate({ companies: [] });
const { events } = await api.tradingMarket.events.query();
const open = events.find((event) => event.status === 'open');
if (!open?.venue.eventSlug) throw new Error('no open event with a venue slug');
const history = await api.marketHistory.valuationHistory.query({ eventSlug: open.venue.eventSlug, interval: '1h' });
await api.tradingSettings.storeCredentials.mutate({ apiKey: `paper-${env.userId}`, secret: 'c2VjcmV0', passphrase: 'pass' });
const settings = await api.tradingSettings.get.query();
const quote = await withCallInfo((o) => api.trading.quote.mutate({ eventId: open.id, side: 'LONG', amount: 100 }, o));
const bought = await api.trading.buy.mutate({ eventId: open.id, side: 'LONG', amount: 100 });
const users = await api.tradingUsers.list.query();
const positions = await api.positions.list.query({ status: 'all' });
const orders = await api.orders.list.query({ positionId: bought.positionId });
const settlements = await api.settlements.list.query();
const portfolio = await api.portfolio.history.query({ interval: '1d' });
const webhooks = await api.webhooks.list.query();
const catchUp = await api.streams.valuationCatchUp.query({ eventSlug: [open.venue.eventSlug] });

// A subscription: the first message of the valuation stream (the event's current valuation).
const streamed = await new Promise<{ id: string; slug: string }>((resolve, reject) => {
  const subscription = api.streams.valuation.subscribe(
    { eventSlugs: [open.venue.eventSlug!] },
    {
      onData: (message) => {
        subscription.unsubscribe();
        resolve({ id: message.id, slug: message.data.event.slug });
      },
      onError: reject,
    },
  );
});

// A stream's refusal is typed as well: an unknown event.
const streamRefusal = await new Promise<{ code: ApiErrorCode; status: number } | string>((resolve) => {
  const subscription = api.streams.valuation.subscribe(
    { eventSlugs: ['no-such-event'] },
    {
      onData: () => resolve('data'),
      onError: (error) => {
        subscription.unsubscribe();
        resolve(error instanceof PreIpoApiError ? { code: error.code, status: error.status } : String(error));
      },
    },
  );
});

// batch: false sends each call as a request of its own.
const unbatchedClient = createClient({ baseUrl: env.baseUrl, apiKey: env.apiKey, batch: false, onCall: (info) => calls.push(info) });
const unbatched = await withCallInfo((o) => unbatchedClient.billing.get.query(undefined, o));

// A typed error: resolving an event needs the operator's dashboard key, not an API key.
let refusal: { code: ApiErrorCode; status: number; requestId: string; message: string; isTrpcError: boolean; guard: boolean; callInfo: CallInfo } | undefined;
try {
  await api.events.resolve.mutate({ eventId: open.id, voided: true });
} catch (error) {
  if (error instanceof PreIpoApiError) {
    refusal = { code: error.code, status: error.status, requestId: error.requestId, message: error.message, isTrpcError: error instanceof TRPCClientError, guard: isPreIpoApiError(error), callInfo: error.callInfo };
  } else throw error;
}

report({
  unitPrice,
  authStatus,
  pricing: { cost: pricing.cost, requestId: pricing.requestId, path: pricing.path },
  billing: { balanceUsd: billing.data.balanceUsd, cost: billing.cost, costMicros: billing.costMicros, requestId: billing.requestId },
  usageRecords: usage.records.length,
  balanceEntries: balanceHistory.entries.length,
  auditEntries: audit.entries.map((e) => e.action),
  keyIds: keys.keys.map((key) => key.id),
  accountId: account.accountId,
  deposits: deposits.deposits.length,
  companies: { names: companies.data.companies.map((company) => company.name), total: companies.data.total, cost: companies.cost },
  rounds: { ids: rounds.data.rounds.map((round) => round.id), cost: rounds.cost },
  investors: investors.investors.map((investor) => investor.name),
  exportRefusal,
  imported,
  openEventId: open.id,
  historyEventId: history.eventId,
  hasCredentials: settings.hasCredentials,
  quote: { eventId: quote.data.eventId, totalCost: quote.data.totalCost, cost: quote.cost },
  bought: { positionId: bought.positionId, totalCost: bought.totalCost, status: bought.status },
  users: users.users.map((user) => user.userId),
  positions: positions.positions.map((position) => position.id),
  orders: orders.orders.length,
  settlements: settlements.settlements.length,
  portfolioPoints: portfolio.points.length,
  webhooks: webhooks.webhooks.length,
  catchUpMessages: catchUp.messages.length,
  streamed,
  streamRefusal,
  unbatched: { balanceUsd: unbatched.data.balanceUsd, costMicros: unbatched.costMicros },
  refusal,
  calls,
});
