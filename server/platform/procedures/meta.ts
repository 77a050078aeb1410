/**
 * A procedure's documentation meta (who may call it, how it is billed, its REST status…), part of its
 * definition (definition.ts) and given to tRPC by trpc.ts. Its own file, below both, so the
 * definition does not import the tRPC set-up (which records routers in catalog.ts, which reads
 * definitions: that was a cycle).
 */
import type { OpenApiMeta } from 'trpc-to-openapi';

/** Who may call a procedure; set once by the base procedures, read by the docs and the security tests. */
export type Access = 'public' | 'key' | 'user' | 'dashboard' | 'session';

export type RouteMeta = OpenApiMeta<{
  access?: Access;
  /** Billed at the standard rate or at the private-company (premium) rate. */
  billing?: 'standard' | 'premium';
  /** Accepts an Idempotency-Key header (buy, sell). */
  idempotent?: boolean;
  /** A dashboard route that creates the x-account-id account when it does not exist (POST /keys). */
  createsAccount?: boolean;
  /** Also takes a signed-in customer's session cookie in place of the key, for their own account; billed where a key is (docs/decisions.md §4). */
  session?: boolean;
  /** HTTP status of a successful REST call (default 200). */
  successStatus?: number;
}>;
