/**
 * End user → owner through Storage, the variants of the class (issue 29 item 5), in real Chromium:
 * the owner, signed in to the console, opens an object an end user stored on the API origin, by
 * each door that serves its bytes (public, signed, render, `download`, after TUS or S3 uploads),
 * in each type that can script (HTML in any casing, XHTML, SVG, XML with XHTML script or an XSLT
 * stylesheet, HTML declared octet-stream, a type the uploader made up). Before the fix the SVG,
 * XHTML, XML, `Text/HTML` and rendered-SVG doors ran the script with the owner's token; now no
 * object's script runs (CSP sandbox, nosniff, HTML as text/plain) and the console is elsewhere.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleIsBuilt } from '../../src/console/assets.js';
import { withClient } from '../../src/db/pool.js';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { type Browser, launchChromium } from '../support/chromium.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { runUpload } from '../storage/tus-support.js';
import {
  endUserJwt,
  endUserUploads,
  exploitHtml,
  exploitScript,
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
let storage: string;
const BUCKET = `uploads-${randomBytes(3).toString('hex')}`;

const xhtml = (sink: string) =>
  `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body><script><![CDATA[${exploitScript(sink)}]]></script></body></html>`;
const xmlWithXhtmlScript = (sink: string) =>
  `<?xml version="1.0"?><r xmlns:h="http://www.w3.org/1999/xhtml"><h:script><![CDATA[${exploitScript(sink)}]]></h:script></r>`;
const xslt = (sink: string) =>
  `<?xml version="1.0"?><xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"><xsl:template match="/"><html><body><script>${exploitScript(sink)}</script></body></html></xsl:template></xsl:stylesheet>`;
const xmlWithStylesheet = `<?xml version="1.0"?><?xml-stylesheet type="text/xsl" href="style.xsl"?><r/>`;

beforeAll(async () => {
  if (!consoleIsBuilt()) execFileSync(process.execPath, ['scripts/build-console.mjs'], { stdio: 'inherit' });
  browser = await launchChromium();
  tp = await startTestPlatform();
  sink = await startSink();
  project = await tp.platform.defaultProject();
  storage = `${tp.url}/project/${project.ref}/storage/v1`;
  page = browser.context.pages()[0] ?? (await browser.context.newPage());
  await publicUploadBucket(tp, project, BUCKET);
  const up = (name: string, body: string, type: string) =>
    endUserUploads(tp, project, BUCKET, name, body, type);
  await up('page.html', exploitHtml(sink.url), 'Text/HTML; Charset=UTF-8');
  await up('page.xhtml', xhtml(sink.url), 'application/xhtml+xml');
  await up('data.xml', xmlWithXhtmlScript(sink.url), 'text/xml');
  await up('style.xsl', xslt(sink.url), 'text/xsl');
  await up('styled.xml', xmlWithStylesheet, 'application/xml');
  await up('blob.bin', exploitHtml(sink.url), 'application/octet-stream');
  await up('made-up.x', exploitHtml(sink.url), 'x-evil/html+xml');
  await up('pic.svg', exploitSvg(sink.url), 'image/svg+xml; charset=utf-8');
  await ownerSignsIn(page, tp);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await sink?.close();
  await tp?.close();
});

const publicUrl = (name: string) => `${storage}/object/public/${BUCKET}/${name}`;

describe('end user → owner: no stored object runs script on the API origin', () => {
  it.each([
    ['HTML declared Text/HTML (casing)', 'page.html'],
    ['XHTML', 'page.xhtml'],
    ['XML with an XHTML script element', 'data.xml'],
    ['XML with an xml-stylesheet (XSLT)', 'styled.xml'],
    ['HTML declared application/octet-stream', 'blob.bin'],
    ['a content type the uploader made up', 'made-up.x'],
    ['SVG (with a charset)', 'pic.svg'],
  ])(
    '%s, public URL',
    async (_what, name) => {
      expect(await ownerOpens(page, sink, publicUrl(name))).toEqual([]);
      const res = await fetch(publicUrl(name));
      expect(res.status).toBe(200);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toBe('sandbox');
      await res.body?.cancel();
    },
    30_000,
  );

  it('HTML in any casing is sent as text/plain (as upstream does for text/html)', async () => {
    const res = await fetch(publicUrl('page.html'));
    expect(res.headers.get('content-type')).toBe('text/plain');
    await res.body?.cancel();
  });

  it('an SVG through a signed URL', async () => {
    const res = await fetch(`${storage}/object/sign/${BUCKET}/pic.svg`, {
      method: 'POST',
      headers: {
        apikey: project.serviceRoleKey,
        authorization: `Bearer ${project.serviceRoleKey}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ expiresIn: 600 }),
    });
    const { signedURL } = (await res.json()) as { signedURL: string };
    expect(await ownerOpens(page, sink, `${storage}${signedURL}`)).toEqual([]);
  }, 30_000);

  it('an SVG through the render (transform) URL, which passes SVG through', async () => {
    const url = `${storage}/render/image/public/${BUCKET}/pic.svg?width=20`;
    expect(await ownerOpens(page, sink, url)).toEqual([]);
    const res = await fetch(url);
    expect(res.headers.get('content-security-policy')).toBe('sandbox');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    await res.body?.cancel();
  }, 30_000);

  it('an SVG with ?download', async () => {
    expect(await ownerOpens(page, sink, `${publicUrl('pic.svg')}?download`)).toEqual([]);
    expect(await ownerOpens(page, sink, `${publicUrl('pic.svg')}?download=x.svg`)).toEqual([]);
  }, 30_000);

  it('an SVG uploaded by TUS (resumable), read by REST', async () => {
    const jwt = await endUserJwt(project);
    const out = await runUpload(Buffer.from(exploitSvg(sink.url)), {
      endpoint: `${storage}/upload/resumable`,
      headers: { authorization: `Bearer ${jwt}`, apikey: project.anonKey },
      metadata: { bucketName: BUCKET, objectName: 'tus.svg', contentType: 'image/svg+xml' },
    });
    expect(out.error).toBeUndefined();
    expect(await ownerOpens(page, sink, publicUrl('tus.svg'))).toEqual([]);
  }, 30_000);

  it('an SVG uploaded by the S3 protocol (as the end user, session token), read by REST and by a presigned GetObject', async () => {
    // S3 PutObject overwrites: the bucket's policies let users read and update there too.
    await withClient(project.superuserUrl, async (c) => {
      for (const op of ['select', 'update'])
        await c.query(
          `create policy "s3 ${op} ${BUCKET}" on storage.objects for ${op} to authenticated using (bucket_id = '${BUCKET}')`,
        );
    });
    const s3 = new S3Client({
      // The default project at the bare address (as h.base in test/support/storage.ts).
      endpoint: `${tp.url}/storage/v1/s3`,
      region: 'local',
      forcePathStyle: true,
      credentials: {
        accessKeyId: project.ref,
        secretAccessKey: project.ref,
        sessionToken: await endUserJwt(project),
      },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 1,
    });
    let presigned: string;
    try {
      await s3.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: 's3.svg',
          Body: exploitSvg(sink.url),
          ContentType: 'image/svg+xml',
        }),
      );
      // The S3 GetObject door too: a presigned URL the end user hands out.
      presigned = await getSignedUrl(s3, new GetObjectCommand({ Bucket: BUCKET, Key: 's3.svg' }), {
        expiresIn: 600,
      });
    } finally {
      s3.destroy();
    }
    expect(await ownerOpens(page, sink, publicUrl('s3.svg'))).toEqual([]);
    const direct = await fetch(presigned);
    expect(direct.status).toBe(200);
    expect(direct.headers.get('content-security-policy')).toBe('sandbox');
    await direct.body?.cancel();
    expect(await ownerOpens(page, sink, presigned)).toEqual([]);
  }, 30_000);
});
