/**
 * Who a request acts as, for the audit log (server/audit/log.ts): the operator whose dashboard key it
 * presented (by name), the API key (by id), or the signed-in customer's session (by wallet), with
 * the client address and the request id. Read from what the gate admitted, never from the request's
 * claims.
 */
import { getAddress } from 'viem';
import type { KeyPrincipal } from '../../accounts/api-keys.ts';
import type { AuditActor } from '../../audit/log.ts';
import type { RequestContext } from './context.ts';
import { sessionOf } from './session-gate.ts';

type Admitted = RequestContext & { operator?: string | null; principal?: KeyPrincipal };

export async function auditActorOf(ctx: Admitted): Promise<AuditActor> {
  const where = { clientIp: ctx.clientIp(), requestId: ctx.requestId };
  if (ctx.operator) return { kind: 'operator', id: ctx.operator, ...where };
  if (ctx.principal?.apiKeyId) return { kind: 'key', id: ctx.principal.apiKeyId, ...where };
  const session = await sessionOf(ctx);
  // Checksummed, as the sign-in's own entry names the wallet.
  return { kind: 'session', id: session ? getAddress(session.address) : 'unknown', ...where };
}
