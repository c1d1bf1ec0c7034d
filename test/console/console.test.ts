/**
 * The web console in real headless Chromium (playwright-core), one browser for the whole walk:
 * sign in, create a project, copy its anon key, SQL, GraphiQL, table editor, storage (bucket,
 * upload with progress, byte-exact download), settings, delete the project. Any request to a host
 * other than 127.0.0.1/localhost fails the run. STRATA_CONSOLE_SCREENSHOTS=<dir> saves a screenshot
 * of each page there (scripts/console-screenshots.mjs writes docs/console/ that way).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import pg from 'pg';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, screenshotDir } from '../support/chromium.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { addMember, createToken } from '../../src/management/organizations/members.js';
import { axeViolations, logLazyJs, narrowWidth, setSql, watchedBrowser } from './page-checks.js';

let tp: TestPlatform;
let browser: Browser;
let page: Page;
let token: string;
/** The console's own origin (the APIs, tp.url, are on another port). */
let consoleUrl: string;
let offHost: string[] = [];
let pageErrors: string[] = [];
let projectRef = '';
const PROJECT = `console-${randomBytes(3).toString('hex')}`;

async function shot(name: string): Promise<void> {
  const dir = screenshotDir();
  if (dir) await page.screenshot({ path: join(dir, `${name}.png`) });
}

