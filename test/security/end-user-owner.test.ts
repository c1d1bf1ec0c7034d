/**
 * Issue 29 item 5, end user → owner, in real Chromium: the owner is signed in to the console; an end
 * user who can deploy a function, or upload to a public bucket, gets the owner to open what they
 * made (a link). Before the fix the console shared its origin with `/functions/v1/*` and public
 * objects, so the content's script read the owner's token from localStorage and called the
 * Management API as the owner. Now the console has its own origin and user content is inert.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleIsBuilt } from '../../src/console/assets.js';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { type Browser, launchChromium } from '../support/chromium.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { deployOne } from '../support/functions.js';
import {
  endUserUploads,
  exploitHtml,
  exploitSvg,
  ownerOpens,
  ownerSignsIn,
  publicUploadBucket,
  type Sink,
  startSink,
} from './end-user-owner-support.js';

let tp: TestPlatform;
let browser: Browser;
let page: Page;
let sink: Sink;
let project: ProjectContext;
const BUCKET = `avatars-${randomBytes(3).toString('hex')}`;

beforeAll(async () => {
  if (!consoleIsBuilt()) execFileSync(process.execPath, ['scripts/build-console.mjs'], { stdio: 'inherit' });
  browser = await launchChromium();
  tp = await startTestPlatform();
  sink = await startSink();
  project = await tp.platform.defaultProject();
  page = browser.context.pages()[0] ?? (await browser.context.newPage());
  await publicUploadBucket(tp, project, BUCKET);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await sink?.close();
  await tp?.close();
});

describe('end user → owner: user content cannot act as the signed-in console owner', () => {
  it('a deployed function answering text/html with a script does not run it', async () => {
    const html = JSON.stringify(exploitHtml(sink.url));
    const source = `Deno.serve(() => new Response(${html}, { headers: { 'content-type': 'text/html; charset=utf-8' } }));`;
    expect((await deployOne(tp, project.ref, 'cats', source, { verify_jwt: false })).status).toBe(201);
    await ownerSignsIn(page, tp);
    const reports = await ownerOpens(page, sink, `${tp.url}/project/${project.ref}/functions/v1/cats`, 3000);
    expect(reports).toEqual([]);
    // What the owner sees instead: the page as text.
    expect(await page.evaluate(() => document.contentType)).toBe('text/plain');
  }, 60_000);

  it('an SVG an end user uploaded to a public bucket does not run its script', async () => {
    await endUserUploads(tp, project, BUCKET, 'me.svg', exploitSvg(sink.url), 'image/svg+xml');
    await ownerSignsIn(page, tp);
    const url = `${tp.url}/project/${project.ref}/storage/v1/object/public/${BUCKET}/me.svg`;
    const reports = await ownerOpens(page, sink, url);
    expect(reports).toEqual([]);
    // Still an image for <img> and downloads: the type is kept, only scripting is off.
    const res = await fetch(url);
    expect(res.headers.get('content-type')).toBe('image/svg+xml');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toMatch(/\bsandbox\b/);
  }, 60_000);
});
