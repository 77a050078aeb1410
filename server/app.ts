/**
 * The composition: the platform's request pipeline (platform/app.ts) serving this API's procedures
 * (routers/) and describing the webhooks it sends. The only module below the entry points that knows
 * both; the platform imports no router, and the routers import no part of the pipeline but the
 * procedure definitions (docs/contributing.md "Layout").
 */
import { appRouter } from '../routers/index.ts';
import { describeWebhooks } from '../routers/webhook-payloads.ts';
import { createApp as createPlatformApp, type App } from './platform/app.ts';
import type { Services } from './platform/services.ts';

export type { App, HandleOptions } from './platform/app.ts';

export function createApp(services: Services): App {
  return createPlatformApp(services, { router: appRouter, describeWebhooks });
}
