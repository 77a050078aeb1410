/**
 * The service's router as a client sees it: every procedure with its exact input and output types,
 * and nothing of the server (its context, services, database and runtime types are erased).
 *
 * In this repository the type is computed from the server's router. The published package carries
 * the computed result instead: client/scripts/build.ts prints this type fully expanded into
 * dist/app-router.d.ts, which imports nothing but @trpc/server.
 */
import type { inferRouterError, TRPCBuiltRouter, TRPCMutationProcedure, TRPCQueryProcedure, TRPCSubscriptionProcedure } from '@trpc/server';
import type { AppRouter as ServerRouter } from '../../routers/index.ts';

/**
 * A type written out in full: object types member by member (so no name of the server's, zod's or
 * any other module's types remains), arrays and unions element by element, primitives as they are.
 * The `T extends infer O` step makes TypeScript print the result instead of the name of this alias;
 * a union of literals (an error code, an event type) is rebuilt as a fresh union for the same reason.
 * `unknown` stays `unknown`; a Date is the string JSON carries; functions (never in an answer) go.
 */
export type Plain<T> = unknown extends T ? T : Literals<Extract<T, PropertyKey>> | PlainMember<Exclude<T, PropertyKey>>;

type Literals<T extends PropertyKey> = { [K in T]: K }[T];

type PlainMember<T> = T extends boolean | bigint | null | undefined | void
  ? T
  : T extends Date
    ? string
    : T extends (...args: never[]) => unknown
      ? never
      : T extends infer O
        ? { [K in keyof O]: Plain<O[K]> }
        : never;

type Yield<T> = T extends AsyncIterable<infer Y> ? Y : never;

/** A procedure as the client needs it: its kind, input and output (meta and error shape are the router's). */
type ClientProcedure<P> = P extends TRPCQueryProcedure<infer D>
  ? TRPCQueryProcedure<{ input: Plain<D['input']>; output: Plain<D['output']>; meta: object }>
  : P extends TRPCMutationProcedure<infer D>
    ? TRPCMutationProcedure<{ input: Plain<D['input']>; output: Plain<D['output']>; meta: object }>
    : P extends TRPCSubscriptionProcedure<infer D>
      ? TRPCSubscriptionProcedure<{ input: Plain<D['input']>; output: AsyncIterable<Plain<Yield<D['output']>>, void, unknown>; meta: object }>
      : { [K in keyof P]: ClientProcedure<P[K]> };

/** The routers and procedures of the server's router, in their order. */
type ServerRecord = ServerRouter extends TRPCBuiltRouter<any, infer Procedures> ? Procedures : never;

/** The body of every error: tRPC's shape with the service's public error in `data.api`. */
export type ErrorShape = Plain<inferRouterError<ServerRouter>>;

/** What `createTRPCClient<AppRouter>` needs: the procedures, the error shape, no transformer; context and meta erased. */
export type AppRouter = TRPCBuiltRouter<
  { ctx: object; meta: object; errorShape: ErrorShape; transformer: false },
  { [K in keyof ServerRecord]: ClientProcedure<ServerRecord[K]> }
>;
