/** What the trading domain is handed (server/handles.ts): the core, the venue its orders go to, the market data that values them, and the cipher of the venue credentials. */
import type { CoreHandles } from '../handles.ts';
import type { CredentialCipher } from '../lib/credential-cipher.ts';
import type { MarketData } from '../market/market-data.ts';
import type { Venue } from '../venues/venue.ts';

export interface TradingHandles extends CoreHandles {
  /** Live keys' venue (VENUE). */
  venue: Venue;
  /** Test keys' venue: the paper venue (venue-of.ts picks by the account's mode). */
  testVenue: Venue;
  marketData: MarketData;
  credentialCipher: CredentialCipher;
}
