/** What the streams domain is handed (server/handles.ts): the core, the recorder whose snapshots the valuation streams send, and the refunds of a held stream's unused minute. */
import type { CoreHandles } from '../handles.ts';
import type { Refunds } from '../accounts/refunds.ts';
import type { MarketRecorder } from '../market/recorder.ts';

export interface StreamHandles extends CoreHandles {
  recorder: MarketRecorder;
  refunds: Refunds;
}
