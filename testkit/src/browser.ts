// A real headless Chromium for browser tests, the machine's own (Debian's `chromium` package): nothing is downloaded.
// With CI=true a missing browser is a failure, never a silent skip.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
export const BROWSER_INSTALL_HINT = 'install it with `apt-get install -y chromium` or set CHROMIUM_PATH';

/** The browser to use, or undefined (with the reason printed) when none is found and CI is not set. */
export function findChromium(): string | undefined {
  const path = [process.env['CHROMIUM_PATH'], ...CANDIDATES].find((candidate) => candidate && existsSync(candidate));
  if (path) return path;
  const message = `no Chromium found at ${CANDIDATES.join(', ')}: ${BROWSER_INSTALL_HINT}`;
  if (process.env['CI'] === 'true') throw new Error(message);
  console.warn(`skipping browser tests: ${message}`);
  return undefined;
}

export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Whether a URL a page asks for stays on this machine (inline data and blobs included). */
export function isLocal(url: string): boolean {
  const parsed = new URL(url);
  return parsed.protocol === 'data:' || parsed.protocol === 'blob:' || LOOPBACK.has(parsed.hostname);
}