async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const res = await fetch(`${tp.url}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, json: (await res.json().catch(() => undefined)) as T };
}

/** Every page the walk visits: no serious/critical axe-core violation, no sideways scroll at 390 px. */
async function checkPage(name: string): Promise<void> {
  expect(await axeViolations(page), `axe on ${name}`).toEqual([]);
  expect(await narrowWidth(page, name), `${name} at 390 px wide`).toBeLessThanOrEqual(390);
}

const tab = (name: string) => page.locator('.side nav a', { hasText: name });

beforeAll(async () => {
  ({ browser, page, offHost, pageErrors } = await watchedBrowser(15000));
  tp = await startTestPlatform();
  token = tp.platform.defaultAccessToken;
  consoleUrl = tp.consoleUrl as string;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await tp?.close();
});

describe('web console', () => {
  it('serves its page with a strict CSP and cacheable hashed assets', async () => {
    const res = await fetch(`${consoleUrl}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'self'/);
    // It connects to the API origin, and nowhere else.
    expect(res.headers.get('content-security-policy')).toContain(
      `connect-src 'self' ${tp.url} ${tp.url.replace(/^http/, 'ws')};`,
    );
    expect(consoleUrl).not.toBe(tp.url);
    // The API origin's own address leads to the console; the console's files are not there.
    const old = await fetch(`${tp.url}/`, { redirect: 'manual' });
    expect(old.status).toBe(302);
    expect(old.headers.get('location')).toBe(`${consoleUrl}/`);
    expect((await fetch(`${tp.url}/console/login`, { method: 'POST' })).status).toBe(404);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const html = await res.text();
    const js = /src="(\/console\/assets\/main-[A-Z0-9]+\.js)"/.exec(html)?.[1];
    expect(js).toBeDefined();
    const asset = await fetch(`${consoleUrl}${js}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await fetch(`${consoleUrl}/console/assets/nope-AAAAAAAA.js`)).status).toBe(404);
  });

  it('refuses a wrong token on the sign-in page, then signs in through a one-time link', async () => {
    await page.goto(`${consoleUrl}/`);
    await page.getByLabel('Access token').fill('sbp_0000000000000000000000000000000000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/Unknown or revoked/);
    await shot('sign-in');
    await checkPage('sign-in');

    const link = tp.consoleLoginUrl(token);
    expect(link).not.toContain(token);
    await page.goto(link);
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    expect(page.url()).not.toContain('login=');
    // The link worked once: the same one-time token is refused now.
    const oneTime = new URL(link).hash.replace('#login=', '');
    const again = await fetch(`${consoleUrl}/console/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: oneTime }),
    });
    expect(again.status).toBe(401);
    expect(((await again.json()) as { message: string }).message).toMatch(/already used or has expired/);
  });

  it('measures first load (JS bytes, first paint) for the report', async () => {
    const sizes: number[] = [];
    const onResponse = async (r: import('playwright-core').Response) => {
      if (r.url().endsWith('.js')) sizes.push((await r.body()).length);
    };
    page.on('response', onResponse);
    await page.goto(`${consoleUrl}/?measure#/`);
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    page.off('response', onResponse);
    const paint = await page.evaluate(
      () => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1,
    );
    const kb = sizes.reduce((a, b) => a + b, 0) / 1024;
    console.log(
      `console budget: first load ${kb.toFixed(0)} KiB of JS in ${sizes.length} files, first paint ${paint.toFixed(0)} ms`,
    );
    await shot('projects');
    await checkPage('projects');
  });

  it('shows a create error next to the form and creates nothing', async () => {
    const before = (await api<unknown[]>('GET', '/projects')).json.length;
    // The create form is folded away until asked for.
    expect(await page.getByLabel('Database password').isVisible()).toBe(false);
    await page.locator('summary', { hasText: 'New project' }).click();
    await page.getByLabel('Name', { exact: true }).fill('');
    await page.getByLabel('Database password').fill('x');
    await page.getByRole('button', { name: 'Create project' }).click();
    await expect.poll(() => page.locator('.card [role=alert]').textContent()).toMatch(/name/i);
    expect((await api<unknown[]>('GET', '/projects')).json.length).toBe(before);
  });

  it('creates an organization (the API error shown next to the field first)', async () => {
    const form = page.locator('[data-form=organization]');
    await form.locator('summary').click();
    await form.getByRole('button', { name: 'Create organization' }).click();
    await expect.poll(() => form.locator('[role=alert]').textContent()).toMatch(/name/i);
    const orgName = `Console org ${Date.now()}`;
    await form.getByLabel('Organization name').fill(orgName);
    await form.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: orgName }).waitFor();
    // An empty organization says what to do, and its button opens the form with it chosen.
    const orgSection = page.locator('section.org', { has: page.getByRole('heading', { name: orgName }) });
    await orgSection.getByText('No projects in this organization yet.').waitFor();
    await orgSection.getByRole('button', { name: `Create a project in ${orgName}` }).click();
    expect(await page.locator('select[name=organization] option:checked').textContent()).toBe(orgName);
    expect(await page.getByLabel('Region').getAttribute('placeholder')).toBe('local');
    await page.locator('select[name=organization]').selectOption({ index: 0 });
    const orgs = (await api<{ name: string }[]>('GET', '/organizations')).json;
    expect(orgs.map((o) => o.name)).toContain(orgName);
  });

  it('creates a project and shows its URLs, keys and connection strings', async () => {
    await page.getByLabel('Name', { exact: true }).fill(PROJECT);
    await page.getByLabel('Database password').fill('a-strong-db-password-1');
    await page.getByRole('button', { name: 'Create project' }).click();
    const created = page.getByRole('heading', { name: 'API keys' });
    const failed = page.locator('.card [role=alert]');
    await created.or(failed).first().waitFor({ timeout: 60_000 });
    expect(await failed.count(), (await failed.allTextContents()).join()).toBe(0);
    projectRef = /#\/project\/([a-z]{20})/.exec(page.url())?.[1] ?? '';
    expect(projectRef).toMatch(/^[a-z]{20}$/);
    const keys = (await api<{ name: string; api_key: string }[]>('GET', `/projects/${projectRef}/api-keys`))
      .json;
    const anon = keys.find((k) => k.name === 'anon')?.api_key;
    const service = keys.find((k) => k.name === 'service_role')?.api_key ?? '';
    // service_role stays hidden until revealed.
    const serviceRow = page.locator('.copy-value[data-label="service_role"] .copy-text');
    expect(await serviceRow.textContent()).not.toContain(service.slice(0, 20));
    await page.getByRole('button', { name: 'Copy anon' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(anon);
    await expect
      .poll(() => page.locator('.copy-value[data-label="GraphQL URL"]').textContent())
      .toContain(`/project/${projectRef}/graphql/v1`);
    await expect
      .poll(() => page.locator('.copy-value[data-label="Connection string"]').textContent())
      .toMatch(/^Connection stringpostgresql:\/\//);
    await shot('project-home');
    await checkPage('project-home');
    await page
      .locator('.copy-value[data-label="service_role"]')
      .getByRole('button', { name: 'Reveal' })
      .click();
    expect(await serviceRow.textContent()).toBe(service);
  });

  it("notes in GraphiQL when the project's introspection is off", async () => {
    await logLazyJs(page, 'GraphiQL', async () => {
      await tab('GraphiQL').click();
      await page.locator('.graphiql-container').waitFor({ timeout: 30_000 });
    });
    await page.getByRole('note').filter({ hasText: 'Introspection is off' }).waitFor({ timeout: 30_000 });
  });

  it('signs a role token for a user id (and validates the request)', async () => {
    const ok = await api<{ token: string; expires_at: string }>(
      'POST',
      `/projects/${projectRef}/console/role-token`,
      {
        role: 'authenticated',
        sub: '11111111-2222-4333-8444-555555555555',
      },
    );
    expect(ok.status).toBe(201);
    const claims = JSON.parse(Buffer.from(ok.json.token.split('.')[1]!, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    expect(claims).toMatchObject({
      role: 'authenticated',
      sub: '11111111-2222-4333-8444-555555555555',
      ref: projectRef,
    });
    const bad = await api<{ message: string }>('POST', `/projects/${projectRef}/console/role-token`, {
      role: 'service_role',
      sub: 'x',
    });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toMatch(/role must be one of/);
    const badSub = await api<{ message: string }>('POST', `/projects/${projectRef}/console/role-token`, {
      role: 'authenticated',
      sub: 'not-a-uuid',
    });
    expect(badSub.status).toBe(400);
    expect(badSub.json.message).toMatch(/^sub must match/);
  });

  it('runs SQL as the project owner, with results as a table and errors inline', async () => {
    await logLazyJs(page, 'the SQL editor', async () => {
      await tab('SQL editor').click();
      await page.locator('.sql-editor').waitFor();
    });
    const editor = page.getByLabel('SQL');
    // A real code editor: CodeMirror, highlighting SQL.
    await page.locator('.sql-editor .cm-editor').waitFor();
    await setSql(page, 'select 1;\nselect from no_such_table');
    await page.getByRole('button', { name: 'Run' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/no_such_table.*does not exist/);
    // The error is marked where PostgreSQL says it is: line 2, under no_such_table.
    await page.getByText('Error at line 2').waitFor();
    await expect.poll(() => page.locator('.cm-lintRange-error').textContent()).toBe('no_such_table');
    // Highlighted: the keyword `select` has a colour of its own.
    const highlighted = await page.evaluate(() =>
      Array.from(
        document.querySelector('.sql-editor')?.shadowRoot?.querySelectorAll('.cm-line span') ?? [],
      ).some(
        (el) =>
          el.textContent === 'select' &&
          getComputedStyle(el).color !== getComputedStyle(el.closest('.cm-line') as Element).color,
      ),
    );
    expect(highlighted).toBe(true);
    await setSql(
      page,
      `create table todos (id bigint generated always as identity primary key, title text not null);
create table tags (id int generated by default as identity primary key, todo_id bigint references todos (id), label text);
alter table tags enable row level security;
insert into todos (title) values ('write the console'), ('test it');
alter table todos enable row level security;
create policy "anyone reads" on todos for select using (true);
grant select on todos to anon, authenticated;
comment on schema public is '@graphql({"introspection": true})';
select id, title from todos order by id`,
    );
    await page.getByRole('button', { name: 'Run' }).click();
    await page.locator('.sql-result td', { hasText: 'write the console' }).waitFor();
    expect(await page.locator('.sql-result').textContent()).toContain('2 rows');
    expect(await page.locator('.sql-result').textContent()).toMatch(/\d+ ms/);
    await editor.press('Escape'); // a completion list may be open (its listbox is keyboard-driven from the editor)
    await shot('sql-editor');
    await checkPage('sql-editor');

    // Completion from the catalog: the table just made is offered.
    await setSql(page, 'select * from tod');
    await page.keyboard.press('Control+Space');
    await page.locator('.cm-tooltip-autocomplete', { hasText: 'todos' }).waitFor();
    await page.keyboard.press('Escape');
    // Run the selection only: the last line.
    await setSql(page, 'select 1 as one;\nselect 2 as two');
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Shift+Home');
    await page.getByRole('button', { name: 'Run selection' }).click();
    await page.locator('.sql-result th', { hasText: 'two' }).waitFor();
    expect(await page.locator('.sql-result th').allTextContents()).toEqual(['two']);
    // The result grid is keyboard-usable and only the rows in view are in the page.
    await setSql(page, 'select g as n from generate_series(1, 5000) g');
    await page.keyboard.press('Control+Enter');
    await expect.poll(() => page.locator('.sql-result').textContent()).toContain('5000 rows');
    expect(await page.locator('.sql-result tr').count()).toBeLessThan(60);
    // Paged by 1,000 rows.
    expect(await page.locator('.sql-result [role=grid]').getAttribute('aria-rowcount')).toBe('1001');
    await page.locator('.sql-result .pager', { hasText: 'Rows 1–1000 of 5000' }).waitFor();
    await page.locator('.sql-result td').first().click();
    await page.keyboard.press('Control+End');
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('1000');
    await page.locator('.sql-result').getByRole('button', { name: 'Next' }).click();
    await page.locator('.sql-result .pager', { hasText: 'Rows 1001–2000 of 5000' }).waitFor();
    expect(await page.locator('.sql-result td').first().textContent()).toBe('1001');
    // The page stays its size: the grid scrolls inside.
    expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThan(1400);
    // Snippets are kept in the browser.
    await page.locator('summary', { hasText: 'Snippets' }).click();
    await page.getByLabel('Snippet name').fill('five thousand');
    await page.getByRole('button', { name: 'Save snippet' }).click();
    await page.reload();
    await page.locator('summary', { hasText: 'Snippets (1)' }).click();
    await setSql(page, 'select 0');
    await page.getByRole('button', { name: 'five thousand', exact: true }).click();
    await expect.poll(() => editor.textContent()).toContain('generate_series(1, 5000)');
  });

  it('runs a GraphQL query in GraphiQL with the project key prefilled', async () => {
    await tab('GraphiQL').click();
    await page.locator('.graphiql-query-editor .CodeMirror').waitFor({ timeout: 30_000 });
    const headers = await page.evaluate(() => {
      const el = document.querySelectorAll('.CodeMirror');
      return Array.from(el).map((e) =>
        (e as unknown as { CodeMirror: { getValue(): string } }).CodeMirror.getValue(),
      );
    });
    expect(headers.join('\n')).toContain('"apikey"');
    await page.evaluate(() => {
      const cm = document.querySelector('.graphiql-query-editor .CodeMirror') as unknown as {
        CodeMirror: { setValue(v: string): void };
      };
      cm.CodeMirror.setValue(
        '{ todosCollection(orderBy: [{ id: AscNullsLast }]) { edges { node { title } } } }',
      );
    });
    await page.locator('.graphiql-execute-button').click();
    await expect
      .poll(() => page.locator('.graphiql-response').textContent(), { timeout: 20_000 })
      .toContain('write the console');
    // The docs explorer has the schema (introspection is on for this project now).
    await shot('graphiql');
    await checkPage('graphiql');
    // As a signed-in user: the Management API signs a token for the user id, prefilled as the bearer.
    await page.getByLabel('Role').selectOption('authenticated');
    await expect
      .poll(() =>
        page.evaluate(() =>
          Array.from(document.querySelectorAll('.CodeMirror'))
            .map((e) => (e as unknown as { CodeMirror: { getValue(): string } }).CodeMirror.getValue())
            .join('\n'),
        ),
      )
      .toMatch(/"authorization": "Bearer eyJ/);
    await page.locator('.graphiql-execute-button').click();
    await expect
      .poll(() => page.locator('.graphiql-response').textContent(), { timeout: 20_000 })
      .toMatch(/"data"/);
  });

  it('runs a subscription in GraphiQL: a live query over the WebSocket, updated on a write', async () => {
    const project = await tp.platform.project(projectRef);
    if (!project) throw new Error('no project');
    const sql = async (text: string) => {
      const c = new pg.Client({ connectionString: project.superuserUrl });
      await c.connect();
      try {
        await c.query(text);
      } finally {
        await c.end();
      }
    };
    await sql(
      `comment on schema public is '@graphql({"introspection": true, "strata": {"subscriptions": true}})'`,
    );
    await page.evaluate(() => {
      const cm = document.querySelector('.graphiql-query-editor .CodeMirror') as unknown as {
        CodeMirror: { setValue(v: string): void };
      };
      cm.CodeMirror.setValue(
        'subscription { todosCollection(orderBy: [{ id: AscNullsLast }]) { edges { node { title } } } }',
      );
    });
    // GraphiQL parses the editor's text after a pause; the fetcher picks the WebSocket from that.
    await page.waitForTimeout(1_000);
    await page.locator('.graphiql-execute-button').click();
    await expect
      .poll(() => page.locator('.graphiql-response').textContent(), { timeout: 20_000 })
      .toContain('write the console');
    await sql(`insert into todos (title) values ('live from the WAL')`);
    await expect
      .poll(() => page.locator('.graphiql-response').textContent(), { timeout: 20_000 })
      .toContain('live from the WAL');
    // Stop the subscription (the execute button is its stop button while it runs).
    await page.locator('.graphiql-execute-button').click();
    await sql(`delete from todos where title = 'live from the WAL'`);
  });

  it('shows tables with columns, keys, RLS and policies, and their rows', async () => {
    await logLazyJs(page, 'the table editor', async () => {
      await tab('Table editor').click();
      await page.getByRole('button', { name: 'todos' }).click();
      await page.getByRole('grid').waitFor();
    });
    await page.locator('.detail td', { hasText: 'primary key' }).waitFor();
    expect(await page.locator('.split .list').textContent()).toContain('RLS on');
    await page.locator('.detail td', { hasText: 'anyone reads' }).waitFor();
    await page.locator('.detail td', { hasText: 'test it' }).waitFor();
    await page.locator('.detail td', { hasText: 'generated always as identity' }).waitFor();
    await shot('table-editor');
    await checkPage('table-editor');
    // A table with no policies and no rows says so (not "No rows." for policies, not "Rows 1–0").
    await page.getByRole('button', { name: 'tags' }).click();
    await page.locator('.detail td', { hasText: 'generated by default as identity' }).waitFor();
    await page.locator('.detail', { hasText: 'No policies.' }).waitFor();
    await page.locator('.pager', { hasText: 'No rows' }).waitFor();
    expect(await page.locator('.detail').textContent()).not.toContain('1–0');
  });

  it('edits rows in the grid: server-side sort and filter, inline edit, insert, foreign key, delete', async () => {
    const grid = page.getByRole('grid', { name: 'public.todos' });
    const cells = (column: string) =>
      grid.locator(`td[data-column="${column}"] .grid-value`).allTextContents();
    await page.getByRole('button', { name: 'todos' }).click();
    await grid.waitFor();
    // PostgreSQL type names in the headers.
    expect(await grid.locator('th').allTextContents()).toEqual(['idbigint', 'titletext']);
    // Sorted by the server: ascending, then descending.
    await grid.getByRole('button', { name: /title/ }).click();
    await expect.poll(() => cells('title')).toEqual(['test it', 'write the console']);
    expect(await grid.locator('th', { hasText: 'title' }).getAttribute('aria-sort')).toBe('ascending');
    await grid.getByRole('button', { name: /title/ }).click();
    await expect.poll(() => cells('title')).toEqual(['write the console', 'test it']);
    // Filtered by the server (the value bound as a parameter).
    const filter = page.getByRole('form', { name: 'Filter rows' });
    await filter.getByLabel('Column').selectOption('title');
    await filter.getByLabel('Operator').selectOption('contains');
    await filter.getByLabel('Value').fill("wri'te");
    await filter.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.getByText('No rows match this filter.').waitFor();
    await filter.getByLabel('Value').fill('write');
    await filter.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.locator('.pager', { hasText: 'Rows 1–1 of 1' }).waitFor();
    await filter.getByRole('button', { name: 'Clear filter' }).click();
    await page.locator('.pager', { hasText: 'Rows 1–2 of 2' }).waitFor();
    // Edited inline (Enter saves); a refused value says why, next to the cell.
    await grid.locator('td[data-column="title"]', { hasText: 'test it' }).dblclick();
    await grid.getByLabel('Edit title').fill('tested');
    await grid.getByLabel('Edit title').press('Enter');
    await grid.locator('td[data-column="title"]', { hasText: 'tested' }).waitFor();
    const saved = await api<{ title: string }[]>('POST', `/projects/${projectRef}/database/query`, {
      query: 'select title from todos order by id',
    });
    expect(saved.json.map((r) => r.title)).toEqual(['write the console', 'tested']);
    await grid.locator('td[data-column="title"]', { hasText: 'tested' }).dblclick();
    await grid.getByLabel('Edit title').press('Control+Delete');
    await expect.poll(() => grid.getByRole('alert').textContent()).toMatch(/null value in column "title"/);
    await grid.getByLabel('Edit title').press('Escape');
    // Inserted from the form; the foreign key's value opens the row it references.
    await page.getByRole('button', { name: 'tags' }).click();
    await page.locator('summary', { hasText: 'Insert a row' }).click();
    await page.getByLabel('todo_id (bigint)').fill('1');
    await page.getByLabel('label (text)').fill('first tag');
    await page.getByRole('button', { name: 'Insert row' }).click();
    const tags = page.getByRole('grid', { name: 'public.tags' });
    await tags.locator('td', { hasText: 'first tag' }).waitFor();
    // Read as anon through GraphQL: RLS is on and tags has no policy, so anon sees no row.
    await page.getByLabel('Read as').selectOption('anon');
    await page.getByText('This role sees no rows here').waitFor();
    await page.getByLabel('Read as').selectOption('owner');
    await tags.locator('td', { hasText: 'first tag' }).waitFor();
    await tags.getByRole('button', { name: 'Open todos row 1' }).click();
    await page.getByRole('grid', { name: 'public.todos' }).waitFor();
    await page.locator('.pager', { hasText: 'Rows 1–1 of 1' }).waitFor();
    expect(await page.getByLabel('Value').inputValue()).toBe('1');
    // todos has a policy that lets anyone read: anon (and a signed-in user) see the row, filtered.
    await page.getByLabel('Read as').selectOption('anon');
    await page
      .getByRole('grid', { name: 'public.todos' })
      .locator('td', { hasText: 'write the console' })
      .waitFor();
    expect(await page.getByRole('grid', { name: 'public.todos' }).locator('tbody tr').count()).toBe(1);
    await page.getByLabel('Read as').selectOption('authenticated');
    await page.getByLabel('User id').waitFor();
    await page
      .getByRole('grid', { name: 'public.todos' })
      .locator('td', { hasText: 'write the console' })
      .waitFor();
    // Deleted after confirmation.
    await page.getByRole('button', { name: 'tags' }).click();
    await tags.locator('td', { hasText: 'first tag' }).click();
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Delete selected row' }).click();
    await page.getByText('No rows yet. Insert one below.').waitFor();
    await checkPage('table-editor-rows');
  });

  it('creates a bucket, uploads with a progress bar, downloads byte-exact', async () => {
    await tab('Storage').click();
    const bucketForm = page.locator('.bucket-form');
    await bucketForm.getByLabel('Name').fill('Bad/Name');
    await bucketForm.getByRole('button', { name: 'Create bucket' }).click();
    await page.locator('.bucket-form [role=alert]').waitFor();
    await bucketForm.getByLabel('Name').fill('docs');
    await bucketForm.getByRole('button', { name: 'Create bucket' }).click();
    await page.locator('.objects').waitFor();
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    await page
      .locator('input[type=file]')
      .setInputFiles({ name: 'blob.bin', mimeType: 'application/octet-stream', buffer: bytes });
    await page.locator('progress').waitFor();
    await expect.poll(() => page.locator('progress').getAttribute('value'), { timeout: 60_000 }).toBe('1');
    const row = page.locator('tr.object[data-name="blob.bin"]');
    await row.waitFor();
    // A header row; size in words, type and modified date in their own columns.
    expect(await page.locator('.objects-table thead th').allTextContents()).toEqual([
      'Name',
      'Size',
      'Type',
      'Last modified',
      'Actions',
    ]);
    expect(await row.locator('td').nth(1).textContent()).toBe('3.0 MB');
    expect(await row.locator('td').nth(2).textContent()).toBe('application/octet-stream');
    expect(await row.locator('td').nth(3).textContent()).toMatch(/\d{4}/);
    await shot('storage');
    await checkPage('storage');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      row.getByRole('button', { name: 'Download' }).click(),
    ]);
    const saved = await download.path();
    expect(Buffer.compare(readFileSync(saved), bytes)).toBe(0);
    // The signed URL is made in a dialog, its expiry with a unit.
    await row.getByRole('button', { name: 'Signed URL' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Expires in').fill('0');
    await dialog.getByRole('button', { name: 'Create signed URL' }).click();
    await expect.poll(() => dialog.getByRole('alert').textContent()).toMatch(/whole number of hours/);
    await dialog.getByLabel('Expires in').fill('2');
    await dialog.getByLabel('Unit').selectOption('minutes');
    await dialog.getByRole('button', { name: 'Create signed URL' }).click();
    const signed = await dialog.getByLabel('Object URL').inputValue();
    expect(signed).toMatch(/\/storage\/v1\/object\/sign\/docs\/blob\.bin\?token=/);
    const exp = JSON.parse(
      Buffer.from(new URL(signed).searchParams.get('token')!.split('.')[1]!, 'base64url').toString(),
    ) as { exp: number; iat: number };
    expect(exp.exp - exp.iat).toBe(120);
    expect(await axeViolations(page), 'axe on the URL dialog').toEqual([]);
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'detached' });
    const viaSigned = Buffer.from(await (await fetch(signed)).arrayBuffer());
    expect(Buffer.compare(viaSigned, bytes)).toBe(0);
  });

  it('uploads by drag and drop into a folder, moves, makes public, deletes, empties and deletes the bucket', async () => {
    await page.getByLabel('Folder name').fill('notes');
    await page.getByRole('button', { name: 'Open folder' }).click();
    await page.locator('.crumbs', { hasText: 'notes' }).waitFor();
    const png = await sharp({ create: { width: 3, height: 2, channels: 3, background: '#2f7d5b' } })
      .png()
      .toBuffer();
    const drop = await page.evaluateHandle((pngBase64) => {
      const dt = new DataTransfer();
      dt.items.add(new File(['hello from a drop'], 'hello.txt', { type: 'text/plain' }));
      dt.items.add(new File(['second'], 'second.txt', { type: 'text/plain' }));
      const bytes = Uint8Array.from(atob(pngBase64), (c) => c.charCodeAt(0));
      dt.items.add(new File([bytes], 'dot.png', { type: 'image/png' }));
      return dt;
    }, png.toString('base64'));
    await page.locator('.dropzone').dispatchEvent('drop', { dataTransfer: drop });
    const hello = page.locator('tr.object[data-name="notes/hello.txt"]');
    await hello.waitFor();
    await page.locator('tr.object[data-name="notes/second.txt"]').waitFor();
    // One progress bar per file.
    expect(await page.locator('.uploads progress').count()).toBe(3);
    expect(await page.getByLabel('Upload progress of notes/second.txt').getAttribute('value')).toBe('1');
    // An image is previewed in a dialog (from a blob: URL); a text file has no Preview.
    const dot = page.locator('tr.object[data-name="notes/dot.png"]');
    await dot.getByRole('button', { name: 'Preview' }).click();
    const preview = page.getByRole('dialog', { name: 'Preview of dot.png' });
    await preview.getByText('3 × 2 px').waitFor();
    expect(await preview.locator('img').getAttribute('src')).toMatch(/^blob:/);
    expect(await axeViolations(page), 'axe on the preview dialog').toEqual([]);
    await preview.getByRole('button', { name: 'Close' }).click();
    await preview.waitFor({ state: 'detached' });
    expect(await hello.getByRole('button', { name: 'Preview' }).count()).toBe(0);
    await hello.getByRole('button', { name: 'Move' }).click();
    await page.getByRole('dialog').getByLabel('Move to').fill('notes/renamed.txt');
    await page.getByRole('dialog').getByRole('button', { name: 'Move here' }).click();
    const renamed = page.locator('tr.object[data-name="notes/renamed.txt"]');
    await renamed.waitFor();
    // Public: the bucket setting, then the object's public URL answers without a key.
    await page.locator('form[aria-label="Bucket docs"] input[name=public]').check();
    await page.locator('form[aria-label="Bucket docs"]').getByRole('button', { name: 'Save' }).click();
    await page.locator('form[aria-label="Bucket docs"]', { hasText: 'Saved.' }).waitFor();
    await renamed.getByRole('button', { name: 'URL', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Public URL' }).click();
    const publicUrl = await page.getByRole('dialog').getByLabel('Object URL').inputValue();
    expect(await (await fetch(publicUrl)).text()).toBe('hello from a drop');
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    page.once('dialog', (d) => void d.accept());
    await renamed.getByRole('button', { name: 'Delete' }).click();
    await renamed.waitFor({ state: 'detached' });
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Empty bucket' }).click();
    await page.getByText('Empty: done.').waitFor();
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Delete bucket' }).click();
    await page.locator('.buckets li').first().waitFor({ state: 'detached' });
  });

  it('shows settings sections', async () => {
    await tab('Settings').click();
    // Scoped to the Secrets card: until Settings has rendered, the previous tab's form (a bucket
    // "Name") may still be on the page.
    const secrets = page.locator('section.card', { has: page.getByRole('heading', { name: 'Secrets' }) });
    await secrets.getByLabel('Name').fill('CONSOLE_SECRET');
    await secrets.getByLabel('Value').fill('s3cret');
    await secrets.getByRole('button', { name: 'Set secret' }).click();
    await page.locator('.secrets code', { hasText: 'CONSOLE_SECRET' }).waitFor();
    await page.getByRole('heading', { name: 'Encryption root key' }).waitFor();
    await page.getByText('No banned addresses.').waitFor();
    const restrictions = page.locator('section.card', { hasText: 'Network restrictions' });
    await restrictions.getByLabel('Allowed IPv4 CIDRs').fill('not-a-cidr');
    await restrictions.getByRole('button', { name: 'Apply restrictions' }).click();
    await expect.poll(() => restrictions.getByRole('alert').textContent()).toMatch(/dbAllowedCidrs/);
    // No custom hostname is a state in words, not a red error.
    const hostname = page.locator('section.card', {
      has: page.getByRole('heading', { name: 'Custom hostname' }),
    });
    await hostname.getByText('Not configured.').waitFor();
    expect(await hostname.getByRole('alert').count()).toBe(0);
    // Platform-managed secrets cannot be unset, so they have no Unset button.
    const reserved = page.locator('.secrets li', { hasText: 'SUPABASE_URL' });
    await reserved.getByText('set by the platform').waitFor();
    expect(await reserved.getByRole('button', { name: 'Unset' }).count()).toBe(0);
    await shot('settings');
    await checkPage('settings');
  });

  it('deletes the project after confirmation', async () => {
    await page.goto(`${consoleUrl}/#/`);
    const row = page.locator(`li.project[data-ref="${projectRef}"]`);
    // The status in words, not ACTIVE_HEALTHY.
    expect(await row.locator('.status').textContent()).toBe('Running');
    await row.getByRole('button', { name: 'Delete' }).click();
    const confirm = row.getByRole('button', { name: 'Delete permanently' });
    expect(await confirm.isDisabled()).toBe(true);
    await row.getByLabel('Confirm project name').fill(PROJECT);
    await confirm.click();
    await row.waitFor({ state: 'detached', timeout: 60_000 });
    expect((await api('GET', `/projects/${projectRef}`)).status).not.toBe(200);
  });

  it('a read-only member signs in with a token and sees no API keys (the API refuses them)', async () => {
    await addMember(tp.platform.pool, 'viewer@console.test', 'default-org', 'read_only');
    const viewer = (await createToken(tp.platform.pool, 'viewer@console.test', 'console test')).token;
    const keyAnswers: number[] = [];
    const onResponse = (r: import('playwright-core').Response) => {
      if (r.url().endsWith('/api-keys')) keyAnswers.push(r.status());
    };
    page.on('response', onResponse);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Access token').fill(viewer);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    const ref = (await tp.platform.defaultProject()).ref;
    await page.goto(`${consoleUrl}/#/project/${ref}`);
    await page.getByText("Your role may not read this project's keys").waitFor();
    await tab('Storage').click();
    await page.getByText("This page needs the project's API keys").waitFor();
    page.off('response', onResponse);
    expect(keyAnswers.length).toBeGreaterThan(0);
    expect(keyAnswers.every((s) => s === 403)).toBe(true);
  });

  it('made no request to another host and hit no CSP violation or page error', () => {
    expect(offHost.join('\n')).toBe('');
    expect(pageErrors.join('\n\n')).toBe('');
  });
});
