/**
 * End user → owner, the other doors (issue 29 item 5), in real Chromium: the console and the API
 * are two origins. GraphiQL at {project}/graphql/v1 (the platform's own page on the API origin,
 * which runs script) keeps working and finds no console token there; the Management API answers
 * browsers only on the console's origin: a page anywhere else (another site, the API origin by
 * another name, sandboxed user content with Origin `null`) cannot use it, even holding a token.
 */
import { execFileSync } from 'node:child_process';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleIsBuilt } from '../../src/console/assets.js';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { type Browser, launchChromium } from '../support/chromium.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { ownerSignsIn, type Sink, startSink, TOKEN_KEY } from './end-user-owner-support.js';

let tp: TestPlatform;
let browser: Browser;
let page: Page;
let sink: Sink;
let project: ProjectContext;
let token: string;
let consoleUrl: string;

beforeAll(async () => {
  if (!consoleIsBuilt()) execFileSync(process.execPath, ['scripts/build-console.mjs'], { stdio: 'inherit' });
  browser = await launchChromium();
  tp = await startTestPlatform();
  sink = await startSink();
  project = await tp.platform.defaultProject();
  consoleUrl = tp.consoleUrl as string;
  page = browser.context.pages()[0] ?? (await browser.context.newPage());
  token = await ownerSignsIn(page, tp);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await sink?.close();
  await tp?.close();
});

/** From the page now open: GET /v1/organizations on the API origin with the owner's token. */
function managementFromPage(p: Page, apiUrl: string, bearer: string): Promise<string> {
  return p.evaluate(
    async ([url, t]) => {
      try {
        const r = await fetch(`${url}/v1/organizations`, { headers: { authorization: `Bearer ${t}` } });
        return String(r.status);
      } catch (e) {
        return `blocked: ${(e as Error).name}`;
      }
    },
    [apiUrl, bearer] as const,
  );
}

describe('end user → owner: the console and the API are different origins', () => {
  it('the console is on its own origin and reaches the Management API from there', async () => {
    expect(new URL(consoleUrl).origin).not.toBe(new URL(tp.url).origin);
    expect(new URL(page.url()).origin).toBe(consoleUrl);
    expect(await managementFromPage(page, tp.url, token)).toBe('200');
  });

  it('GraphiQL on the API origin works, and that origin holds no console token', async () => {
    const gql = page.context().pages()[0] as Page;
    await gql.goto(`${tp.url}/project/${project.ref}/graphql/v1`, { waitUntil: 'load' });
    await gql.locator('.graphiql-container').first().waitFor({ timeout: 20_000 });
    expect(await gql.evaluate((key) => localStorage.getItem(key), TOKEN_KEY)).toBeNull();
    expect(
      await gql.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('strata.'))),
    ).toEqual([]);
    // Even a script there that had a token cannot use it on the Management API by another name.
    const otherName = tp.url.replace('127.0.0.1', 'localhost');
    await gql.goto(`${otherName}/project/${project.ref}/graphql/v1`, { waitUntil: 'load' });
    expect(await managementFromPage(gql, tp.url, token)).toMatch(/^blocked/);
    await gql.goto(`${consoleUrl}/`);
  }, 60_000);

  it('a page on another site cannot call the Management API, even with the token', async () => {
    const other = await page.context().newPage();
    try {
      await other.goto(`${sink.url}/page`);
      expect(await managementFromPage(other, tp.url, token)).toMatch(/^blocked/);
    } finally {
      await other.close();
    }
  }, 30_000);

  it('answers a preflight from the console origin, refuses every other Origin with 403', async () => {
    const preflight = (origin: string) =>
      fetch(`${tp.url}/v1/organizations`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      });
    const ok = await preflight(consoleUrl);
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe(consoleUrl);
    expect(ok.headers.get('access-control-allow-headers')).toMatch(/authorization/);
    for (const origin of [
      'http://evil.example',
      'null',
      tp.url,
      consoleUrl.replace('127.0.0.1', 'localhost'),
    ]) {
      const pre = await preflight(origin);
      expect(pre.status).toBe(403);
      expect(pre.headers.get('access-control-allow-origin')).toBeNull();
      const res = await fetch(`${tp.url}/v1/organizations`, {
        headers: { origin, authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(403);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(((await res.json()) as { message: string }).message).toMatch(/only from the console origin/);
    }
    // Clients that are not browsers (no Origin) are not concerned.
    expect(
      (await fetch(`${tp.url}/v1/organizations`, { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(200);
  });

  it('the console page may connect to the API origin only (CSP connect-src)', async () => {
    const csp = (await fetch(`${consoleUrl}/`)).headers.get('content-security-policy') ?? '';
    expect(/connect-src ([^;]*)/.exec(csp)?.[1]).toBe(`'self' ${tp.url} ${tp.url.replace(/^http/, 'ws')}`);
    // The console's one-time login and its files are not on the API origin.
    expect((await fetch(`${tp.url}/console/login`, { method: 'POST' })).status).toBe(404);
  });
});
