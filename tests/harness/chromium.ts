/**
 * Debian's Chromium for the browser tests (installed by .ci/run): where it is, whether it is there
 * (outside CI a missing browser skips those tests; in CI it fails them), and one way to launch it —
 * headless, no network of its own (no updates, sync or QUIC), so a page loads only what we serve.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumAvailable = existsSync(CHROMIUM);
if (!chromiumAvailable && process.env.CI) throw new Error(`Chromium not found at ${CHROMIUM}; .ci/run installs it`);

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
