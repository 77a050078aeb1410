/** Output shapes shared by the trading routers (docs/api.md "Position", "Order", "Trade"). */
import { z } from 'zod';
import { isoString } from './params.ts';

export const orderStatus = z.enum(['PENDING', 'MATCHED', 'CANCELLED', 'REJECTED']);
const usd = (description: string) => z.number().meta({ description });
const shares = (description: string) => z.number().meta({ description: `${description} (shares)` });

/** An order in a buy or sell answer. */
export const operationOrder = z.object({
  orderId: z.string(),
  bandId: z.string(),
  side: z.enum(['BUY', 'SELL']),
  price: usd('Average fill price per share; the limit price while nothing is filled'),
  size: shares('Requested'),
  filled: shares('Filled'),
  status: orderStatus,
  reason: z.string().nullable().meta({ description: 'Why the venue did not fill it (no-liquidity, insufficient-balance, …)' }),
});

/** A band a sale did not sell in full (the shares stay in the position). */
export const unsoldBand = z.object({
  bandId: z.string(),
  shares: shares('Ordered but not sold'),
  reason: z.string().meta({ description: 'Why: no-liquidity (no bids left), below-minimum (fewer shares than the venue minimum order), …' }),
});

export const orderSummary = z.object({
  id: z.string(),
  positionId: z.string(),
  bandId: z.string(),
  side: z.enum(['BUY', 'SELL']),
  purpose: z.enum(['open', 'close', 'unwind']).meta({ description: 'open: part of a buy; close: part of a sell; unwind: selling back a failed buy' }),
  price: usd('Average fill price per share; the limit price while nothing is filled'),
  limitPrice: usd('Worst price the order accepted'),
  size: shares('Requested'),
  filled: shares('Filled'),
  fees: usd('Fees the venue charged'),
  status: orderStatus,
  reason: z.string().nullable(),
  createdAt: isoString(),
  matchedAt: isoString().nullable(),
});

export const orderDetail = orderSummary.extend({
  bandLabel: z.string().nullable(),
  remaining: shares('Requested minus filled'),
  txHash: z.string().nullable().meta({ description: 'Settlement transaction; null on the paper venue' }),
});

export const positionStatus = z.enum(['pending', 'open', 'closed', 'settled']).meta({ description: 'pending: buy outstanding; open: holds shares; closed: sold or gone; settled: paid out at its event\'s resolution (GET /api/trading/settlements)' });

export const positionSummary = z.object({
  id: z.string(),
  eventId: z.string(),
  side: z.enum(['LONG', 'SHORT']),
  status: positionStatus,
  entryPrice: usd('What one unit cost'),
  currentPrice: usd('What one unit fetches now, at the bids'),
  size: z.number().meta({ description: 'Units held: each pays between the floor and $1 at resolution' }),
  cost: usd('Cost basis of what is held'),
  currentValue: usd('Holdings at the bids'),
  unrealizedPnl: usd('currentValue − cost'),
  unrealizedPnlPercent: z.number(),
  realizedPnl: usd('From the sales so far'),
  createdAt: isoString(),
  closedAt: isoString().nullable(),
});

export const positionDetail = z.object({
  id: z.string(),
  eventId: z.string(),
  side: z.enum(['LONG', 'SHORT']),
  status: positionStatus,
  entryPrice: z.number(),
  currentPrice: z.number(),
  cost: z.number(),
  currentValue: z.number(),
  unrealizedPnl: z.number(),
  realizedPnl: z.number(),
  floorL: z.number(),
  floorS: z.number(),
  createdAt: isoString(),
  closedAt: isoString().nullable(),
  failureReason: z.string().nullable().meta({ description: 'Set when the buy did not fill every band and was unwound' }),
  bands: z
    .array(
      z.object({
        bandId: z.string(),
        label: z.string().nullable(),
        tokens: shares('Held: for a ladder, the shares that pay if this band wins (from the threshold tokens held)'),
        entryPrice: usd('Average price paid per share').nullable().meta({ description: "Average price paid per share; null for a ladder's band (paid per threshold token: see holdings)" }),
        currentPrice: usd('Best bid'),
      }),
    )
    .meta({ description: 'In band terms: what the position pays per band (band events hold each band as its token)' }),
  holdings: z
    .array(
      z.object({
        tokenId: z.string().meta({ description: "Our token id: a band's id, or a ladder threshold's `<band id>:yes|no`" }),
        label: z.string().nullable(),
        tokens: shares('Held'),
        entryPrice: usd('Average price paid per share'),
        currentPrice: usd('Best bid'),
      }),
    )
    .meta({ description: 'In token terms: the venue tokens held (a ladder position holds threshold Yes and No tokens; docs/trading.md "Ladders")' }),
});

