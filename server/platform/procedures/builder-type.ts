/**
 * The type of a base procedure (builder.ts): only the steps the project's builder has — `meta`, one
 * `input`, one `output`, then `query`, `mutation` or `subscription`. The builder records a
 * definition rather than chaining tRPC's builder, so tRPC's other methods (`use`, `concat`, `errors`,
 * `experimental_caller`) would type-check and then fail at load; here they do not type-check.
 *
 * Everything a router's handler or the typed client infers is still tRPC's own: the three final steps
 * are taken from tRPC's builder type, and `input`/`output` move to the tRPC builder type that tRPC's
 * `.input()`/`.output()` would return.
 */
import type { TRPCProcedureBuilder, TRPCUnsetMarker } from '@trpc/server';
import type { z } from 'zod';
import type { RouteMeta } from './meta.ts';

export type AnyTrpcBuilder = TRPCProcedureBuilder<any, any, any, any, any, any, any, any, any>;

/** The steps a base procedure offers, the names builder.ts's class must implement (checked there). */
export type BuilderStep = 'meta' | 'input' | 'output' | 'query' | 'mutation' | 'subscription';

/**
 * The builder after the steps in `Taken`: `input` and `output` go once each (builder.ts refuses a
 * second `.input()`, and a second `.output()` would replace the first, not join it as tRPC's does).
 */
export type BaseProcedureBuilder<B extends AnyTrpcBuilder, Taken extends 'input' | 'output' = never> = Omit<Steps<B, Taken>, Taken>;

type Steps<B extends AnyTrpcBuilder, Taken extends 'input' | 'output'> = Pick<B, 'query' | 'mutation' | 'subscription'> & {
  meta(meta: RouteMeta): BaseProcedureBuilder<B, Taken>;
  input<S extends z.ZodType>(schema: ObjectIfJoined<B, S>): BaseProcedureBuilder<WithInput<B, S>, Taken | 'input'>;
  output<S extends z.ZodType>(schema: S): BaseProcedureBuilder<WithOutput<B, S>, Taken | 'output'>;
};

// tRPC's internal helpers (not exported by @trpc/server), copied so the types come out identical.
type Simplify<T> = T extends any[] | Date ? T : { [K in keyof T]: T[K] };
type Joined<Earlier, Added> = Earlier extends TRPCUnsetMarker ? Added : Simplify<Earlier & Added>;

/** A schema joining an earlier input (a trading user's `userId` member) must be an object, as tRPC requires. */
type ObjectIfJoined<B, S extends z.ZodType> =
  B extends TRPCProcedureBuilder<any, any, any, any, infer InOut, any, any, any, any>
    ? InOut extends TRPCUnsetMarker ? S : z.output<S> extends Record<string, unknown> | undefined ? S : never
    : never;

type WithInput<B, S extends z.ZodType> =
  B extends TRPCProcedureBuilder<infer Ctx, infer Meta, infer Added, infer InIn, infer InOut, infer OutIn, infer OutOut, infer Caller, infer Shape>
    ? TRPCProcedureBuilder<Ctx, Meta, Added, Joined<InIn, z.input<S>>, Joined<InOut, z.output<S>>, OutIn, OutOut, Caller, Shape>
    : never;

type WithOutput<B, S extends z.ZodType> =
  B extends TRPCProcedureBuilder<infer Ctx, infer Meta, infer Added, infer InIn, infer InOut, infer OutIn, infer OutOut, infer Caller, infer Shape>
    ? TRPCProcedureBuilder<Ctx, Meta, Added, InIn, InOut, Joined<OutIn, z.input<S>>, Joined<OutOut, z.output<S>>, Caller, Shape>
    : never;
