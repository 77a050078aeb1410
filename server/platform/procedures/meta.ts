/**
 * A procedure's documentation meta (who may call it, how it is billed, its REST status…), part of its
 * definition (definition.ts) and given to tRPC by trpc.ts. Its own file, below both, so the
 * definition does not import the tRPC set-up (which records routers in catalog.ts, which reads
 * definitions: that was a cycle).
 */
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { Scope } from '../../accounts/scopes.ts';
import type { RequestContext } from './context.ts';

/** Who may call a procedure; set once by the base procedures, read by the docs and the security tests. */
export type Access = 'public' | 'key' | 'user' | 'dashboard' | 'session';

/**
 * How many requests of its tier a billed call costs, stated from its checked input before the
 * handler runs: for a route whose answer grows with its input (the company export, per started
 * thousand rows). A whole number, at least 1. Called once the call's first request is reserved, so
 * only a caller who can pay for one gets the counting done; the rest are then reserved one by one,
 * all or nothing (procedures/access.ts, reserveUnits).
 */
export type Units = (call: { ctx: RequestContext; input: unknown }) => Promise<number>;

export type RouteMeta = OpenApiMeta<{
  access?: Access;
  /** Billed at the standard rate or at the private-company (premium) rate. */
  billing?: 'standard' | 'premium';
  /** A billed key route whose call costs several requests of its tier, by its input (see Units); one when absent. */
  units?: Units;
  /**
   * The scope a key needs to call this billed key route (server/accounts/scopes.ts). Set by the
   * builder from the route's price and kind when the definition names none; every billed key route
   * ends with one (the builder refuses one without).
   */
  scope?: Scope;
  /** Accepts an Idempotency-Key header (buy, sell). */
  idempotent?: boolean;
  /** A dashboard route that creates the x-account-id account when it does not exist (POST /keys). */
  createsAccount?: boolean;
  /** false: not offered as an MCP tool (platform/mcp/tools.ts), e.g. wallet sign-in, which a browser does. */
  mcp?: false;
  /** Also takes a signed-in customer's session cookie in place of the key, for their own account; billed where a key is (docs/decisions.md §4). */
  session?: boolean;
  /** HTTP status of a successful REST call (default 200). */
  successStatus?: number;
  /**
   * The answer is a file streamed as it is produced (procedures/streamed-file.ts), of one of these
   * media types, each with what it holds: /openapi.json documents them as the success's content.
   */
  files?: Record<string, string>;
}>;
