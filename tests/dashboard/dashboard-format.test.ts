/** The dashboard's money formats: amounts a customer reads as money in cents; rates and unit prices keep their precision. */
import { describe, expect, test } from 'bun:test';
import { formatRate, formatSignedUsd, formatUnitCost, formatUsd } from '../../dashboard/format.ts';

describe('dashboard money formats', () => {
  test('balances, costs, proceeds and P&L: dollars and cents, rounded to the cent', () => {
    expect(formatUsd(143.01604)).toBe('$143.02');
    expect(formatUsd(12.345678)).toBe('$12.35');
    expect(formatUsd(0.006)).toBe('$0.01');
    expect(formatUsd(0)).toBe('$0.00');
    expect(formatUsd(1234.5)).toBe('$1,234.50');
    expect(formatUsd(null)).toBe('—');
    expect(formatSignedUsd(-0.3549)).toBe('\u2212$0.35');
    expect(formatSignedUsd(1.204)).toBe('+$1.20');
  });
  test('a per-request rate and a per-unit price keep their precision', () => {
    expect(formatRate(0.002)).toBe('$0.002');
    expect(formatRate(0.000125)).toBe('$0.000125');
    expect(formatRate(1)).toBe('$1.00');
    expect(formatUnitCost(0.86141)).toBe('$0.8614');
  });
});
