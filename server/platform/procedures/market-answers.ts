/**
 * Public market data: every answer is a pure function of the market snapshot and the raw input, so
 * it is computed, validated and serialized once per snapshot (MARKET_DATA_TTL_MS) and input. The
 * cache sits outside the input and output validators: a repeat is answered without running either
 * (only successful answers are kept, so the input was once validated). At most
 * MAX_ANSWERS_PER_SNAPSHOT distinct inputs per snapshot (floors are free numbers).
 */
import { markReusable } from '../../lib/reusable-json.ts';
import { whenReady, type MaybePromise } from '../../lib/when-ready.ts';
import type { RequestContext } from './context.ts';

const MAX_ANSWERS_PER_SNAPSHOT = 1_000;
const answersBySnapshot = new WeakMap<object, Map<string, unknown>>();

/** Not an async function: a repeat within a fresh snapshot is answered without a promise. */
export function answerPerSnapshot(ctx: RequestContext, path: string, rawInput: unknown, answer: () => MaybePromise<unknown>): MaybePromise<unknown> {
  const { marketData } = ctx.services;
  return whenReady(marketData.fresh() ?? marketData.snapshot(), (snapshot) => {
    let answers = answersBySnapshot.get(snapshot);
    if (!answers) answersBySnapshot.set(snapshot, (answers = new Map()));
    const key = `${path}\u0000${JSON.stringify(rawInput ?? null)}`;
    if (answers.has(key)) return answers.get(key);
    return whenReady(answer(), (data) => {
      if (answers.size < MAX_ANSWERS_PER_SNAPSHOT && typeof data === 'object' && data !== null) answers.set(key, markReusable(data));
      return data;
    });
  });
}