export const trade = z.object({
  id: z.string(),
  positionId: z.string(),
  eventId: z.string(),
  orderId: z.string(),
  bandId: z.string(),
  side: z.enum(['LONG', 'SHORT']),
  action: z.enum(['BUY', 'SELL', 'SETTLE']).meta({ description: 'SETTLE: the payout at resolution (orderId is the settlement id; bandId the winning band and shares its shares at $1, or for a voided event bandId * and every share held at $0.50)' }),
  shares: shares('Filled'),
  amount: usd('USD paid or received, before fees'),
  price: usd('Per share'),
  fees: z.number(),
  realizedPnl: usd('For a sale: proceeds after fees minus the cost basis sold'),
  timestamp: isoString(),
});

/** POST /trading/quote: the plan a buy with the same body would send against the books of now. */
export const buyQuote = z.object({
  eventId: z.string().meta({ description: 'Our (canonical) event id' }),
  side: z.enum(['LONG', 'SHORT']),
  floorL: z.number(),
  floorS: z.number(),
  units: z.number().meta({ description: 'Units the buy would get (its `size`)' }),
  bands: z
    .array(
      z.object({
        bandId: z.string().meta({ description: "The token bought: a band's id, or a ladder threshold's `<band id>:yes` / `<band id>:no`" }),
        label: z.string().meta({ description: 'The band, or for a ladder the threshold token (e.g. "Yes: above $10B")', example: 'Yes: above $10B' }),
        shares: shares('To buy'),
        cost: usd('What these shares cost walking the asks now'),
        worstPrice: usd("The order's limit: the worst ask level the shares reach"),
        maxCost: usd('shares × worstPrice: the most this band can cost if the book moves before the fill'),
      }),
    )
    .meta({ description: 'One order per token the position holds: per band whose weight is positive (band events), per threshold Yes or No token the replication uses (ladders; docs/trading.md "Ladders")' }),
  totalCost: usd('Σ cost: what the buy pays against unchanged books'),
  averagePrice: usd('totalCost / units: USD per unit (what maxAveragePrice is compared with)'),
  maxCost: usd('Σ maxCost: the most the buy can spend; never more than requestedAmount'),
  requestedAmount: usd('The amount asked for'),
  unspentAmount: usd('requestedAmount − totalCost'),
  minimumAmount: usd('The least amount a buy of this event, side and floors accepts on these books'),
});

/** POST /trading/sell/quote: the sale's plan, nothing placed. */
export const saleQuote = z.object({
  positionId: z.string(),
  percentage: z.number(),
  bands: z
    .array(
      z.object({
        bandId: z.string(),
        bandIndex: z.number().int(),
        shares: shares('To sell'),
        worstPrice: usd("The order's limit: the worst bid level the shares reach (0 when the band cannot be sold)"),
        proceeds: usd('What these shares fetch walking the bids now, before any venue fee'),
        costBasis: usd('The cost basis that leaves with these shares'),
        unsellable: z.string().nullable().meta({ description: 'Why this band would not sell (no-liquidity, below-minimum); its shares stay in the position' }),
      }),
    )
    .meta({ description: 'One SELL order per band holding free shares, in band order' }),
  units: z.number().meta({ description: 'Units the sale sells (the position counts units)' }),
  totalProceeds: usd('Σ proceeds: what the sale fetches against unchanged books, before venue fees'),
  averagePrice: usd('totalProceeds / units: USD per unit, what a sale\'s minAveragePrice is compared with'),
  costBasis: usd('Σ cost basis of the shares that would sell'),
  estimatedPnl: usd('totalProceeds − costBasis: the realized P&L the sale would record before fees'),
  allSellable: z.boolean().meta({ description: 'false when some band has no bids or too few shares: those shares would stay' }),
  partialSaleRange: z
    .object({ lowest: z.number(), highest: z.number() })
    .nullable()
    .meta({ description: 'The partial percentages that keep the position\'s shape (100 always works); null when only 100 does' }),
});
