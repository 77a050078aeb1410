/**
 * POST /trading/sell/quote: a sale's exact plan against the books of this moment, placing nothing —
 * what a customer sees before confirming a sale (the dashboard's sell dialog). It is the sale's own
 * plan (`checkedSalePlan` in sell.ts) with the sale's own refusals, so a sale sent right after
 * against unchanged books sends exactly these orders. `averagePrice` is what the sale's
 * `minAveragePrice` is compared with: a sale sent with a `minAveragePrice` a little under it goes
 * through on these books and is refused (nothing sent) if they fall further.
 */
import { MICROS_PER_USD_BIGINT, microsToUsd } from '../lib/money.ts';
import { proceedsOfSale } from '../valuation/index.ts';
import type { TradingHandles } from './handles.ts';
import { executionOf, freshBooks } from './execution.ts';
import { loadPosition } from './ledger-writes.ts';
import { partialSaleRange } from './sale-shape.ts';
import { bandLabels } from '../events/queries.ts';
import { checkedSalePlan, sellablePosition, unitsSold } from './sell.ts';
import type { TradingUser } from './settings.ts';

export interface SaleQuoteRequest {
  positionId: string;
  percentage: number;
}

export async function quoteSale(services: TradingHandles, user: TradingUser, request: SaleQuoteRequest) {
  const execution = executionOf(services, user.accountId);
  const position = await sellablePosition(execution.db, user, request.positionId);
  const { bands } = await loadPosition(execution.db, position.id);
  const [books, labels] = await Promise.all([freshBooks(execution, bands.map((b) => b.bandId)), bandLabels(execution.db, position.eventId)]);
  const plan = checkedSalePlan(position, bands, books, request, execution.venue.rules, labels);

  const byIndex = new Map(bands.map((b) => [b.bandIndex, b]));
  let costMicros = 0;
  const planned = plan.orders.map((order) => {
    const band = byIndex.get(order.bandIndex)!;
    // The cost basis leaves with the shares, in proportion (as a sale records it).
    const cost = band.sharesMicros === 0 ? 0 : Number((BigInt(band.costMicros) * BigInt(order.requestedMicros)) / BigInt(band.sharesMicros));
    const proceeds = order.refusedLocally ? 0 : proceedsOfSale(books.get(order.bandId)?.bids ?? [], order.requestedMicros).proceeds;
    if (!order.refusedLocally) costMicros += cost;
    return {
      bandId: order.bandId,
      bandIndex: order.bandIndex,
      shares: microsToUsd(order.requestedMicros),
      worstPrice: microsToUsd(order.limitPriceMicros),
      proceeds: microsToUsd(proceeds),
      costBasis: microsToUsd(cost),
      unsellable: order.refusedLocally ?? null,
    };
  });
  const sellable = plan.orders.filter((o) => !o.refusedLocally).reduce((s, o) => s + o.requestedMicros, 0);
  const units = unitsSold(position, bands, plan.sharesMicros);
  const free = bands.map((b) => ({ bandIndex: b.bandIndex, freeMicros: b.sharesMicros - b.reservedMicros }));
  return {
    positionId: position.id,
    percentage: request.percentage,
    bands: planned,
    units: microsToUsd(Number(units)),
    totalProceeds: microsToUsd(plan.proceedsMicros),
    averagePrice: units > 0n ? microsToUsd(Number((BigInt(plan.proceedsMicros) * MICROS_PER_USD_BIGINT) / units)) : 0,
    costBasis: microsToUsd(costMicros),
    estimatedPnl: microsToUsd(plan.proceedsMicros - costMicros),
    allSellable: sellable === plan.sharesMicros,
    partialSaleRange: partialSaleRange(free, execution.venue.rules),
  };
}
