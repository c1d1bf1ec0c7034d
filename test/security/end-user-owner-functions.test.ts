/**
 * End user → owner through Edge Functions, the variants of the class (issue 29 item 5), in real
 * Chromium: a function someone deployed answers, on the API origin, with a document that can
 * script: HTML in other casings and charsets, XHTML, SVG, XML, HTML with no content type (sniffed),
 * declared octet-stream or a made-up type, with a CSP of its own that allows scripts, or a redirect
 * to `javascript:`/`data:`. None runs (as on the hosted default domain, scriptable types are sent
 * as text/plain; every answer gets nosniff and CSP sandbox), and the console is on another origin.
 */
import { execFileSync } from 'node:child_process';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleIsBuilt } from '../../src/console/assets.js';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { type Browser, launchChromium } from '../support/chromium.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { deployOne } from '../support/functions.js';
import {
  exploitHtml,
  exploitScript,
  exploitSvg,
  ownerOpens,
  ownerSignsIn,
  type Sink,
  startSink,
} from './end-user-owner-support.js';

let tp: TestPlatform;
let browser: Browser;
let page: Page;
let sink: Sink;
let project: ProjectContext;
let fn: string;

/** `?b=` the body, `?ct=` its content type (none when absent), `?csp=` its own CSP, `?loc=` a redirect. */
function source(sink: string): string {
  const bodies = {
    html: exploitHtml(sink),
    svg: exploitSvg(sink),
    xhtml: `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body><script><![CDATA[${exploitScript(sink)}]]></script></body></html>`,
    xml: `<?xml version="1.0"?><r xmlns:h="http://www.w3.org/1999/xhtml"><h:script><![CDATA[${exploitScript(sink)}]]></h:script></r>`,
  };
  return `const BODIES = ${JSON.stringify(bodies)};
Deno.serve((req) => {
  const u = new URL(req.url);
  const loc = u.searchParams.get('loc');
  if (loc !== null) return new Response(null, { status: 302, headers: { location: loc } });
  const headers = new Headers();
  const ct = u.searchParams.get('ct');
  if (ct !== null) headers.set('content-type', ct);
  const csp = u.searchParams.get('csp');
  if (csp !== null) headers.set('content-security-policy', csp);
  // Bytes, so that Deno adds no content type of its own.
  return new Response(new TextEncoder().encode(BODIES[u.searchParams.get('b') ?? 'html']), { headers });
});`;
}

beforeAll(async () => {
  if (!consoleIsBuilt()) execFileSync(process.execPath, ['scripts/build-console.mjs'], { stdio: 'inherit' });
  browser = await launchChromium();
  tp = await startTestPlatform();
  sink = await startSink();
  project = await tp.platform.defaultProject();
  page = browser.context.pages()[0] ?? (await browser.context.newPage());
  const deployed = await deployOne(tp, project.ref, 'pages', source(sink.url), { verify_jwt: false });
  expect(deployed.status).toBe(201);
  fn = `${tp.url}/project/${project.ref}/functions/v1/pages`;
  await ownerSignsIn(page, tp);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await sink?.close();
  await tp?.close();
});

const q = (params: Record<string, string>) => `${fn}?${new URLSearchParams(params)}`;

describe('end user → owner: no function answer runs script on the API origin', () => {
  it.each([
    [
      'HTML, TEXT/HTML;CHARSET=UTF-8',
      { b: 'html', ct: 'TEXT/HTML;CHARSET=UTF-8' },
      'TEXT/plain;CHARSET=UTF-8',
    ],
    ['HTML, Text/Html; charset="iso-8859-1"', { b: 'html', ct: 'Text/Html; charset="iso-8859-1"' }, null],
    ['XHTML', { b: 'xhtml', ct: 'application/xhtml+xml' }, 'text/plain'],
    ['SVG', { b: 'svg', ct: 'image/svg+xml' }, 'text/plain'],
    ['XML with an XHTML script', { b: 'xml', ct: 'text/xml; charset=utf-8' }, 'text/plain; charset=utf-8'],
    ['XML as application/xml', { b: 'xml', ct: 'application/xml' }, 'text/plain'],
    ['HTML with no content type (sniffed)', { b: 'html' }, null],
    ['HTML declared application/octet-stream', { b: 'html', ct: 'application/octet-stream' }, null],
    ['HTML with a made-up type', { b: 'html', ct: 'x-evil/thing' }, null],
    [
      'HTML with a CSP of its own allowing scripts',
      { b: 'html', ct: 'text/html', csp: "script-src * 'unsafe-inline'" },
      'text/plain',
    ],
  ])(
    '%s',
    async (_what, params, type) => {
      expect(await ownerOpens(page, sink, q(params))).toEqual([]);
      const res = await fetch(q(params));
      expect(res.status).toBe(200);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toMatch(/(^|, )sandbox$/);
      if (type)
        expect(res.headers.get('content-type')?.replace(/^text\/plain/i, 'text/plain')).toBe(
          type.replace(/^TEXT\/plain/, 'text/plain'),
        );
      await res.body?.cancel();
    },
    30_000,
  );

  it('keeps the types that cannot script as they are (JSON, plain text, images)', async () => {
    for (const ct of ['application/json', 'text/plain; charset=utf-8', 'image/png', 'text/event-stream']) {
      const res = await fetch(q({ b: 'html', ct }));
      expect(res.headers.get('content-type')).toBe(ct);
      await res.body?.cancel();
    }
  });

  it('a redirect to javascript: or data: is not followed into script', async () => {
    const js = `javascript:${exploitScript(sink.url)}`;
    for (const loc of [
      js,
      ` JavaScript:${exploitScript(sink.url)}`,
      `data:text/html,<script>${exploitScript(sink.url)}</script>`,
    ]) {
      expect(await ownerOpens(page, sink, q({ loc }))).toEqual([]);
      const res = await fetch(q({ loc }), { redirect: 'manual' });
      expect(res.headers.get('location')).toBeNull();
    }
    // Ordinary redirects (an OAuth callback, an app's own scheme) are left alone.
    for (const loc of ['https://example.com/cb?x=1', '/relative', 'myapp://callback']) {
      const res = await fetch(q({ loc }), { redirect: 'manual' });
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe(loc);
    }
  }, 60_000);
});
