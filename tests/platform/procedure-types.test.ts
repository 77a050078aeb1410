/**
 * The base procedures' type offers only what their builder does (server/platform/procedures/builder-type.ts):
 * tRPC's `.use()` and the rest must not type-check, since they would fail at load. The fixture marks
 * each such call `@ts-expect-error`, so tsc fails the moment one type-checks again; the run-time half
 * checks the builder really has the steps the type offers, and none of the others.
 */
import { expect, test } from 'bun:test';
import * as base from '../../server/platform/procedures/base.ts';

const REPOSITORY = new URL('../..', import.meta.url).pathname;
const STEPS = ['meta', 'input', 'output', 'query', 'mutation', 'subscription'];
const TRPC_ONLY = ['use', 'concat', 'unstable_concat', 'errors', 'experimental_caller', '_def'];

test('tsc rejects every misuse in the fixture, and accepts what routers write', () => {
  const tsc = Bun.spawnSync([`${REPOSITORY}node_modules/.bin/tsc`, '-p', 'tests/fixtures/procedure-types'], { cwd: REPOSITORY });
  expect(`${tsc.stdout}${tsc.stderr}`).toBe('');
  expect(tsc.exitCode).toBe(0);
}, 120_000);

test('each base procedure has the steps its type offers, and none of tRPC\'s others', () => {
  const procedures = Object.entries(base);
  expect(procedures.length).toBeGreaterThan(5);
  for (const [name, procedure] of procedures) {
    for (const step of STEPS) expect(`${name}.${step}: ${typeof (procedure as any)[step]}`).toBe(`${name}.${step}: function`);
    for (const method of TRPC_ONLY) expect(`${name}.${method}: ${method in procedure}`).toBe(`${name}.${method}: false`);
  }
});
