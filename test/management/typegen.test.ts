/**
 * GET /v1/projects/{ref}/types/typescript: TypeScript types from a project's live catalog, compared with golden files written in the
 * reference generator's layout, and checked to be exactly what Prettier would print.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SupabaseManagementAPI } from 'supabase-management-js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { withClient } from '../../src/db/pool.js';
import { api } from '../support/management.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

let tp: TestPlatform;
let client: SupabaseManagementAPI;
let ref: string;
beforeAll(async () => {
  tp = await startTestPlatform();
  client = new SupabaseManagementAPI({ accessToken: tp.platform.defaultAccessToken, baseUrl: tp.url });
  const created = await client.createAProject({
    name: 'typegen',
    db_pass: 'pw',
    organization_slug: 'default-org',
  });
  ref = created.data.ref;
  const ctx = (await tp.platform.project(ref))!;
  await withClient(ctx.superuserUrl, (c) => c.query(readFileSync(fixture('typegen-schema.sql'), 'utf8')));
});
afterAll(async () => {
  await tp?.close();
});

/** Compares with the golden file (UPDATE_GOLDEN=1 rewrites it). */
function expectGolden(actual: string, name: string): void {
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(fixture(name), actual);
  expect(actual).toBe(readFileSync(fixture(name), 'utf8'));
}

async function prettierFormat(text: string): Promise<string> {
  const prettier = await import('prettier');
  return await prettier.format(text, { parser: 'typescript', semi: false });
}

describe('generate TypeScript types', () => {
  it('public (the default) matches the golden file, through supabase-management-js', async () => {
    const { data, status } = await client.generateTypescriptTypes(ref);
    expect(status).toBe(200);
    expectGolden(data.types, 'typegen-public.ts');
  });

  it('several schemas with included_schemas', async () => {
    const r = await api(tp, 'GET', `/v1/projects/${ref}/types/typescript?included_schemas=public,other`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['types']);
    expectGolden(r.body.types, 'typegen-public-other.ts');
  });

  it('prints Database and Constants exactly as Prettier would', async () => {
    // The helper generics are copied from the reference output, which an older Prettier printed:
    // compare the generated sections only.
    const sections = (text: string) => [
      text.slice(0, text.indexOf('type DatabaseWithoutInternals')),
      text.slice(text.indexOf('export const Constants')),
    ];
    for (const schemas of ['public', 'public,other', 'public,other,auth,storage,graphql']) {
      const r = await api(tp, 'GET', `/v1/projects/${ref}/types/typescript?included_schemas=${schemas}`);
      const formatted = await prettierFormat(r.body.types);
      expect(sections(r.body.types)).toEqual(sections(formatted));
    }
  });

  it('the generated file type-checks', async () => {
    const ts = await import('typescript');
    const r = await api(tp, 'GET', `/v1/projects/${ref}/types/typescript?included_schemas=public,other`);
    const source = ts.createSourceFile(
      'types.ts',
      r.body.types,
      ts.ScriptTarget.ES2022,
      true,
      ts.ScriptKind.TS,
    );
    const diagnostics = (source as unknown as { parseDiagnostics: unknown[] }).parseDiagnostics;
    expect(diagnostics).toEqual([]);
  });

  it('an empty or unknown schema list yields empty sections, system schemas are never listed', async () => {
    const r = await api(tp, 'GET', `/v1/projects/${ref}/types/typescript?included_schemas=nope,pg_catalog`);
    expect(r.status).toBe(200);
    expect(r.body.types).toContain('export type Database = {}');
    expect(r.body.types).not.toContain('pg_catalog:');
  });

  it('sees schema changes immediately', async () => {
    const ctx = (await tp.platform.project(ref))!;
    await withClient(ctx.superuserUrl, (c) =>
      c.query('create table public.late_addition (id int primary key)'),
    );
    const r = await api(tp, 'GET', `/v1/projects/${ref}/types/typescript`);
    expect(r.body.types).toContain('late_addition: {');
    await withClient(ctx.superuserUrl, (c) => c.query('drop table public.late_addition'));
  });
});
