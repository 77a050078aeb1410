/**
 * The Bun.serve options that decide what Bun answers by itself, before `app.handle` sees a request
 * (body size limits, uncaught errors). Kept here so every such answer is in our error shape.
 *
 * Body size: Bun answers a body over its own `maxRequestBodySize` with an empty 413 before our code
 * runs (with Content-Length) or when the body is read (chunked). So Bun's limit is set out of reach,
 * and MAX_BODY_BYTES is enforced by the app: a declared Content-Length over it is refused for every
 * path (app.ts), and a chunked body is read only up to it (http/body-reader.ts). Bun closes the
 * connection after a refused body it did not read. A route that never reads its body (GET /healthz)
 * answers as usual; Bun discards the body without buffering it.
 */
import { publicErrorOf } from '../procedures/trpc-errors.ts';
import type { Config } from '../../config.ts';

import { newId } from '../../lib/ids.ts';
import { createLogger } from '../../lib/logger.ts';
import { errorMessage } from '../../lib/error-message.ts';

/** Larger than any Content-Length a client can send: Bun never answers for us. */
const UNREACHABLE_BODY_SIZE = Number.MAX_SAFE_INTEGER;

export function serveOptions(config: Config) {
  const logger = createLogger(config.logLevel);
  return {
    maxRequestBodySize: UNREACHABLE_BODY_SIZE,
    /** What Bun answers when the fetch handler throws (app.handle does not): our 500, never a stack. */
    error(error: Error): Response {
      const body = publicErrorOf(error, newId('req'));
      logger.error('request failed outside the app', { requestId: body.requestId, error: errorMessage(error) });
      return Response.json(body, { status: body.status, headers: { 'X-Request-Id': body.requestId } });
    },
  };
}
