/**
 * The raw input of a procedure call. tRPC's own caller offers it only as `getRawInput()` (a
 * promise); the REST bridge's runner (http/procedure-runner.ts) already holds it and passes it along
 * as `rawInput`, so middlewares can read it without awaiting — until a middleware replaces
 * getRawInput, after which it is RAW_INPUT_UNKNOWN and only the new function knows it.
 */
export const RAW_INPUT_UNKNOWN: unique symbol = Symbol('raw input not known');

export function rawInputOf(opts: { getRawInput: () => Promise<unknown>; rawInput?: unknown }): unknown {
  return 'rawInput' in opts && opts.rawInput !== RAW_INPUT_UNKNOWN ? opts.rawInput : opts.getRawInput();
}
