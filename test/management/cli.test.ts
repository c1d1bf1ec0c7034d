/**
 * The real Supabase CLI (npm `supabase` v3, a dev dependency; its binary comes from
 * `@supabase/cli-linux-x64`) pointed at the platform with a profile. STRATA_SUPABASE_CLI names
 * another binary; without one the suite fails rather than skips.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { runSupabase, writeCliProfile } from '../support/supabase-cli.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { api } from '../support/management.js';

let tp: TestPlatform;
let home: string;
let ref: string;

const supabase = (args: string[]) =>
  runSupabase(args, { home, token: tp.platform.defaultAccessToken, timeoutMs: 60_000 });

beforeAll(async () => {
  tp = await startTestPlatform();
  ref = tp.platform.defaultRef;
  home = mkdtempSync(join(tmpdir(), 'strata-cli-'));
  writeCliProfile(home, tp.url);
});
afterAll(async () => {
  await tp?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('Supabase CLI against the platform', () => {
  it('secrets set / list / unset', async () => {
    const set = await supabase(['secrets', 'set', 'CLI_ONE=first', 'CLI_TWO=second', '--project-ref', ref]);
    expect(set.code, set.stderr + set.stdout).toBe(0);
    const stored = await api(tp, 'GET', `/v1/projects/${ref}/secrets`);
    expect(stored.body).toContainEqual(
      expect.objectContaining({ name: 'CLI_ONE', value: createHash('sha256').update('first').digest('hex') }),
    );

    const list = await supabase(['secrets', 'list', '--project-ref', ref]);
    expect(list.code, list.stderr + list.stdout).toBe(0);
    expect(list.stdout).toContain('CLI_ONE');
    expect(list.stdout).toContain('CLI_TWO');
    expect(list.stdout).not.toContain('first');

    const unset = await supabase(['secrets', 'unset', 'CLI_ONE', '--project-ref', ref, '--yes']);
    expect(unset.code, unset.stderr + unset.stdout).toBe(0);
    const after = await api(tp, 'GET', `/v1/projects/${ref}/secrets`);
    const names = after.body.map((s: { name: string }) => s.name);
    expect(names).not.toContain('CLI_ONE');
    expect(names).toContain('CLI_TWO');
  });

  it('gen types typescript --project-id prints the generated types', async () => {
    const { withClient } = await import('../../src/db/pool.js');
    const ctx = await tp.platform.defaultProject();
    await withClient(ctx.superuserUrl, (c) =>
      c.query(
        'create table if not exists public.cli_notes (id bigint generated always as identity primary key, body text not null)',
      ),
    );
    const r = await supabase(['gen', 'types', 'typescript', '--project-id', ref]);
    expect(r.code, r.stderr).toBe(0);
    const viaApi = await api(tp, 'GET', `/v1/projects/${ref}/types/typescript?included_schemas=public`);
    expect(r.stdout.trim()).toBe(viaApi.body.types.trim());
    expect(r.stdout).toContain('cli_notes: {');
  });

  // (CLI v3 no longer unsets everything when given no names: "No secret names given. Nothing was unset.")
  it('secrets set --env-file, then unset of several names', async () => {
    writeFileSync(join(home, 'secrets.env'), 'FROM_FILE_A=alpha\nFROM_FILE_B="quoted value"\n');
    const set = await supabase([
      'secrets',
      'set',
      '--env-file',
      join(home, 'secrets.env'),
      '--project-ref',
      ref,
    ]);
    expect(set.code, set.stderr + set.stdout).toBe(0);
    const stored = await api(tp, 'GET', `/v1/projects/${ref}/secrets`);
    expect(stored.body).toContainEqual(
      expect.objectContaining({
        name: 'FROM_FILE_B',
        value: createHash('sha256').update('quoted value').digest('hex'),
      }),
    );
    const unset = await supabase([
      'secrets',
      'unset',
      'FROM_FILE_A',
      'FROM_FILE_B',
      'CLI_TWO',
      '--project-ref',
      ref,
      '--yes',
    ]);
    expect(unset.code, unset.stderr + unset.stdout).toBe(0);
    const after = await api(tp, 'GET', `/v1/projects/${ref}/secrets`);
    expect(after.body.map((s: { name: string }) => s.name)).toEqual([
      'SUPABASE_ANON_KEY',
      'SUPABASE_SERVICE_ROLE_KEY',
      'SUPABASE_URL',
    ]);
  });

  it('gen types typescript --schema picks the schemas', async () => {
    const { withClient } = await import('../../src/db/pool.js');
    const ctx = await tp.platform.defaultProject();
    await withClient(ctx.superuserUrl, (c) =>
      c.query(
        'create schema if not exists cli_extra; create table if not exists cli_extra.gadgets (id int primary key)',
      ),
    );
    const r = await supabase(['gen', 'types', 'typescript', '--project-id', ref, '--schema', 'cli_extra']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('cli_extra: {');
    expect(r.stdout).toContain('gadgets: {');
    expect(r.stdout).not.toContain('cli_notes');
  });

  it('orgs create and projects create', async () => {
    const org = await supabase(['orgs', 'create', 'CLI Org', '-o', 'json']);
    expect(org.code, org.stderr + org.stdout).toBe(0);
    const orgs = await api(tp, 'GET', '/v1/organizations');
    const created = orgs.body.find((o: { name: string }) => o.name === 'CLI Org');
    expect(created).toBeDefined();
    const project = await supabase([
      'projects',
      'create',
      'cli-project',
      '--org-id',
      created.slug,
      '--db-password',
      'pw-from-cli',
      '--region',
      'eu-west-2',
      '-o',
      'json',
    ]);
    expect(project.code, project.stderr + project.stdout).toBe(0);
    const projects = await api(tp, 'GET', '/v1/projects');
    const p = projects.body.find((x: { name: string }) => x.name === 'cli-project');
    expect(p).toMatchObject({
      organization_slug: created.slug,
      region: 'eu-west-2',
      status: 'ACTIVE_HEALTHY',
    });
  });

  it('projects list and orgs list', async () => {
    const projects = await supabase(['projects', 'list', '-o', 'json']);
    expect(projects.code, projects.stderr).toBe(0);
    expect(projects.stdout).toContain(ref);
    const orgs = await supabase(['orgs', 'list', '-o', 'json']);
    expect(orgs.code, orgs.stderr).toBe(0);
    expect(orgs.stdout).toContain('default-org');
  });
});
