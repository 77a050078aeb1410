/**
 * The Bun.serve options that decide what Bun answers by itself, before `app.handle` sees a request
 * (body size limits, uncaught errors). Kept here so every such answer is in our error shape.
 */
import type { Config } from '../config.ts';

export function serveOptions(config: Config) {
  return {
    maxRequestBodySize: config.maxBodyBytes,
  };
}
