/**
 * Position weights (docs/decisions.md §6). One LONG unit holds wL(i) shares of every band i, so it pays wL(k)
 * when band k resolves: $1 at the top band, floorL at the bottom. SHORT mirrors it.
 *   wL(i) = floorL + (1 − floorL)·i/(n−1)        wS(i) = floorS + (1 − floorS)·(n−1−i)/(n−1)
 * With a single band both weights are 1.
 */
export type Side = 'LONG' | 'SHORT';

export interface Floors {
  floorL: number;
  floorS: number;
}

export const DEFAULT_FLOORS: Floors = { floorL: 0.2, floorS: 0.15 };

export function assertFloor(name: string, value: number) {
  if (!(Number.isFinite(value) && value >= 0 && value <= 1)) throw new RangeError(`${name} must be a number from 0 to 1`);
}

export function longWeights(n: number, floorL: number): number[] {
  assertFloor('floorL', floorL);
  if (n === 1) return [1];
  return Array.from({ length: n }, (_, i) => floorL + ((1 - floorL) * i) / (n - 1));
}

export function shortWeights(n: number, floorS: number): number[] {
  assertFloor('floorS', floorS);
  if (n === 1) return [1];
  return Array.from({ length: n }, (_, i) => floorS + ((1 - floorS) * (n - 1 - i)) / (n - 1));
}

export function weightsFor(side: Side, n: number, floors: Floors): number[] {
  return side === 'LONG' ? longWeights(n, floors.floorL) : shortWeights(n, floors.floorS);
}

export function floorFor(side: Side, floors: Floors): number {
  return side === 'LONG' ? floors.floorL : floors.floorS;
}
