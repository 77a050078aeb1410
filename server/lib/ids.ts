/**
 * Prefixed random ids (`req_…`, `use_…`, `pos_…`): 22 base58 characters (128.9 random bits),
 * readable, sortable by nothing. Every request takes at least one (its request id, and a billed
 * request its usage id), so they are cut from a pooled string of random base58 digits instead of
 * converting a 16-byte number (that was ~9% of a cheap request).
 */
export type IdPrefix = 'key' | 'use' | 'crd' | 'req' | 'pos' | 'ord' | 'trd' | 'op' | 'stl' | 'acct' | 'dep' | 'evt' | 'wh' | 'msg' | 'strm' | 'aud';

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const ID_DIGITS = 22;
/** Bytes ≥ 232 (= 4 × 58) are skipped, so `byte % 58` is uniform. */
const UNBIASED_BELOW = 232;

/**
 * Base58 digits drawn in bulk: 4096 random bytes become ~3,700 digits of one string, and an id is
 * a slice of it (building ids digit by digit was a third of a microsecond per id).
 */
const DIGIT_OF_BYTE = new Uint8Array(256); // 0 for the bytes skipped
for (let byte = 0; byte < UNBIASED_BELOW; byte++) DIGIT_OF_BYTE[byte] = ALPHABET.charCodeAt(byte % 58);
const latin1 = new TextDecoder('latin1');
let digits = '';
let nextDigit = 0;

function refill() {
  const bytes = crypto.getRandomValues(new Uint8Array(4096));
  const codes = new Uint8Array(bytes.length);
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    const code = DIGIT_OF_BYTE[bytes[i]!]!;
    if (code !== 0) codes[n++] = code;
  }
  digits = latin1.decode(codes.subarray(0, n));
  nextDigit = 0;
}

export function newId(prefix: IdPrefix): string {
  if (nextDigit + ID_DIGITS > digits.length) refill();
  const id = `${prefix}_${digits.slice(nextDigit, nextDigit + ID_DIGITS)}`;
  nextDigit += ID_DIGITS;
  return id;
}
