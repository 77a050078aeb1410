/** Sign-in with a wallet (issue #17): nonce, verify (sets the session cookie), session, logout. */
import { getAddress } from 'viem';
import { z } from 'zod';
import { clearedSessionCookie, createSession, revokeSession, sessionCookie, sessionToken } from '../server/auth/sessions.ts';
import { issueNonce, verifySignIn, walletsOf } from '../server/auth/siwe.ts';
import { creditUnclaimedFor } from '../server/deposits/deposits.ts';
import { router } from '../server/trpc/init.ts';
import { publicProcedure, sessionProcedure } from '../server/procedures/base.ts';
import { sessionOf } from '../server/procedures/session-gate.ts';
import { iso, isoString, noInput } from './params.ts';

const TAG = ['Sign-in'];

const sessionView = z.object({
  accountId: z.string(),
  address: z.string().meta({ description: 'The wallet that signed in' }),
  expiresAt: isoString(),
  wallets: z.array(z.string()).meta({ description: 'Every wallet of the account' }),
});

export const authRouter = router({
  nonce: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/auth/nonce', tags: TAG, summary: 'A one-time nonce for an EIP-4361 sign-in message, and the fields the message must carry' } })
    .input(noInput())
    .output(z.object({ nonce: z.string(), expiresAt: isoString(), domain: z.string(), uri: z.string(), chainId: z.number().int(), version: z.literal('1') }))
    .query(async ({ ctx }) => {
      const { nonce, expiresAt } = await issueNonce(ctx.services.database.db);
      const site = new URL(ctx.services.config.auth.publicUrl);
      return { nonce, expiresAt: iso(expiresAt), domain: site.host, uri: site.origin, chainId: ctx.services.config.auth.chainId, version: '1' as const };
    }),

  verify: publicProcedure
    .meta({ openapi: { method: 'POST', path: '/auth/verify', tags: TAG, summary: 'Verify a signed EIP-4361 message: the wallet\'s account (created on its first sign-in) and a session cookie' } })
    .input(
      z.strictObject({
        message: z.string().min(1).max(4096).meta({ description: 'The EIP-4361 message as signed' }),
        signature: z.string().regex(/^0x[0-9a-fA-F]+$/, 'must be 0x-prefixed hex').max(20_000),
      }),
    )
    .output(z.object({ accountId: z.string(), address: z.string(), created: z.boolean().meta({ description: 'This sign-in created the account' }), expiresAt: isoString() }))
    .mutation(async ({ ctx, input }) => {
      const { config, database } = ctx.services;
      const signedIn = await verifySignIn(database.db, { publicUrl: config.auth.publicUrl, chainId: config.auth.chainId, client: ctx.services.polygon }, { message: input.message, signature: input.signature as `0x${string}` });
      // Deposits this wallet sent before it had an account are credited to it now (once).
      await creditUnclaimedFor(database.db, signedIn.address, signedIn.accountId);
      const session = await createSession(database.db, config, signedIn);
      ctx.resHeaders['Set-Cookie'] = sessionCookie(config, session.token, session.expiresAt);
      return { accountId: signedIn.accountId, address: signedIn.address, created: signedIn.created, expiresAt: iso(session.expiresAt) };
    }),

  /** For a page deciding what to show: never 401 (a signed-out visitor is an answer, not an error). */
  status: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/auth/status', tags: TAG, summary: 'Whether the request carries a live session (never 401): the page decides between sign-in and the account' } })
    .input(noInput())
    .output(z.object({ signedIn: z.boolean(), accountId: z.string().nullable(), address: z.string().nullable(), expiresAt: isoString().nullable() }))
    .query(async ({ ctx }) => {
      const session = await sessionOf(ctx);
      return session
        ? { signedIn: true, accountId: session.accountId, address: getAddress(session.address), expiresAt: iso(session.expiresAt) }
        : { signedIn: false, accountId: null, address: null, expiresAt: null };
    }),

  session: sessionProcedure
    .meta({ openapi: { method: 'GET', path: '/auth/session', tags: TAG, summary: 'The signed-in session: its account, wallet and expiry' } })
    .input(noInput())
    .output(sessionView)
    .query(async ({ ctx }) => ({
      accountId: ctx.session.accountId,
      address: getAddress(ctx.session.address),
      expiresAt: iso(ctx.session.expiresAt),
      wallets: await walletsOf(ctx.services.database.db, ctx.session.accountId),
    })),

  logout: sessionProcedure
    .meta({ openapi: { method: 'POST', path: '/auth/logout', tags: TAG, summary: 'End the session (the cookie stops working at once, on every instance)' } })
    .input(noInput())
    .output(z.object({ success: z.literal(true) }))
    .mutation(async ({ ctx }) => {
      const token = sessionToken(ctx.headers.get('cookie'));
      if (token) await revokeSession(ctx.services.database.db, token);
      ctx.resHeaders['Set-Cookie'] = clearedSessionCookie(ctx.services.config);
      return { success: true as const };
    }),
});
