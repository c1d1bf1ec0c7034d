/**
 * The Chromium the browser tests drive (playwright-core downloads none): STRATA_CHROMIUM, else a
 * system Chromium (Debian's `chromium` package, which .ci/run installs), else the Chromium shipped
 * inside the npm package `@sparticuz/chromium` (a dev dependency: `npm ci` brings it, so `npm test`
 * needs nothing but Node and npm; its binary is unpacked to the temporary folder on first use).
 * Only its binary is used, with the flags below (not the package's Lambda flags, which turn off web
 * security that the origin tests rely on).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

const SYSTEM_CHROMIUMS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

export const NO_CHROMIUM_MESSAGE = `No Chromium found for the browser tests (test/console, test/security).
The npm package @sparticuz/chromium (a dev dependency) should provide one: run \`npm ci\`. Or install one —
Debian/Ubuntu: \`sudo apt-get install -y chromium\` — or set STRATA_CHROMIUM to the path of a Chromium or
Chrome binary, then run \`npm test\` again.`;

export async function chromiumPath(): Promise<string> {
  const fromEnv = process.env.STRATA_CHROMIUM;
  if (fromEnv) {
    if (!existsSync(fromEnv))
      throw new Error(`STRATA_CHROMIUM=${fromEnv} does not exist.\n${NO_CHROMIUM_MESSAGE}`);
    return fromEnv;
  }
  const found = SYSTEM_CHROMIUMS.find((p) => existsSync(p));
  if (found) return found;
  try {
    const { default: packaged } = await import('@sparticuz/chromium');
    return await packaged.executablePath();
  } catch (err) {
    throw new Error(`${NO_CHROMIUM_MESSAGE}\n(@sparticuz/chromium: ${(err as Error).message})`);
  }
}

/** Where the console tests write their screenshots, when asked to (STRATA_CONSOLE_SCREENSHOTS=dir). */
export function screenshotDir(): string | undefined {
  return process.env.STRATA_CONSOLE_SCREENSHOTS || undefined;
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile, no network of its own (no updates, sync, QUIC). */
export async function launchChromium(): Promise<Browser> {
  const executablePath = await chromiumPath();
  const profile = mkdtempSync(join(tmpdir(), 'strata-chromium-'));
  const context = await chromium
    .launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      viewport: { width: 1280, height: 800 },
      acceptDownloads: true,
      permissions: ['clipboard-read', 'clipboard-write'],
    })
    .catch((err: unknown) => {
      rmSync(profile, { recursive: true, force: true });
      throw err;
    });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
