/**
 * The application router: every procedure of the service, served on /trpc and, through each
 * procedure's `openapi` meta, on /api. Typed clients import `AppRouter`.
 */
import { router } from '../server/platform/procedures/trpc.ts';
import { accountsRouter } from './accounts.ts';
import { auditLogRouter } from './audit-log.ts';
import { authRouter } from './auth.ts';
import { balanceHistoryRouter } from './balance-history.ts';
import { billingRouter } from './billing.ts';
import { depositsRouter } from './deposits.ts';
import { eventsRouter } from './events.ts';
import { keysRouter } from './keys.ts';
import { marketHistoryRouter } from './market-history.ts';
import { portfolioRouter } from './portfolio.ts';
import { pricingRouter } from './pricing.ts';
import { privateCompaniesRouter } from './private-companies.ts';
import { companyExportRouter } from './company-export.ts';
import { companyImportRouter } from './company-import.ts';
import { fundingRoundsRouter } from './funding-rounds.ts';
import { investorsRouter } from './investors.ts';
import { streamsRouter } from './streams.ts';
import { tradingMarketRouter } from './trading-market.ts';
import { ordersRouter } from './orders.ts';
import { positionsRouter } from './positions.ts';
import { tradingSettingsRouter } from './trading-settings.ts';
import { settlementsRouter } from './settlements.ts';
import { tradingUsersRouter } from './trading-users.ts';
import { tradingRouter } from './trading.ts';
import { usageRouter } from './usage.ts';
import { webhooksRouter } from './webhooks.ts';

export const appRouter = router({
  pricing: pricingRouter,
  auth: authRouter,
  billing: billingRouter,
  usage: usageRouter,
  balanceHistory: balanceHistoryRouter,
  auditLog: auditLogRouter,
  keys: keysRouter,
  accounts: accountsRouter,
  deposits: depositsRouter,
  privateCompanies: privateCompaniesRouter,
  companyExport: companyExportRouter,
  companyImport: companyImportRouter,
  fundingRounds: fundingRoundsRouter,
  investors: investorsRouter,
  tradingMarket: tradingMarketRouter,
  marketHistory: marketHistoryRouter,
  tradingSettings: tradingSettingsRouter,
  trading: tradingRouter,
  tradingUsers: tradingUsersRouter,
  positions: positionsRouter,
  orders: ordersRouter,
  settlements: settlementsRouter,
  portfolio: portfolioRouter,
  webhooks: webhooksRouter,
  events: eventsRouter,
  streams: streamsRouter,
});

export type AppRouter = typeof appRouter;
