/**
 * The audit log (server/audit/log.ts; docs/accounts.md, "Audit log"): an account's own entries for
 * its keys and sessions, and every entry for operators.
 */
import { z } from 'zod';
import { AUDIT_ACTIONS, listAudit, type AuditRow } from '../server/audit/log.ts';
import { bothSides } from '../server/accounts/modes.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { apiKeyProcedure, dashboardProcedure } from '../server/platform/procedures/base.ts';
import { iso, isoString, noInput, optionalParams, queryBoolean, wholeNumber } from './params.ts';

const TAG = ['Account and billing'];

const entry = z.object({
  id: z.string().meta({ example: 'aud_3kVq8sN2bX7yTf1mLc9PzR' }),
  timestamp: isoString(),
  action: z.enum(AUDIT_ACTIONS),
  actor: z.object({
    kind: z.enum(['key', 'session', 'operator', 'system']).meta({ description: 'An API key, a signed-in wallet, a named operator, or a command run on the server' }),
    id: z.string().meta({ description: 'The key\'s id, the wallet\'s address, the operator\'s name or the command', example: 'key_FnfU71WQeSY3DWtAZpbSi1' }),
  }),
  accountId: z.string().nullable().meta({ description: 'The account the change concerns (`<account>~test`: its test side); null for the service as a whole (an event resolved or listed)' }),
  targetId: z.string().nullable().meta({ description: 'What was changed: a key, webhook or event id, or a trading user' }),
  details: z.record(z.string(), z.unknown()).meta({ description: 'What changed, e.g. a new key\'s name, mode and scopes, or a credit\'s amount' }),
  clientIp: z.string().nullable(),
  requestId: z.string().nullable(),
});

const pageInput = {
  limit: wholeNumber({ min: 1, max: 100 }).default(50).meta({ description: 'Entries per page: 1 to 100, default 50', example: 50 }),
  cursor: z.string().regex(/^\d{1,18}$/, 'must be the nextCursor of the previous page').meta({ description: 'The nextCursor of the previous page', example: '4182' }).optional(),
  action: z.enum(AUDIT_ACTIONS).meta({ description: 'Only entries of this action', example: 'key.created' }).optional(),
};

const pageOutput = z.object({ entries: z.array(entry).meta({ description: 'Newest first' }), nextCursor: z.string().nullable().meta({ description: 'The next page\'s cursor; null on the last page' }) });

const view = (r: AuditRow) => ({
  id: r.id,
  timestamp: iso(r.createdAt),
  action: r.action as (typeof AUDIT_ACTIONS)[number],
  actor: { kind: r.actorKind, id: r.actorId },
  accountId: r.accountId,
  targetId: r.targetId,
  details: r.details,
  clientIp: r.clientIp,
  requestId: r.requestId,
});

const page = async (db: Parameters<typeof listAudit>[0], input: { limit: number; cursor?: string; action?: (typeof AUDIT_ACTIONS)[number] }, accountIds?: string[]) => {
  const { entries, nextCursor } = await listAudit(db, { accountIds, limit: input.limit, before: input.cursor === undefined ? undefined : Number(input.cursor), action: input.action });
  return { entries: entries.map(view), nextCursor };
};

export const auditLogRouter = router({
  list: apiKeyProcedure
    .meta({
      scope: 'account:read',
      session: true,
      openapi: {
        method: 'GET',
        path: '/audit-log',
        tags: TAG,
        summary: 'Security-relevant changes of the calling account, newest first',
        description:
          'Every key created or revoked (with its mode and scopes), venue credentials stored or deleted, webhook created, deleted or given a new secret, credit, price or plan change, and wallet sign-in or sign-out of the calling account and its test side: who (key, session or operator), what, when and from which address. Append-only: no entry is ever changed or removed. Paged with cursor (nextCursor), the same cost however long the log. With a session: the signed-in account.',
      },
    })
    .input(optionalParams(pageInput))
    .output(pageOutput)
    .query(({ ctx, input }) => page(ctx.services.database.db, input, bothSides(ctx.principal.accountId))),

  all: dashboardProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/operator/audit-log',
        tags: ['Accounts (dashboard)'],
        summary: 'The audit log for operators: the named account\'s entries, or every entry',
        description:
          'With a dashboard key: the entries of the account named by x-account-id (and its test side), or with `everyAccount=true` every entry of the service, event resolutions and listings included. Newest first, paged with cursor.',
      },
    })
    .input(optionalParams({ ...pageInput, everyAccount: queryBoolean('true: every entry, not only the named account\'s', true) }))
    .output(pageOutput)
    .query(({ ctx, input }) => page(ctx.services.database.db, input, input.everyAccount ? undefined : bothSides(ctx.accountId))),

  operators: dashboardProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/operators',
        tags: ['Accounts (dashboard)'],
        summary: 'The operators: who holds a dashboard key, by name (never the keys)',
        description:
          'The operators of this service, as DASHBOARD_KEYS names them (`name=key`; a bare key is operator-<n>), and which one is asking. Each operator action is recorded in the audit log under its operator\'s name.',
      },
    })
    .input(noInput())
    .output(z.object({ operators: z.array(z.object({ name: z.string().meta({ example: 'alice' }) })), you: z.string().nullable().meta({ description: 'The operator whose key made this request; null for a signed-in customer', example: 'alice' }) }))
    .query(({ ctx }) => ({ operators: ctx.services.operators.map((o) => ({ name: o.name })), you: ctx.operator ?? null })),
});
