/** Sign-in with a wallet: nonce, verify (sets the session cookie), session, logout. */
import { getAddress } from 'viem';
import { z } from 'zod';
import { clearedSessionCookie, createSession, revokeSession, serviceOrigin, sessionCookie, sessionToken } from '../server/auth/sessions.ts';
import { clearedNonceCookie, nonceBinding, nonceCookie } from '../server/auth/nonce-cookie.ts';
import { limitNonces, limitVerifications, limitWallet } from '../server/platform/procedures/sign-in-limits.ts';
import { issueNonce, verifySignIn, walletsOf } from '../server/auth/siwe.ts';
import { creditUnclaimedFor } from '../server/deposits/deposits.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { publicProcedure, sessionProcedure } from '../server/platform/procedures/base.ts';
import { sessionOf } from '../server/platform/procedures/session-gate.ts';
import { iso, isoString, noInput } from './params.ts';
import { audited } from '../server/audit/log.ts';

const TAG = ['Sign-in'];

const sessionView = z.object({
  accountId: z.string(),
  address: z.string().meta({ description: 'The wallet that signed in' }),
  expiresAt: isoString(),
  wallets: z.array(z.string()).meta({ description: 'Every wallet of the account' }),
});

export const authRouter = router({
  nonce: publicProcedure
    .meta({
      mcp: false, // a browser's sign-in step, not an agent's tool
      openapi: {
        method: 'GET',
        path: '/auth/nonce',
        tags: TAG,
        summary: 'A one-time nonce for an EIP-4361 sign-in message, and the fields the message must carry',
        description:
          'Step 1 of a wallet sign-in: a nonce usable once, until expiresAt, and the domain, uri, chain id and version the EIP-4361 ("Sign-In with Ethereum") message must carry. Have the wallet sign a message with them, then send it to POST /api/auth/verify with the `pipo_nonce` cookie this answer sets (HttpOnly, SameSite=Strict, Path /api/auth, or /trpc on the tRPC path): the nonce works only for the client that asked for it. Public and unbilled; limited per client IP (429 with Retry-After).',
      },
    })
    .input(noInput())
    .output(z.object({ nonce: z.string(), expiresAt: isoString(), domain: z.string(), uri: z.string(), chainId: z.number().int(), version: z.literal('1') }))
    .query(async ({ ctx }) => {
      await limitNonces(ctx);
      const { nonce, binding, expiresAt } = await issueNonce(ctx.services.database.db, ctx.clientIp());
      ctx.resHeaders['Set-Cookie'] = nonceCookie(ctx.services.config, ctx.transport, binding, expiresAt);
      const site = new URL(serviceOrigin(ctx.services.config, ctx.headers.get('host')));
      return { nonce, expiresAt: iso(expiresAt), domain: site.host, uri: site.origin, chainId: ctx.services.config.auth.chainId, version: '1' as const };
    }),

  verify: publicProcedure
    .meta({
      mcp: false, // a browser's sign-in step, not an agent's tool
      openapi: {
        method: 'POST',
        path: '/auth/verify',
        tags: TAG,
        summary: 'Verify a signed EIP-4361 message: the wallet\'s account (created on its first sign-in) and a session cookie',
        description:
          'Step 2 of a wallet sign-in: checks the message (this service\'s scheme, domain, uri and chain id, an unused and unexpired nonce from GET /api/auth/nonce sent with the `pipo_nonce` cookie that answer set) and its signature, then answers the wallet\'s account, creating it on the first sign-in, sets the `pipo_session` cookie and clears `pipo_nonce`. The cookie then works in place of a key on the routes that list the Session scheme. An account keeps its newest SESSION_MAX_PER_ACCOUNT sessions (10 by default): a sign-in beyond revokes the oldest. Deposits the wallet sent before it had an account are credited now. 401 naming the reason when the sign-in is refused; 429 with Retry-After past the sign-ins allowed per client IP or per wallet.',
      },
    })
    .input(
      z.strictObject({
        message: z
          .string()
          .min(1)
          .max(4096)
          .meta({
            description: 'The EIP-4361 message as signed',
            example:
              'localhost:3000 wants you to sign in with your Ethereum account:\n0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed\n\nSign in to Pre-IPO\n\nURI: http://localhost:3000\nVersion: 1\nChain ID: 137\nNonce: 8fKq2LmN4pRtW7xZ\nIssued At: 2026-11-22T06:00:00.000Z',
          }),
        signature: z
          .string()
          .regex(/^0x[0-9a-fA-F]+$/, 'must be 0x-prefixed hex')
          .max(20_000)
          .meta({
            description: 'The wallet\'s signature of the message (EIP-191 personal_sign), 0x-prefixed hex; with a Polygon RPC configured, a smart-contract wallet\'s too (ERC-1271/6492)',
            example: '0x4a6f4a6f4a6f4a6f4a6f4a6f4a6f4a6f9c1e9c1e9c1e9c1e9c1e9c1e9c1e9c1eb27db27db27db27db27db27db27db27de53ae53ae53ae53ae53ae53ae53ae53a1b',
          }),
      }),
    )
    .output(z.object({ accountId: z.string(), address: z.string(), created: z.boolean().meta({ description: 'This sign-in created the account' }), expiresAt: isoString() }))
    .mutation(async ({ ctx, input }) => {
      const { config, database } = ctx.services;
      await limitVerifications(ctx);
      const signedIn = await verifySignIn(
        database.db,
        { publicUrl: serviceOrigin(config, ctx.headers.get('host')), chainId: config.auth.chainId, client: ctx.services.polygon, admitWallet: (address) => limitWallet(ctx, address) },
        { message: input.message, signature: input.signature as `0x${string}`, binding: nonceBinding(ctx.headers.get('cookie')) },
      );
      // Deposits this wallet sent before it had an account are credited to it now (once).
      await creditUnclaimedFor(database.db, signedIn.address, signedIn.accountId);
      const actor = { kind: 'session' as const, id: signedIn.address, clientIp: ctx.clientIp(), requestId: ctx.requestId };
      const session = await audited(database.db, actor, (tx) => createSession(tx, config, signedIn), () => ({
        action: 'session.signed_in',
        accountId: signedIn.accountId,
        targetId: signedIn.address,
        details: { accountCreated: signedIn.created },
      }));
      // Two cookies, a line each (platform/http/response-headers.ts): the session, and the used nonce's binding cleared.
      ctx.resHeaders['Set-Cookie'] = `${sessionCookie(config, session.token, session.expiresAt)}\n${clearedNonceCookie(config, ctx.transport)}`;
      return { accountId: signedIn.accountId, address: signedIn.address, created: signedIn.created, expiresAt: iso(session.expiresAt) };
    }),

  /** For a page deciding what to show: never 401 (a signed-out visitor is an answer, not an error). */
  status: publicProcedure
    .meta({
      mcp: false, // a browser's sign-in step, not an agent's tool
      openapi: {
        method: 'GET',
        path: '/auth/status',
        tags: TAG,
        summary: 'Whether the request carries a live session (never 401): the page decides between sign-in and the account',
        description:
          'Answers signedIn with the session\'s account, wallet and expiry, or signedIn false with nulls when the request has no live session (never 401, so a page can ask before it knows). Public and unbilled.',
      },
    })
    .input(noInput())
    .output(z.object({ signedIn: z.boolean(), accountId: z.string().nullable(), address: z.string().nullable(), expiresAt: isoString().nullable() }))
    .query(async ({ ctx }) => {
      const session = await sessionOf(ctx);
      return session
        ? { signedIn: true, accountId: session.accountId, address: getAddress(session.address), expiresAt: iso(session.expiresAt) }
        : { signedIn: false, accountId: null, address: null, expiresAt: null };
    }),

  session: sessionProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/auth/session',
        tags: TAG,
        summary: 'The signed-in session: its account, wallet and expiry',
        description: 'The session cookie\'s account, the wallet that signed in, when the session expires, and every wallet of the account. 401 when the cookie is missing, expired or signed out.',
      },
    })
    .input(noInput())
    .output(sessionView)
    .query(async ({ ctx }) => ({
      accountId: ctx.session.accountId,
      address: getAddress(ctx.session.address),
      expiresAt: iso(ctx.session.expiresAt),
      wallets: await walletsOf(ctx.services.database.db, ctx.session.accountId),
    })),

  logout: sessionProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/auth/logout',
        tags: TAG,
        summary: 'End the session (the cookie stops working at once, on every instance)',
        description:
          'Revokes the session on the server, so the cookie stops working at once on every instance, and clears the cookie. Like every request that changes something with a session, it must carry an Origin of this service (403 FORBIDDEN_ORIGIN otherwise).',
      },
    })
    .input(noInput())
    .output(z.object({ success: z.literal(true) }))
    .mutation(async ({ ctx }) => {
      const token = sessionToken(ctx.headers.get('cookie'));
      if (token) {
        const actor = { kind: 'session' as const, id: getAddress(ctx.session.address), clientIp: ctx.clientIp(), requestId: ctx.requestId };
        await audited(ctx.services.database.db, actor, (tx) => revokeSession(tx, token), (ended) => (ended ? { action: 'session.signed_out', accountId: ended.accountId, targetId: ended.address } : null));
      }
      ctx.resHeaders['Set-Cookie'] = clearedSessionCookie(ctx.services.config);
      return { success: true as const };
    }),
});
