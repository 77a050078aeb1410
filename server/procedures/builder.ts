/**
 * The base procedures' builder. Routers write `apiKeyProcedure.meta({…}).input(schema).output(schema)
 * .query(handler)` as with tRPC; each step is recorded into the project's definition (definition.ts)
 * and, in step, into a tRPC procedure built with tRPC's public builder, whose single middleware calls
 * the access rule's gate. The builder is typed as that tRPC builder, so the routers' handlers and the
 * typed client get tRPC's own inference; at run time only the methods below exist (one `.input()` per
 * procedure; no `.use()`: cross-cutting rules belong to an access rule).
 */
import { z } from 'zod';
import { t, type RouteMeta } from '../trpc/init.ts';
import { registerDefinition, type AccessRule, type ProcedureDefinition, type ProcedureKind } from './definition.ts';
import { userMemberType, withoutUserMember, withUserMember } from './user-member.ts';

/** The tRPC middleware of a rule: the gate, then the procedure, then the gate's settle. */
function gateMiddleware<Added extends object>(rule: AccessRule) {
  return t.middleware(async (opts) => {
    const admission = await rule.gate({ ctx: opts.ctx, path: opts.path, meta: (opts.meta ?? rule.meta) as RouteMeta, rawInput: await opts.getRawInput() });
    const result = await opts.next({ ctx: (admission.ctx ?? {}) as Added });
    await admission.settle?.(result.ok);
    return result;
  });
}

type Partial = Omit<ProcedureDefinition, 'kind' | 'handler'>;

/** After the input schema: the handler gets the input without the `userId` member (the gate read it). */
const dropUserMember = t.middleware(({ input, next }) => next({ input: withoutUserMember(input) }));

/** The tRPC builder methods the routers use; each returns the next builder or the built procedure. */
interface TrpcBuilder {
  meta(meta: RouteMeta): TrpcBuilder;
  use(middleware: unknown): TrpcBuilder;
  input(schema: unknown): TrpcBuilder;
  output(schema: unknown): TrpcBuilder;
  query(handler: unknown): object;
  mutation(handler: unknown): object;
  subscription(handler: unknown): object;
}

class DefinitionBuilder {
  constructor(
    private readonly trpc: TrpcBuilder,
    private readonly definition: Partial,
  ) {}

  meta(meta: RouteMeta) {
    return new DefinitionBuilder(this.trpc.meta(meta), { ...this.definition, meta: { ...this.definition.meta, ...meta } });
  }

  input(schema: NonNullable<Partial['input']>) {
    if (this.definition.input) throw new Error('procedure builder: one .input() per procedure');
    if (!this.definition.rule.namesUser) return new DefinitionBuilder(this.trpc.input(schema), { ...this.definition, input: schema });
    const withUser = withUserMember(schema, this.definition.meta.openapi?.path ?? 'a procedure');
    return new DefinitionBuilder(this.trpc.input(withUser).use(dropUserMember), { ...this.definition, input: withUser });
  }

  output(schema: NonNullable<Partial['output']>) {
    return new DefinitionBuilder(this.trpc.output(schema), { ...this.definition, output: schema });
  }

  query(handler: ProcedureDefinition['handler']) {
    return this.build('query', handler, (trpc) => trpc.query(handler));
  }

  mutation(handler: ProcedureDefinition['handler']) {
    return this.build('mutation', handler, (trpc) => trpc.mutation(handler));
  }

  subscription(handler: ProcedureDefinition['handler']) {
    return this.build('subscription', handler, (trpc) => trpc.subscription(handler));
  }

  private build(kind: ProcedureKind, handler: ProcedureDefinition['handler'], make: (builder: TrpcBuilder) => object): object {
    // A trading user's route without parameters still takes the `userId` member, and nothing else.
    if (this.definition.rule.namesUser && !this.definition.input) return this.input(z.strictObject({}).prefault({} as never)).build(kind, handler, make);
    const procedure = make(this.trpc);
    registerDefinition(procedure, { ...this.definition, kind, handler });
    return procedure;
  }
}

/**
 * A base procedure for an access rule. `Added` is what the rule's admission adds to the handler's
 * context (e.g. `{ principal }`); the value returned is typed as tRPC's builder for that context.
 */
export function baseProcedure<Added extends object = object>(rule: AccessRule) {
  const trpcBase = t.procedure.meta(rule.meta).use(gateMiddleware<Added>(rule));
  return new DefinitionBuilder(trpcBase as unknown as TrpcBuilder, { rule, meta: rule.meta }) as unknown as typeof trpcBase;
}

/**
 * A base procedure for a rule that acts for a trading user (`namesUser`): every input also takes the
 * optional `userId` member (user-member.ts), and the type says so, so a typed client can name the
 * user per call.
 */
export function userBaseProcedure<Added extends object = object>(rule: AccessRule) {
  const trpcBase = t.procedure.meta(rule.meta).use(gateMiddleware<Added>(rule));
  // Types only: tRPC's builder with the member's input, so `.input(schema)` types `{ userId? } & schema`.
  const typed = trpcBase.input(userMemberType);
  return new DefinitionBuilder(trpcBase as unknown as TrpcBuilder, { rule: { ...rule, namesUser: true }, meta: rule.meta }) as unknown as typeof typed;
}
