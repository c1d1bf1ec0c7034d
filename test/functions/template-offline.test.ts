/**
 * Issue 31 item 3, offline: the function the real Supabase CLI writes with `functions new hello`
 * (its `deno.json` maps `@supabase/server` to `npm:@supabase/server@^1`) deploys and answers 200
 * on a platform whose Deno cannot reach the npm registry, with a fresh data folder: the packages
 * come from the seed the build cached (dist/deno-seed, scripts/seed-deno-cache.mjs). The platform's
 * Deno is cut off from the network through its proxy setting (HTTPS_PROXY / HTTP_PROXY, read by
 * src/config.ts), pointed at a local port nobody listens on; the controls show that this really
 * blocks the registry: a package the seed does not have, and the template without the seed, both
 * fail the deploy with 400 naming the import.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFromEnv, type StrataConfig } from '../../src/config.js';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { freeTestPort } from '../support/free-port.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { runSupabase, writeCliProfile } from '../support/supabase-cli.js';
import { deploy, invokeFunction } from '../support/functions.js';

const FN_DIR = 'supabase/functions/hello';
let home: string;
const template: Record<string, string> = {};
let offline: StrataConfig['functions'];
const platforms: TestPlatform[] = [];

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'strata-template-offline-'));
  const cwd = join(home, 'app');
  mkdirSync(cwd);
  // `init` and `functions new` talk to no server; the CLI only wants a profile to read.
  writeCliProfile(home, 'http://127.0.0.1:9');
  for (const args of [['init'], ['functions', 'new', 'hello']]) {
    const r = await runSupabase(args, { home, token: '', cwd });
    expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(0);
  }
  for (const name of ['index.ts', 'deno.json'])
    template[`${FN_DIR}/${name}`] = readFileSync(join(cwd, FN_DIR, name), 'utf8');
  const closed = `http://127.0.0.1:${await freeTestPort()}`;
  offline = {
    ...configFromEnv({}).functions,
    prewarm: false,
    moduleProxy: { httpsProxy: closed, httpProxy: closed },
  };
}, 120_000);
afterAll(async () => {
  for (const tp of platforms) await tp.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

async function platform(
  functions: StrataConfig['functions'],
): Promise<{ tp: TestPlatform; ctx: ProjectContext }> {
  const tp = await startTestPlatform({ functions });
  platforms.push(tp);
  return { tp, ctx: await tp.platform.defaultProject() };
}

const deployTemplate = (tp: TestPlatform, ref: string) =>
  deploy(tp, ref, 'hello', template, { verify_jwt: false, import_map_path: `${FN_DIR}/deno.json` });

describe('the CLI function template without the network', { timeout: 180_000 }, () => {
  it('is the CLI 3 template, importing npm:@supabase/server through deno.json', () => {
    expect(template[`${FN_DIR}/index.ts`]).toContain('import { withSupabase } from "@supabase/server"');
    expect(JSON.parse(template[`${FN_DIR}/deno.json`] as string).imports['@supabase/server']).toBe(
      'npm:@supabase/server@^1',
    );
    expect(
      existsSync(join(offline.denoSeedDir as string, 'npm')),
      'no seed: run `node scripts/build-if-needed.mjs` where the npm registry is reachable',
    ).toBe(true);
  });

  it('deploys (201) on a fresh data folder and answers 200 with the publishable (anon) key', async () => {
    const { tp, ctx } = await platform(offline);
    const denoDir = join(tp.dataDir, 'functions', 'deno-dir');
    expect(existsSync(join(denoDir, 'npm'))).toBe(false);
    const r = await deployTemplate(tp, ctx.ref);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(existsSync(join(denoDir, 'npm', 'registry.npmjs.org', '@supabase', 'server'))).toBe(true);
    const res = await invokeFunction(tp, ctx.ref, 'hello', {
      method: 'POST',
      headers: { apikey: ctx.anonKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Functions' }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toEqual({ message: 'Hello Functions!' });

    // Control: the registry really is out of reach for this platform's Deno.
    const other = await deploy(tp, ctx.ref, 'not-seeded', {
      'supabase/functions/not-seeded/index.ts':
        'import leftPad from "npm:left-pad@1.3.0";\nDeno.serve(() => new Response(leftPad("x", 3)));\n',
    });
    expect(other.status, JSON.stringify(other.body)).toBe(400);
    expect(other.body.message).toContain('npm:left-pad@1.3.0');
  });

  it('without the seed (the code before it) the same deploy fails with 400 naming the import', async () => {
    const { tp, ctx } = await platform({ ...offline, denoSeedDir: undefined });
    const r = await deployTemplate(tp, ctx.ref);
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.message).toContain('npm:@supabase/server@^1');
  });
});
