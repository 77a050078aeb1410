/**
 * The base procedures' builder. Routers write `apiKeyProcedure.meta({…}).input(schema).output(schema)
 * .query(handler)` as with tRPC; each step is recorded into the project's definition (definition.ts)
 * and, in step, into a tRPC procedure built with tRPC's public builder, whose single middleware calls
 * the access rule's gate. Its type (builder-type.ts) offers exactly the methods below, with tRPC's
 * own inference for the routers' handlers and the typed client (one `.input()` and one `.output()`
 * per procedure; no `.use()`: cross-cutting rules belong to an access rule).
 */
import { z } from 'zod';
import { defaultScope } from '../../accounts/scopes.ts';
import { inputError } from '../../errors.ts';
import { roundAnswerNumbers } from '../../lib/answer-numbers.ts';
import { t } from './trpc.ts';
import { toTrpcError } from './trpc-errors.ts';
import type { RouteMeta } from './meta.ts';
import type { AnyTrpcBuilder, BaseProcedureBuilder, BuilderStep } from './builder-type.ts';
import { registerDefinition, type AccessRule, type ProcedureDefinition, type ProcedureKind } from './definition.ts';
import { userMemberType, withoutUserMember, withUserMember } from './user-member.ts';

/**
 * The tRPC middleware of a rule: the gate (which checks the input against the schema at its input
 * step, before any reservation), then the procedure, then the gate's settle; the answer, validated
 * by the output step inside, leaves with its numbers rounded by the API's rule (lib/answer-numbers.ts).
 */
function gateMiddleware(rule: AccessRule, input: z.ZodType | undefined) {
  return t.middleware(async (opts) => {
    const rawInput = await opts.getRawInput();
    const parseInput = input && (() => input.parseAsync(rawInput).catch((cause) => {
      throw inputError(cause);
    }));
    const admission = await Promise.resolve()
      .then(() => rule.gate({ ctx: opts.ctx, path: opts.path, meta: (opts.meta ?? rule.meta) as RouteMeta, rawInput, parseInput }))
      .catch((error) => {
        throw toTrpcError(error);
      });
    const result = await opts.next({ ctx: admission.ctx ?? {} });
    await admission.settle?.(result.ok);
    // The API's rule for numbers on the validated answer, as the compiled definitions apply it (runner.ts).
    if (result.ok) return { ...result, data: roundAnswerNumbers(result.data) };
    // The handler's ApiError reaches tRPC wrapped as an internal error: answered under its own status.
    return { ...result, error: toTrpcError(result.error) };
  });
}

type Partial = Omit<ProcedureDefinition, 'kind' | 'handler'>;

/** A billed key route's meta with its scope: the one it names, or its default (scopes.ts); none is an error. */
function withScope(meta: RouteMeta, kind: ProcedureKind): RouteMeta {
  if (meta.access !== 'key' && meta.access !== 'user') return meta;
  const scope = meta.scope ?? defaultScope(meta, kind);
  if (!scope) throw new Error(`procedure builder: the key route ${meta.openapi?.path ?? '(no path)'} names no scope (meta.scope)`);
  return { ...meta, scope };
}

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

/**
 * Records the definition step by step; the tRPC procedure is built from it at the end (build), in
 * the order meta → gate → input → output, so the gate knows the input schema.
 */
class DefinitionBuilder {
  constructor(private readonly definition: Partial) {}

  meta(meta: RouteMeta) {
    return new DefinitionBuilder({ ...this.definition, meta: { ...this.definition.meta, ...meta } });
  }

  input(schema: NonNullable<Partial['input']>) {
    if (this.definition.input) throw new Error('procedure builder: one .input() per procedure');
    const input = this.definition.rule.namesUser ? withUserMember(schema, this.definition.meta.openapi?.path ?? 'a procedure') : schema;
    return new DefinitionBuilder({ ...this.definition, input });
  }

  output(schema: NonNullable<Partial['output']>) {
    return new DefinitionBuilder({ ...this.definition, output: schema });
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
    const { rule, input, output } = this.definition;
    // A trading user's route without parameters still takes the `userId` member, and nothing else.
    if (rule.namesUser && !input) return this.input(z.strictObject({}).prefault({} as never)).build(kind, handler, make);
    const meta = withScope(this.definition.meta, kind);
    let trpc = (t.procedure as unknown as TrpcBuilder).meta(meta).use(gateMiddleware(rule, input));
    if (input) trpc = trpc.input(input);
    if (input && rule.namesUser) trpc = trpc.use(dropUserMember);
    if (output) trpc = trpc.output(output);
    const procedure = make(trpc);
    registerDefinition(procedure, { ...this.definition, meta, kind, handler });
    return procedure;
  }
}

// Every step the type offers is a method of the class: a step added to the type alone fails here.
type NoneMissing<Missing extends never> = Missing;
type _EveryStepImplemented = NoneMissing<Exclude<BuilderStep, keyof DefinitionBuilder>>;

/** The class's value under its type: the steps' results are tRPC's types, which the class only records. */
const typed = <B extends AnyTrpcBuilder>(builder: DefinitionBuilder) => builder as unknown as BaseProcedureBuilder<B>;

/**
 * A base procedure for an access rule. `Added` is what the rule's admission adds to the handler's
 * context (e.g. `{ principal }`); the handlers see tRPC's builder types for that context.
 */
export function baseProcedure<Added extends object = object>(rule: AccessRule) {
  return typed<ReturnType<typeof typedBase<Added>>>(new DefinitionBuilder({ rule, meta: rule.meta }));
}

/** Types only: tRPC's builder with the rule's context added (the routers' handlers and the client infer from it). */
const typedBase = <Added extends object>() => t.procedure.use(t.middleware(({ next }) => next({ ctx: {} as Added })));

/**
 * A base procedure for a rule that acts for a trading user (`namesUser`): every input also takes the
 * optional `userId` member (user-member.ts), and the type says so, so a typed client can name the
 * user per call.
 */
export function userBaseProcedure<Added extends object = object>(rule: AccessRule) {
  // Types only: tRPC's builder with the member's input, so `.input(schema)` types `{ userId? } & schema`.
  return typed<ReturnType<typeof withMemberInput<Added>>>(new DefinitionBuilder({ rule: { ...rule, namesUser: true }, meta: rule.meta }));
}
const withMemberInput = <Added extends object>() => typedBase<Added>().input(userMemberType);
