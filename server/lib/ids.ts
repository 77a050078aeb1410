import { base58 } from './base58.ts';

/** Prefixed random ids (`key_…`, `use_…`, `pos_…`): 128 random bits, readable, sortable by nothing. */
export type IdPrefix = 'key' | 'use' | 'crd' | 'req' | 'pos' | 'ord' | 'trd' | 'op';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${base58(crypto.getRandomValues(new Uint8Array(16)))}`;
}
