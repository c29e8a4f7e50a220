import { accessSync, constants } from 'node:fs';
import * as path from 'node:path';
import type { Browser } from 'puppeteer-core';

/** Set by the suite's Jest environment (`browser-environment.js`): puppeteer-core, loaded by Node itself. */
declare const loadPuppeteer: () => typeof import('puppeteer-core');

/** The headless flags a root user in a container needs (no user namespaces, a small /dev/shm). */
export const CHROMIUM_ARGS = Object.freeze(['--no-sandbox', '--headless=new', '--disable-dev-shm-usage']);

/**
 * Debian's `chromium` (or `CHROMIUM_PATH`): the browser puppeteer-core drives, as it downloads none.
 * `scripts/install-chromium.sh` installs it.
 */
export function chromiumExecutable(): string {
  const given = process.env.CHROMIUM_PATH;
  if (given) return given;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    for (const name of ['chromium', 'chromium-browser']) {
      const candidate = path.join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not in this directory
      }
    }
  }
  throw new Error('chromium not found on PATH (run scripts/install-chromium.sh, or set CHROMIUM_PATH)');
}

/** A headless Chromium with a 1400×1000 window. */
export function launchChromium(): Promise<Browser> {
  return loadPuppeteer().default.launch({
    executablePath: chromiumExecutable(),
    headless: true,
    args: [...CHROMIUM_ARGS, '--window-size=1400,1000'],
    defaultViewport: { width: 1400, height: 1000 },
  });
}
