import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { toPublicError } from '../errors.ts';
import type { RequestContext } from './context.ts';

/** Who may call a procedure; set once by the base procedures, read by the docs and the security tests. */
export type Access = 'public' | 'key' | 'user' | 'dashboard';

export type RouteMeta = OpenApiMeta<{
  access?: Access;
  /** Billed at the standard rate or at the private-company (premium) rate. */
  billing?: 'standard' | 'premium';
  /** Accepts an Idempotency-Key header (buy, sell). */
  idempotent?: boolean;
  /** HTTP status of a successful REST call (default 200). */
  successStatus?: number;
}>;

export const t = initTRPC
  .context<RequestContext>()
  .meta<RouteMeta>()
  .create({
    // The same four public fields as REST, inside tRPC's error `data` (decisions §2). No stack traces.
    errorFormatter({ shape, error, ctx }) {
      const api = toPublicError(error, ctx?.requestId ?? 'unknown');
      return {
        message: api.message,
        code: shape.code,
        data: { code: api.code, httpStatus: api.status, path: shape.data.path, api },
      };
    },
  });

export const router = t.router;
export const middleware = t.middleware;
export const createCallerFactory = t.createCallerFactory;
