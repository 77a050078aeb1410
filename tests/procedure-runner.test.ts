/**
 * The REST bridge's procedure runner against tRPC's own caller: the same procedures, called both
 * ways, must answer the same data or the same error (every route is also called over /api and /trpc
 * in the other suites; these are the middleware rules no route of ours exercises).
 */
import { describe, expect, test } from 'bun:test';
import { initTRPC, TRPCError } from '@trpc/server';
import { z } from 'zod';
import { compileProcedure, type ProcedureDefinition } from '../server/http/procedure-runner.ts';
import { markReusable } from '../server/lib/reusable-json.ts';
import { rawInputOf } from '../server/trpc/raw-input.ts';
import type { RequestContext } from '../server/trpc/context.ts';

const t = initTRPC.context<{ who: string; tag?: string }>().create();
let outputChecks = 0;
const shared = markReusable({ n: 1, inner: { list: [1, 2] } });

const router = t.router({
  plain: t.procedure.input(z.object({ a: z.string() })).output(z.object({ got: z.string() })).query(({ input }) => ({ got: input.a })),
  twoInputs: t.procedure
    .input(z.object({ a: z.string() }))
    .input(z.object({ b: z.coerce.number() }))
    .query(({ input }) => input),
  ctxMerge: t.procedure
    .use(({ next }) => next({ ctx: { tag: 'added' } }))
    .use(async ({ ctx, next }) => next({ ctx: { who: `${ctx.who}+${ctx.tag}` } }))
    .query(({ ctx }) => ({ who: ctx.who, tag: ctx.tag })),
  replacedRawInput: t.procedure
    .use(({ next }) => next({ getRawInput: async () => ({ a: 'replaced' }) }))
    .use(async (opts) => opts.next({ ctx: { tag: JSON.stringify(await rawInputOf(opts)) } }))
    .input(z.object({ a: z.string() }))
    .query(({ input, ctx }) => ({ input, seen: ctx.tag })),
  inputOverride: t.procedure
    .use(({ next }) => next({ input: { forced: true } }))
    .use(({ input, next }) => next({ ctx: { tag: JSON.stringify(input) } }))
    .query(({ ctx }) => ctx.tag),
  badOutput: t.procedure.output(z.object({ n: z.number() })).query(() => ({ n: 'not a number' }) as unknown as { n: number }),
  throwsSync: t.procedure
    .use(() => {
      throw new TRPCError({ code: 'FORBIDDEN', message: 'no' });
    })
    .query(() => 'unreached'),
  rejects: t.procedure.use(async () => Promise.reject(new Error('boom'))).query(() => 'unreached'),
  resolverThrows: t.procedure.query(() => {
    throw new TRPCError({ code: 'CONFLICT', message: 'taken' });
  }),
  asyncResolver: t.procedure.input(z.object({ a: z.string() })).query(async ({ input }) => ({ later: input.a })),
  reusable: t.procedure
    .output(z.object({ n: z.number(), inner: z.object({ list: z.array(z.number()) }) }).refine(() => ++outputChecks > 0))
    .query(() => shared),
  fresh: t.procedure.output(z.object({ n: z.number() }).refine(() => ++outputChecks > 0)).query(() => ({ n: 2 })),
});

const ctx = { who: 'caller' };
const caller = t.createCallerFactory(router)(ctx);
// Compiled once per procedure, as the route table does.
const compiled = new Map<string, ReturnType<typeof compileProcedure>>();
const run = (name: keyof typeof router._def.procedures, rawInput: unknown) => {
  if (!compiled.has(name)) compiled.set(name, compileProcedure(router._def.procedures[name] as unknown as ProcedureDefinition));
  return compiled.get(name)!({ ctx: ctx as unknown as RequestContext, path: name, type: 'query', rawInput });
};
const outcome = async (call: () => unknown) => {
  try {
    return { data: await call() };
  } catch (error) {
    const e = error as TRPCError;
    return { code: e.code, message: e.message };
  }
};

describe('compiled procedures answer as tRPC calls them', () => {
  const cases: Array<[keyof typeof router._def.procedures, unknown]> = [
    ['plain', { a: 'x' }],
    ['plain', { a: 1 }],
    ['plain', 'not an object'],
    ['twoInputs', { a: 'x', b: '7' }],
    ['ctxMerge', undefined],
    ['replacedRawInput', { a: 'original' }],
    ['inputOverride', undefined],
    ['badOutput', undefined],
    ['throwsSync', undefined],
    ['rejects', undefined],
    ['resolverThrows', undefined],
    ['asyncResolver', { a: 'y' }],
  ];
  for (const [name, input] of cases) {
    test(`${name}(${JSON.stringify(input)})`, async () => {
      const expected = await outcome(() => (caller[name] as (i: unknown) => Promise<unknown>)(input));
      expect(await outcome(() => run(name, input))).toEqual(expected);
    });
  }

  test('a middleware that replaces getRawInput is seen by later layers (not the raw input the bridge held)', async () => {
    expect(await run('replacedRawInput', { a: 'original' })).toEqual({ input: { a: 'replaced' }, seen: '{"a":"replaced"}' });
  });

  test('a chain of synchronous layers answers without a promise; an async layer gives one', () => {
    expect(run('plain', { a: 'x' })).toEqual({ got: 'x' });
    expect(run('asyncResolver', { a: 'x' })).toBeInstanceOf(Promise);
  });

  test('an answer marked reusable is output-validated once and shared frozen; a fresh answer every time', async () => {
    outputChecks = 0;
    const first = run('reusable', undefined) as typeof shared;
    const second = run('reusable', undefined) as typeof shared;
    expect(outputChecks).toBe(1);
    expect(second).toBe(first);
    expect(second).toEqual({ n: 1, inner: { list: [1, 2] } });
    expect(Object.isFrozen(first) && Object.isFrozen(first.inner) && Object.isFrozen(first.inner.list)).toBe(true);
    run('fresh', undefined);
    run('fresh', undefined);
    expect(outputChecks).toBe(3);
  });
});
