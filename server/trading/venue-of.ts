/**
 * The venue of an account's orders: a test side's (server/accounts/modes.ts) go to the paper venue,
 * every other account's to the configured venue. The one place the choice is made; every venue call
 * of the trading domain goes through it (execution.ts `executionOf`, credentials, settlement).
 */
import { isTestSide } from '../accounts/modes.ts';
import type { Venue } from '../venues/venue.ts';
import type { TradingHandles } from './handles.ts';

export const venueOf = (handles: Pick<TradingHandles, 'venue' | 'testVenue'>, accountId: string): Venue => (isTestSide(accountId) ? handles.testVenue : handles.venue);
