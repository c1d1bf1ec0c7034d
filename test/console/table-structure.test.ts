/**
 * The table editor's structure forms and role writes in real headless Chromium: a table created
 * from the form (identity key, a user column, RLS on), a column added and dropped (after a
 * confirmation), a policy created from the form, rows inserted, edited and deleted as an
 * authenticated user through GraphQL (RLS decides: another user's row cannot be changed), the
 * policy dropped and RLS turned off. axe-core and the 390 px check on the page with its forms open.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { join } from 'node:path';
import { type Browser, screenshotDir } from '../support/chromium.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { axeViolations, narrowWidth, watchedBrowser } from './page-checks.js';

let tp: TestPlatform;
let browser: Browser;
let page: Page;
let ctx: ProjectContext;
let pageErrors: string[] = [];
let offHost: string[] = [];

async function shot(name: string): Promise<void> {
  const dir = screenshotDir();
  if (dir) await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}
const ALICE = '0a0a0a0a-0000-4000-8000-00000000000a';
const BOB = '0b0b0b0b-0000-4000-8000-00000000000b';

async function sql<T = Record<string, unknown>>(query: string): Promise<T[]> {
  const res = await fetch(`${tp.url}/v1/projects/${ctx.ref}/database/query`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${tp.platform.defaultAccessToken}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ query }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as T[];
}

beforeAll(async () => {
  ({ browser, page, offHost, pageErrors } = await watchedBrowser(20000));
  tp = await startTestPlatform();
  ctx = await tp.platform.defaultProject();
  await page.goto(tp.consoleLoginUrl(tp.platform.defaultAccessToken));
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
  await page.goto(`${tp.consoleUrl}/#/project/${ctx.ref}/tables`);
  await page.getByRole('heading', { name: 'Table editor' }).waitFor();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await tp?.close();
});

describe('console: table structure and role writes', () => {
  it('creates a table from the form, showing its SQL first', async () => {
    await page.getByRole('button', { name: 'New table' }).click();
    const form = page.getByRole('form', { name: 'New table' });
    await form.getByLabel('Table name').fill('notes');
    await form.getByRole('button', { name: 'Add a column' }).click();
    const third = form.getByRole('group', { name: 'Column 3' });
    await third.getByLabel('Name').fill('owner');
    await third.getByLabel('Type').fill('uuid');
    await third.getByLabel('Default').fill('auth.uid()');
    await form.getByRole('button', { name: 'Add a column' }).click();
    const fourth = form.getByRole('group', { name: 'Column 4' });
    await fourth.getByLabel('Name').fill('body');
    await fourth.getByLabel('Type').fill('text; drop table x');
    await form.locator('summary', { hasText: 'SQL' }).click();
    await form.locator('pre', { hasText: 'is not a type name' }).waitFor();
    await fourth.getByLabel('Type').fill('text');
    await fourth.getByLabel('Nullable').uncheck();
    await form.locator('pre', { hasText: 'create table "public"."notes"' }).waitFor();
    await shot('table-new');
    expect(await axeViolations(page), 'axe on the new-table form').toEqual([]);
    expect(await narrowWidth(page, 'table-new'), 'new-table form at 390 px').toBeLessThanOrEqual(390);
    await form.getByRole('button', { name: 'Create table' }).click();
    await page.getByRole('heading', { name: 'public.notes' }).waitFor();
    await page.locator('li', { hasText: 'notes' }).getByText('RLS on').waitFor();
    const cols = await sql<{ column_name: string; is_identity: string; is_nullable: string }>(
      `select column_name, is_identity, is_nullable from information_schema.columns
        where table_schema = 'public' and table_name = 'notes' order by ordinal_position`,
    );
    expect(cols.map((c) => [c.column_name, c.is_identity, c.is_nullable])).toEqual([
      ['id', 'YES', 'NO'],
      ['created_at', 'NO', 'NO'],
      ['owner', 'NO', 'YES'],
      ['body', 'NO', 'NO'],
    ]);
  });

  it('adds and drops a column, and creates a policy from the form', async () => {
    await page.locator('summary', { hasText: 'Change the table' }).click();
    const add = page.getByRole('form', { name: 'Add a column' });
    await add.getByLabel('Name').fill('scratch');
    await add.getByLabel('Type').fill('integer');
    await add.getByRole('button', { name: 'Add column' }).click();
    await page.locator('.table-wrap td', { hasText: 'scratch' }).first().waitFor();
    const drop = page.getByRole('form', { name: 'Drop a column' });
    await drop.getByLabel('Column to drop').selectOption('scratch');
    page.once('dialog', (d) => void d.accept());
    await drop.getByRole('button', { name: 'Drop column' }).click();
    await expect
      .poll(
        async () =>
          (
            await sql(
              `select 1 from information_schema.columns where table_name = 'notes' and column_name = 'scratch'`,
            )
          ).length,
      )
      .toBe(0);
    const policy = page.getByRole('form', { name: 'New policy' });
    await policy.getByLabel('Policy name').fill('own notes');
    await policy.getByLabel('For').selectOption('all');
    await policy.getByLabel('Using (which existing rows)').fill('owner = auth.uid()');
    await policy.getByLabel('With check (which new rows)').fill('owner = auth.uid()');
    await policy.getByRole('button', { name: 'Create policy' }).click();
    await page.locator('.table-wrap td', { hasText: 'own notes' }).waitFor();
    await sql('grant select, insert, update, delete on public.notes to authenticated');
    await shot('table-structure');
    expect(await axeViolations(page), 'axe on the structure forms').toEqual([]);
    expect(await narrowWidth(page, 'table-structure'), 'structure forms at 390 px').toBeLessThanOrEqual(390);
  });

  it('inserts, edits and deletes rows as an authenticated user through GraphQL, under RLS', async () => {
    await sql(`insert into public.notes (owner, body) values ('${BOB}', 'bob''s note')`);
    await page.getByLabel('Read as').selectOption('authenticated');
    await page.getByLabel('User id').fill(ALICE);
    await page.getByText('This role sees no rows here').waitFor();
    await page.locator('summary', { hasText: 'Insert a row' }).click();
    await page.getByLabel('body (text)').fill('alice writes');
    await page.getByRole('button', { name: 'Insert row' }).click();
    const grid = page.getByRole('grid', { name: 'public.notes' });
    await grid.locator('td', { hasText: 'alice writes' }).waitFor();
    // Alice's row carries her id (the default auth.uid() ran as her); Bob's stays hidden.
    const rows = await sql<{ owner: string; body: string }>(
      'select owner, body from public.notes order by id',
    );
    expect(rows).toEqual([
      { owner: BOB, body: "bob's note" },
      { owner: ALICE, body: 'alice writes' },
    ]);
    expect(await grid.locator('td', { hasText: "bob's note" }).count()).toBe(0);
    await grid.locator('td[data-column="body"]', { hasText: 'alice writes' }).dblclick();
    await grid.getByLabel('Edit body').fill('alice edited');
    await grid.getByLabel('Edit body').press('Enter');
    await grid.locator('td', { hasText: 'alice edited' }).waitFor();
    // Inserting a row for Bob as Alice is refused by the policy's check.
    await page.getByLabel('owner (uuid)').fill(BOB);
    await page.getByLabel('body (text)').fill('forged');
    await page.getByRole('button', { name: 'Insert row' }).click();
    await expect
      .poll(() => page.locator('.insert-row [role=alert]').textContent())
      .toMatch(/row-level security|No row changed/);
    await grid.locator('td', { hasText: 'alice edited' }).click();
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Delete selected row' }).click();
    await page.getByText('This role sees no rows here').waitFor();
    expect(await sql('select body from public.notes order by id')).toEqual([{ body: "bob's note" }]);
  });

  it('drops the policy and turns RLS off after confirmations', async () => {
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Drop policy own notes' }).click();
    await expect
      .poll(async () => (await sql(`select 1 from pg_policies where tablename = 'notes'`)).length)
      .toBe(0);
    page.once('dialog', (d) => void d.dismiss());
    await page.getByRole('button', { name: 'Turn RLS off' }).click();
    expect(
      (
        await sql<{ on: boolean }>(
          `select relrowsecurity as on from pg_class where oid = 'public.notes'::regclass`,
        )
      )[0]?.on,
    ).toBe(true);
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Turn RLS off' }).click();
    await page.getByRole('button', { name: 'Turn RLS on' }).waitFor();
    expect(pageErrors).toEqual([]);
    expect(offHost).toEqual([]);
  });
});
