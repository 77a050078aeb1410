/**
 * POST /trading/quote: the buy's plan against the books of this moment, without placing anything.
 * It is `planBuy` (buy.ts), the very function a buy sizes with, so a buy placed right after against
 * unchanged books sends exactly these orders and pays exactly `totalCost`; the refusals are the
 * buy's too (unknown or closed event, thin books, an amount under the minimum, maxAveragePrice).
 * A quote needs no venue credentials and never reads the venue balance.
 */
import type { TradingHandles } from './handles.ts';
import { microRatio, microsToUsd } from '../lib/money.ts';
import { planBuy, tradableEvent, type BuyRequest, type PlannedBuy } from './buy.ts';
import { executionOf } from './execution.ts';
import { getSettings, type TradingUser } from './settings.ts';

export function quoteResult(request: BuyRequest, planned: PlannedBuy) {
  const { plan } = planned;
  return {
    eventId: planned.eventId,
    side: request.side,
    floorL: planned.floors.floorL,
    floorS: planned.floors.floorS,
    units: microsToUsd(plan.unitsMicros),
    // The tokens that get an order (a band whose weight is 0 gets none), in token order: a band
    // event's bands, a ladder's threshold tokens (`<band id>:yes|no`).
    bands: plan.bands
      .filter((b) => b.shares > 0)
      .map((b) => ({
        bandId: planned.tokens[b.bandIndex]!.id,
        label: planned.tokens[b.bandIndex]!.label,
        shares: microsToUsd(b.shares),
        cost: microsToUsd(b.cost),
        worstPrice: microsToUsd(b.worstPrice),
        maxCost: microsToUsd(b.maxCost),
      })),
    totalCost: microsToUsd(plan.totalCostMicros),
    averagePrice: microRatio(plan.totalCostMicros, plan.unitsMicros),
    maxCost: microsToUsd(plan.maxCostMicros),
    requestedAmount: microsToUsd(request.amountMicros),
    unspentAmount: microsToUsd(request.amountMicros - plan.totalCostMicros),
    minimumAmount: microsToUsd(planned.minimumAmountMicros),
  };
}

export async function quoteBuy(services: TradingHandles, user: TradingUser, request: BuyRequest) {
  const execution = executionOf(services, user.accountId);
  const event = await tradableEvent(services, request.eventId);
  const settings = await getSettings(execution.db, user);
  return quoteResult(request, await planBuy(execution, event, settings, request));
}
