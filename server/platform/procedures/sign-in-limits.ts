/**
 * How often a client may sign in, RATE_LIMIT_SIGN_IN_RPS/_BURST (0.2/s, burst 10), each in a
 * bucket of its own, shared by instances through Redis like every limit (429 RATE_LIMITED, Retry-After):
 *  - nonces per client IP: bounds the unused nonces one address can leave in the table (burst + rps ×
 *    the 10-minute lifetime = 130), beyond the public per-IP limit every route has;
 *  - verifications per client IP, taken before any work: a signature check costs CPU, a smart wallet's
 *    an RPC call;
 *  - verifications per wallet, taken once the signature proved it is the wallet's, so nobody else can
 *    use up a wallet's sign-ins; with SESSION_MAX_PER_ACCOUNT it bounds the sessions one wallet mints.
 * Rate limits of the request (its client address, its headers), so here beside rate-limits.ts rather
 * than in server/auth/, which knows nothing of requests; routers/auth.ts applies them.
 */
import type { RequestContext } from './context.ts';
import { applyRateLimit } from './rate-limits.ts';

const limit = (ctx: RequestContext, bucket: string) => applyRateLimit(ctx, `sign-in-${bucket}`, ctx.services.config.rateLimits.signIn);

export const limitNonces = (ctx: RequestContext) => limit(ctx, `nonce:${ctx.clientIp()}`);
export const limitVerifications = (ctx: RequestContext) => limit(ctx, `ip:${ctx.clientIp()}`);
export const limitWallet = (ctx: RequestContext, address: string) => limit(ctx, `wallet:${address.toLowerCase()}`);
