/** The shared valuation module: weights, quotes, slippage and order sizing. Pure; no I/O. */
export * from './weights.ts';
export * from './quote.ts';
export * from './sizing.ts';
export * from './ladder.ts';
