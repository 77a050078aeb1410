/**
 * A value that may or may not have to be waited for. The cheapest routes (/api/pricing, a cached
 * valuation) are answered without a single promise; each step passes a plain value on as it is and
 * only chains onto a promise when it got one.
 */
export type MaybePromise<T> = T | Promise<T>;

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** Calls `then` with the value now, or once its promise resolves. */
export function whenReady<T, R>(value: T | PromiseLike<T>, then: (value: T) => R): R | Promise<Awaited<R>> {
  return isThenable(value) ? (Promise.resolve(value).then(then) as Promise<Awaited<R>>) : then(value as T);
}
