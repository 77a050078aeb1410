/**
 * For tests that run an outside tool (redocly, Spectral, openapi-typescript) on the document the app
 * serves: an app, its /openapi.json as a client reads it, and a scratch folder for the tool's files,
 * made before the file's tests and removed after them.
 */
import { afterAll, beforeAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestApp, json, type TestApp } from './app.ts';

export interface ServedDocument {
  t: TestApp;
  doc: any;
  dir: string;
}

export function servedDocument(scratchPrefix: string): ServedDocument {
  const served = {} as ServedDocument;
  beforeAll(async () => {
    served.t = await createTestApp();
    served.doc = await json(await served.t.request('/openapi.json'));
    served.dir = mkdtempSync(join(tmpdir(), scratchPrefix));
  }, 60_000);
  afterAll(async () => {
    if (served.dir) rmSync(served.dir, { recursive: true, force: true });
    await served.t?.close();
  });
  return served;
}
