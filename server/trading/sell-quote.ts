/**
 * POST /trading/sell/quote: a sale's exact plan against the books of this moment, placing nothing —
 * what a customer sees before confirming a sale (the dashboard's sell dialog). It is the sale's own
 * plan (`checkedSalePlan` in sell.ts) with the sale's own refusals, so a sale sent right after
 * against unchanged books sends exactly these orders. `averagePrice` is what the sale's
 * `minAveragePrice` is compared with: a sale sent with a `minAveragePrice` a little under it goes
 * through on these books and is refused (nothing sent) if they fall further.
 */
import { proceedsOfSale } from '../valuation/index.ts';
import type { Services } from '../services.ts';
import { executionOf, freshBooks } from './execution.ts';
import { loadPosition } from './records.ts';
import { partialSaleRange } from './sale-shape.ts';
import { checkedSalePlan, sellablePosition, unitsSold } from './sell.ts';
import type { TradingUser } from './settings.ts';
import { fromMicros } from './views.ts';

export interface SaleQuoteRequest {
  positionId: string;
  percentage: number;
}

export async function quoteSale(services: Services, user: TradingUser, request: SaleQuoteRequest) {
  const x = executionOf(services);
  const position = await sellablePosition(x.db, user, request.positionId);
  const { bands } = await loadPosition(x.db, position.id);
  const books = await freshBooks(x, bands.map((b) => b.bandId));
  const plan = checkedSalePlan(position, bands, books, request, x.venue.rules);

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
      shares: fromMicros(order.requestedMicros),
      worstPrice: fromMicros(order.limitPriceMicros),
      proceeds: fromMicros(proceeds),
      costBasis: fromMicros(cost),
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
    units: fromMicros(Number(units)),
    totalProceeds: fromMicros(plan.proceedsMicros),
    averagePrice: units > 0n ? fromMicros(Number((BigInt(plan.proceedsMicros) * 1_000_000n) / units)) : 0,
    costBasis: fromMicros(costMicros),
    estimatedPnl: fromMicros(plan.proceedsMicros - costMicros),
    allSellable: sellable === plan.sharesMicros,
    partialSaleRange: partialSaleRange(free, x.venue.rules),
  };
}
