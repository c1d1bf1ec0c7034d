/**
 * Checks the console's browser test runs on every page it visits: axe-core (the npm package's
 * source, evaluated in the page through the DevTools protocol, so the page's CSP still forbids
 * inline script) must find no serious or critical violation, and at 390 px wide the page must not
 * scroll sideways (document.documentElement.scrollWidth <= 390). Screenshots of the narrow layout
 * are saved beside the others when STRATA_CONSOLE_SCREENSHOTS is set.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Page, Response } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { consoleIsBuilt } from '../../src/console/assets.js';
import { type Browser, launchChromium, screenshotDir } from '../support/chromium.js';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export const NARROW = { width: 390, height: 844 };
export const WIDE = { width: 1280, height: 800 };

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/** Serious or critical axe-core violations on the page as it is now, in words. */
export async function axeViolations(page: Page): Promise<string[]> {
  const loaded = await page.evaluate(() => 'axe' in window);
  if (!loaded) await page.evaluate(`${axeSource};0`);
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<unknown> } }).axe;
    // GraphiQL's own editors (CodeMirror 5 inside the graphiql package) are left out: their unlabelled
    // textareas are the package's, not the console's. The page around them is checked.
    const context = document.querySelector('.graphiql-host') ? { exclude: [['.graphiql-host']] } : document;
    const r = (await axe.run(context, { resultTypes: ['violations'] })) as {
      violations: {
        id: string;
        impact: string | null;
        help: string;
        nodes: { target: string[]; failureSummary?: string }[];
      }[];
    };
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes
        .slice(0, 3)
        .map((n) => `${n.target.join(' ')} ${(n as { failureSummary?: string }).failureSummary ?? ''}`),
    }));
  });
  return (found as Violation[])
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id} (${v.help}): ${v.targets.join(', ')}`);
}

/** How wide the page is at 390 px (its scrollWidth); a narrow screenshot `<name>-narrow.png` when asked. */
export async function narrowWidth(page: Page, name: string): Promise<number> {
  await page.setViewportSize(NARROW);
  try {
    // Let layout settle (media queries, virtualized lists measuring themselves).
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    const dir = screenshotDir();
    if (dir) await page.screenshot({ path: join(dir, `${name}-narrow.png`), fullPage: true });
    return width;
  } finally {
    await page.setViewportSize(WIDE);
  }
}

/**
 * Replaces the SQL editor's text the way a keyboard does: select all, delete, then insert. (Playwright's
 * fill() replaces the highlighted text in one edit, and Chromium then keeps the old tokens' colours
 * as inline style on the new text, which the page's CSP refuses, and reports.)
 */
export async function setSql(page: Page, text: string): Promise<void> {
  await setEditorText(page, 'SQL', text);
}

/** The same for any of the console's code editors, found by its label. */
export async function setEditorText(page: Page, label: string, text: string): Promise<void> {
  const editor = page.getByLabel(label, { exact: true });
  await editor.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

/** Runs `action` and logs the JS it made the page load (a lazily loaded editor's chunks). */
export async function logLazyJs(page: Page, what: string, action: () => Promise<void>): Promise<void> {
  const sizes: number[] = [];
  const onResponse = async (r: Response) => {
    if (r.url().endsWith('.js')) sizes.push((await r.body()).length);
  };
  page.on('response', onResponse);
  await action();
  page.off('response', onResponse);
  const kb = sizes.reduce((a, b) => a + b, 0) / 1024;
  console.log(`console budget: ${what} loads ${kb.toFixed(0)} KiB of JS in ${sizes.length} files`);
}

export interface WatchedBrowser {
  browser: Browser;
  page: Page;
  /** Requests to a host other than 127.0.0.1/localhost: refused, and listed here. */
  offHost: string[];
  /** Uncaught page errors and CSP refusals. */
  pageErrors: string[];
}

/**
 * The console bundle (built when missing), then Chromium with one page whose requests may not
 * leave the machine and whose errors are kept. Launched first: a machine without Chromium fails at
 * once, saying what to install.
 */
export async function watchedBrowser(timeoutMs: number): Promise<WatchedBrowser> {
  if (!consoleIsBuilt()) execFileSync(process.execPath, ['scripts/build-console.mjs'], { stdio: 'inherit' });
  const browser = await launchChromium();
  const offHost: string[] = [];
  const pageErrors: string[] = [];
  await browser.context.route('**/*', (route) => {
    const { hostname } = new URL(route.request().url());
    if (hostname === '127.0.0.1' || hostname === 'localhost') return route.continue();
    offHost.push(route.request().url());
    return route.abort('blockedbyclient');
  });
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  page.setDefaultTimeout(timeoutMs);
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text()))
      pageErrors.push(m.text().slice(0, 300));
  });
  return { browser, page, offHost, pageErrors };
}
