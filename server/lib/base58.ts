const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/**
 * Bitcoin-alphabet base58 (no 0, O, I, l): unambiguous when a key is read aloud or retyped.
 * Base conversion on small integers (every request id goes through here; BigInt arithmetic was ~2 µs).
 */
export function base58(bytes: Uint8Array): string {
  // Little-endian base-58 digits of the big-endian number `bytes`.
  const digits: number[] = [];
  for (const byte of bytes) {
    let carry = byte;
    for (let i = 0; i < digits.length; i++) {
      carry += digits[i]! << 8;
      digits[i] = carry % 58;
      carry = (carry / 58) | 0;
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = (carry / 58) | 0;
    }
  }
  let out = '';
  for (const byte of bytes) {
    if (byte !== 0) break;
    out += '1';
  }
  for (let i = digits.length - 1; i >= 0; i--) out += ALPHABET[digits[i]!];
  return out;
}

export const isBase58 = (s: string) => /^[1-9A-HJ-NP-Za-km-z]+$/.test(s);
