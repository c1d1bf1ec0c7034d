/**
 * The console's Edge Functions page in real headless Chromium: an empty state that says what to do,
 * a function created and deployed from the browser, its code edited in the editor and deployed
 * again, a test request as anon and as an authenticated user (the answer shown as text: the
 * function's HTML is never rendered on the console's origin), its logs, and delete behind a
 * confirmation. axe-core and the 390 px check on the page; no request leaves 127.0.0.1.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { type Browser, screenshotDir } from '../support/chromium.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { axeViolations, logLazyJs, narrowWidth, setEditorText, watchedBrowser } from './page-checks.js';

let tp: TestPlatform;
let browser: Browser;
let page: Page;
let ctx: ProjectContext;
let offHost: string[] = [];
let pageErrors: string[] = [];

async function checkPage(name: string): Promise<void> {
  const dir = screenshotDir();
  if (dir) await page.screenshot({ path: join(dir, `${name}.png`) });
  expect(await axeViolations(page), `axe on ${name}`).toEqual([]);
  expect(await narrowWidth(page, name), `${name} at 390 px wide`).toBeLessThanOrEqual(390);
}

const SOURCE = `Deno.serve(async (req) => {
  const auth = req.headers.get('authorization') ?? '';
  const claims = JSON.parse(atob(auth.slice(7).split('.')[1].replace(/-/g, '+').replace(/_/g, '/')));
  console.log('called by ' + claims.role);
  if (new URL(req.url).searchParams.has('html'))
    return new Response('<img src=x onerror="window.pwned=1">', { headers: { 'content-type': 'text/html' } });
  return Response.json({ role: claims.role, sub: claims.sub ?? null, edited: true });
});`;

beforeAll(async () => {
  ({ browser, page, offHost, pageErrors } = await watchedBrowser(30000));
  tp = await startTestPlatform();
  ctx = await tp.platform.defaultProject();
  await page.goto(tp.consoleLoginUrl(tp.platform.defaultAccessToken));
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await tp?.close();
});

describe('console: Edge Functions page', () => {
  it('says what to do when there is no function, and creates and deploys one', async () => {
    await logLazyJs(page, 'the functions page', async () => {
      await page.goto(`${tp.consoleUrl}/#/project/${ctx.ref}/functions`);
      await page.getByRole('heading', { name: 'Edge Functions' }).waitFor();
    });
    await page.getByText('No functions yet.').waitFor();
    await checkPage('functions-empty');
    const form = page.getByRole('form', { name: 'New function' });
    await form.getByLabel('Name').fill('9bad');
    await form.getByRole('button', { name: 'Create and deploy' }).click();
    await form.getByRole('alert').filter({ hasText: 'starts with a letter' }).waitFor();
    await form.getByLabel('Name').fill('greeter');
    await form.getByRole('button', { name: 'Create and deploy' }).click();
    await page.getByRole('heading', { name: 'greeter', level: 2 }).waitFor({ timeout: 60_000 });
    await page.locator('table.functions td', { hasText: 'Active' }).waitFor();
    // The deployed hello-world handler answers at its URL.
    const res = await fetch(`${tp.url}/project/${ctx.ref}/functions/v1/greeter`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ctx.anonKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Ada' }),
    });
    expect(await res.json()).toEqual({ message: 'Hello Ada!' });
  });

  it('edits the code in the editor and deploys it as a new version', async () => {
    await page.locator('.code-editor .cm-editor').waitFor();
    await expect
      .poll(() =>
        page.getByLabel('Source of supabase/functions/greeter/index.ts', { exact: true }).textContent(),
      )
      .toContain('Hello');
    await setEditorText(page, 'Source of supabase/functions/greeter/index.ts', SOURCE);
    await page.getByRole('button', { name: 'Deploy', exact: true }).click();
    await expect
      .poll(() => page.locator('.function-detail .muted').first().textContent(), { timeout: 60_000 })
      .toMatch(/Version 2/);
    const list = await (
      await fetch(`${tp.url}/v1/projects/${ctx.ref}/functions`, {
        headers: { authorization: `Bearer ${tp.platform.defaultAccessToken}` },
      })
    ).json();
    expect(list).toMatchObject([{ slug: 'greeter', version: 2 }]);
  });

  it('sends test requests as a role and shows the answer as text', async () => {
    const test = page.getByRole('form', { name: 'Test request' });
    await test.getByLabel('Send as').selectOption('authenticated');
    await test.getByLabel('User id (sub)').fill('6f1c2b0e-3a4d-4e5f-8a9b-0c1d2e3f4a5b');
    await test.getByRole('button', { name: 'Send request' }).click();
    await test.getByText('Status 200').waitFor({ timeout: 60_000 });
    await expect
      .poll(() => test.locator('.response-body pre').textContent())
      .toContain('"role": "authenticated"');
    expect(await test.locator('.response-body pre').textContent()).toContain(
      '6f1c2b0e-3a4d-4e5f-8a9b-0c1d2e3f4a5b',
    );
    // HTML from the function is shown as its text, never rendered here.
    await test.getByLabel('Method').selectOption('GET');
    await test.getByLabel('Send as').selectOption('anon');
    await test.getByLabel(/^Path after/).fill('?html');
    await test.getByRole('button', { name: 'Send request' }).click();
    await expect
      .poll(() => test.locator('.response-body pre').textContent())
      .toContain('<img src=x onerror=');
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    expect(await page.locator('.response-body img').count()).toBe(0);
    await checkPage('functions');
  });

  it('lists the logs of the calls', async () => {
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect
      .poll(async () => (await page.locator('table.logs').textContent()) ?? '', { timeout: 30_000 })
      .toContain('called by authenticated');
    expect(await page.locator('table.logs').textContent()).toMatch(/request · 200/);
  });

  it('deletes the function after a confirmation', async () => {
    page.once('dialog', (d) => void d.dismiss());
    await page.getByRole('button', { name: 'Delete function' }).click();
    await page.getByRole('heading', { name: 'greeter', level: 2 }).waitFor();
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Delete function' }).click();
    await page.getByText('No functions yet.').waitFor();
    expect(offHost).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
