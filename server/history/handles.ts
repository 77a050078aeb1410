/** What the history domain is handed (server/handles.ts): the core, the market data (portfolio values) and the recorder whose snapshots become candles. */
import type { CoreHandles } from '../handles.ts';
import type { MarketData } from '../market/market-data.ts';
import type { MarketRecorder } from '../market/recorder.ts';

export interface HistoryHandles extends CoreHandles {
  marketData: MarketData;
  recorder: MarketRecorder;
}
