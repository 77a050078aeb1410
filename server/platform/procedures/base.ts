/**
 * The base procedures, defined once: one per access rule (procedures/access.ts holds the rules'
 * gates). Routers build every procedure from one of these (procedures/builder.ts); the typed context
 * each gives its handlers is what its gate adds.
 */
import type { KeyPrincipal } from '../../accounts/api-keys.ts';
import type { Charge } from '../../accounts/billing.ts';
import type { Session } from '../../auth/sessions.ts';
import { billedByKey, billedForUser, dashboard, open, sessionOnly } from './access.ts';
import { baseProcedure, userBaseProcedure } from './builder.ts';

type TradingUser = { accountId: string; userId: string };

/** No credentials; limited per client IP. */
export const publicProcedure = baseProcedure({ gate: open, meta: { access: 'public' } });

/**
 * Public market data, answered once per market snapshot and input (procedures/market-answers.ts).
 * Limited per client IP like every public route.
 */
export const marketDataProcedure = baseProcedure({ gate: open, meta: { access: 'public' }, answersPerSnapshot: true });

/**
 * What a key route's handler knows of its call: who pays, and what the call was charged (one charge,
 * or a call priced in units' every unit, the first paid and the rest provisional: accounts/unit-charges.ts).
 */
type KeyCall = {
  principal: KeyPrincipal;
  charges: readonly Charge[];
  /** The company dataset's version the admission read (absent on a capped key's path): for answers kept per version. */
  datasetVersion?: number;
};

/** x-api-key (or ?apiKey=), billed at the account's standard rate. */
export const apiKeyProcedure = baseProcedure<KeyCall>({ gate: billedByKey('standard'), meta: { access: 'key', billing: 'standard' } });

/** x-api-key, billed at ten times the standard rate (private-company data). */
export const companyDataProcedure = baseProcedure<KeyCall>({ gate: billedByKey('premium'), meta: { access: 'key', billing: 'premium' } });

/** x-api-key and a trading user (x-user-id or the input's `userId`), billed at the standard rate. */
export const userProcedure = userBaseProcedure<{ principal: KeyPrincipal; user: TradingUser }>({ gate: billedForUser('key'), meta: { access: 'user', billing: 'standard' } });

/** Like userProcedure, under the tighter buy/sell bucket. */
export const tradeProcedure = userBaseProcedure<{ principal: KeyPrincipal; user: TradingUser }>({ gate: billedForUser('trade'), meta: { access: 'user', billing: 'standard' } });

/** A server-configured dashboard key and x-account-id naming an existing account (404 otherwise); never billed. */
export const dashboardProcedure = baseProcedure<{ accountId: string; operator?: string | null }>({ gate: dashboard, meta: { access: 'dashboard' } });

/** A signed-in customer's session (the auth routes after sign-in); never billed. */
export const sessionProcedure = baseProcedure<{ session: Session }>({ gate: sessionOnly, meta: { access: 'session', session: true } });

/**
 * Like dashboardProcedure, for the one route whose account need not exist yet: creating an account's
 * first key (POST /api/keys) creates the account, in the same statement as the key.
 */
export const accountCreatingProcedure = baseProcedure<{ accountId: string; operator?: string | null }>({ gate: dashboard, meta: { access: 'dashboard', createsAccount: true } });
