/**
 * The real Supabase CLI (npm `supabase` v3, binary from @supabase/cli-linux-x64) deploying an
 * Edge Function with `--use-api` (multipart to POST /v1/projects/{ref}/functions/deploy), listing
 * and deleting it; the deployed function then answers at {project}/functions/v1/hello.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { runSupabase, writeCliProfile } from '../support/supabase-cli.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { api } from '../support/management.js';
import { invokeFunction } from '../support/functions.js';

let tp: TestPlatform;
let ctx: ProjectContext;
let home: string;

const supabase = (args: string[]) =>
  runSupabase(args, { home, token: tp.platform.defaultAccessToken, timeoutMs: 90_000 });

beforeAll(async () => {
  tp = await startTestPlatform();
  ctx = await tp.platform.defaultProject();
  home = mkdtempSync(join(tmpdir(), 'strata-fn-cli-'));
  writeCliProfile(home, tp.url);
  mkdirSync(join(home, 'supabase/functions/hello'), { recursive: true });
  mkdirSync(join(home, 'supabase/functions/_shared'), { recursive: true });
  writeFileSync(join(home, 'supabase/config.toml'), `project_id = "strata-cli-test"\n`);
  writeFileSync(
    join(home, 'supabase/functions/_shared/greeting.ts'),
    `export function greeting(name: string): string {\n  return \`Hello \${name}!\`;\n}\n`,
  );
  writeFileSync(
    join(home, 'supabase/functions/hello/index.ts'),
    `import { greeting } from '../_shared/greeting.ts';

Deno.serve(async (req) => {
  const { name } = await req.json();
  return new Response(JSON.stringify({ message: greeting(name) }), {
    headers: { 'Content-Type': 'application/json' },
  });
});
`,
  );
});

afterAll(async () => {
  await tp?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('supabase functions deploy --use-api', () => {
  it('deploys, runs, lists and deletes a function', async () => {
    const deployed = await supabase(['functions', 'deploy', 'hello', '--project-ref', ctx.ref, '--use-api']);
    expect(deployed.code, deployed.stderr + deployed.stdout).toBe(0);

    const res = await invokeFunction(tp, ctx.ref, 'hello', {
      method: 'POST',
      headers: { authorization: `Bearer ${ctx.anonKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'CLI' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ message: 'Hello CLI!' });

    const stored = await api(tp, 'GET', `/v1/projects/${ctx.ref}/functions/hello`);
    expect(stored.body).toMatchObject({ slug: 'hello', status: 'ACTIVE', version: 1, verify_jwt: true });

    const again = await supabase([
      'functions',
      'deploy',
      'hello',
      '--project-ref',
      ctx.ref,
      '--use-api',
      '--no-verify-jwt',
    ]);
    expect(again.code, again.stderr + again.stdout).toBe(0);
    const updated = await api(tp, 'GET', `/v1/projects/${ctx.ref}/functions/hello`);
    expect(updated.body).toMatchObject({ version: 2, verify_jwt: false });
    const open = await invokeFunction(tp, ctx.ref, 'hello', {
      method: 'POST',
      body: JSON.stringify({ name: 'anyone' }),
    });
    expect(open.status).toBe(200);

    const list = await supabase(['functions', 'list', '--project-ref', ctx.ref]);
    expect(list.code, list.stderr + list.stdout).toBe(0);
    expect(list.stdout).toContain('hello');
    expect(list.stdout).toContain('ACTIVE');

    const del = await supabase(['functions', 'delete', 'hello', '--project-ref', ctx.ref]);
    expect(del.code, del.stderr + del.stdout).toBe(0);
    expect((await api(tp, 'GET', `/v1/projects/${ctx.ref}/functions/hello`)).status).toBe(404);
    const gone = await invokeFunction(tp, ctx.ref, 'hello', {
      method: 'POST',
      body: '{}',
    });
    expect(gone.status).toBe(404);
  }, 240_000);

  it('deploys every function at once (bundle_only + bulk update)', async () => {
    mkdirSync(join(home, 'supabase/functions/world'), { recursive: true });
    writeFileSync(
      join(home, 'supabase/functions/world/index.ts'),
      `Deno.serve(() => new Response('world'));\n`,
    );
    const all = await supabase(['functions', 'deploy', '--project-ref', ctx.ref, '--use-api']);
    expect(all.code, all.stderr + all.stdout).toBe(0);
    const listed = await api(tp, 'GET', `/v1/projects/${ctx.ref}/functions`);
    expect((listed.body as Array<{ slug: string }>).map((f) => f.slug).sort()).toEqual(['hello', 'world']);
    const res = await invokeFunction(tp, ctx.ref, 'world', {
      headers: { authorization: `Bearer ${ctx.anonKey}` },
    });
    expect(await res.text()).toBe('world');
  }, 240_000);
});
