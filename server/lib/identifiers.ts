/** Identifier texts of docs/decisions.md §1/§3 (account ids, user ids): one pattern and its rule in words. */
export const IDENTIFIER = /^[A-Za-z0-9._:@-]{1,128}$/;
export const IDENTIFIER_RULE = '1-128 characters of A-Z a-z 0-9 . _ : @ -';

/** An idempotency key (Idempotency-Key header or idempotencyKey member): visible ASCII, as RFC drafts and Stripe take it. */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
export const IDEMPOTENCY_KEY_RULE = 'must be 1-255 visible ASCII characters';
